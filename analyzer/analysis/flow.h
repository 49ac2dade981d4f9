// SPDX-License-Identifier: Apache-2.0
// Level series from per-slot inflows and outflows (internal to analysis/).
#pragma once

#include "report/report.h"
#include "series/aggregates.h"
#include "series/fold.h"

namespace cuclimb::analysis::internal {

// Inflow and outflow of a level, per iteration, plus the prologue's.
struct Flow {
  double pro_in = 0, pro_out = 0;
  Series in, out;

  void Add(const Flow& o) {
    pro_in += o.pro_in;
    pro_out += o.pro_out;
    if (in.size() < o.in.size())
      in.resize(o.in.size(), 0.0), out.resize(o.in.size(), 0.0);
    for (size_t i = 0; i < o.in.size(); ++i) {
      in[i] += o.in[i];
      out[i] += o.out[i];
    }
  }
  Series Level(size_t n) const {
    Series s(n, 0.0);
    double level = pro_in - pro_out;
    for (size_t i = 0; i < n; ++i) {
      level += (i < in.size() ? in[i] : 0) - (i < out.size() ? out[i] : 0);
      s[i] = level;
    }
    return s;
  }
};

inline Flow FoldFlow(const Folder& f, const SlotVec& in, const SlotVec& out) {
  Flow fl;
  fl.in = f.Sum(in, &fl.pro_in);
  fl.out = f.Sum(out, &fl.pro_out);
  return fl;
}

// a + b elementwise (b may be longer).
inline Series Sum(Series a, const Series& b) {
  if (a.size() < b.size())
    a.resize(b.size(), 0.0);
  for (size_t i = 0; i < b.size(); ++i) a[i] += b[i];
  return a;
}

}  // namespace cuclimb::analysis::internal
