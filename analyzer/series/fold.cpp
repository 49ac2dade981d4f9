// SPDX-License-Identifier: Apache-2.0
// Folding slot arrays into per-iteration Series.
#include "series/fold.h"

#include <algorithm>
#include <limits>

namespace cuclimb::analysis {

Folder::Folder(int64_t count, std::function<int64_t(uint32_t)> iteration_of_slot, size_t slots)
    : count_(count), of_slot_(std::move(iteration_of_slot)) {
  map_.resize(slots);
  for (size_t s = 0; s < slots; ++s) map_[s] = of_slot_(static_cast<uint32_t>(s));
}

Series Folder::Sum(const SlotVec& v, double* pro, double* epi) const {
  Series out(static_cast<size_t>(count_), 0.0);
  double p = 0, e = 0;
  // Slot order, as a dense array's; the slots ForEach skips are zeros, and adding +0 changes no
  // sum here (none is −0: every sum starts at +0).
  v.ForEach([&](uint32_t s, double x) {
    const int64_t i = IterationOf(s);
    if (i >= 0)
      out[static_cast<size_t>(i)] += x;
    else if (i == -1)
      p += x;
    else
      e += x;
  });
  if (pro != nullptr)
    *pro = p;
  if (epi != nullptr)
    *epi = e;
  return out;
}

Series Folder::Max(const SlotVec& v) const {
  Series out(static_cast<size_t>(count_), 0.0);
  v.ForEach([&](uint32_t s, double x) {  // skipped slots are zeros: no maximum changes
    const int64_t i = IterationOf(s);
    if (i >= 0)
      out[static_cast<size_t>(i)] = std::max(out[static_cast<size_t>(i)], x);
  });
  return out;
}

Series Folder::Level(const SlotVec& adds, const SlotVec& subs) const {
  double pa = 0, ps = 0;
  Series a = Sum(adds, &pa), s = Sum(subs, &ps);
  double level = pa - ps;
  for (size_t i = 0; i < a.size(); ++i) {
    level += a[i] - s[i];
    a[i] = level;
  }
  return a;
}

Series Folder::Gauge(const GaugeSeries& g) const {
  Series out(static_cast<size_t>(count_), 0.0);
  std::vector<int64_t> ts(static_cast<size_t>(count_), std::numeric_limits<int64_t>::min());
  double prologue = 0;
  bool have_prologue = false;
  int64_t prologue_ts = std::numeric_limits<int64_t>::min();
  for (size_t s = 0; s < g.ts.size(); ++s) {
    if (g.ts[s] == std::numeric_limits<int64_t>::min())
      continue;
    const int64_t i = IterationOf(static_cast<uint32_t>(s));
    if (i >= 0 && g.ts[s] >= ts[static_cast<size_t>(i)]) {
      ts[static_cast<size_t>(i)] = g.ts[s];
      out[static_cast<size_t>(i)] = g.value[s];
    } else if (i == -1 && g.ts[s] >= prologue_ts) {
      prologue_ts = g.ts[s];
      prologue = g.value[s];
      have_prologue = true;
    }
  }
  bool have = have_prologue;
  double last = prologue;
  size_t first_sample = out.size();
  for (size_t i = 0; i < out.size(); ++i) {
    if (ts[i] != std::numeric_limits<int64_t>::min()) {
      if (!have)
        first_sample = i;
      have = true;
      last = out[i];
    } else if (have) {
      out[i] = last;
    }
  }
  // Back-fill from the first sample taken in an iteration. A gauge sampled only after the last
  // iteration (the epilogue) has no such sample and stays 0 ("not sampled"), like a gauge that
  // was never sampled at all.
  if (!have_prologue && first_sample < out.size()) {
    for (size_t i = 0; i < first_sample; ++i) out[i] = out[first_sample];
  }
  return out;
}

Series Remainder(const Series& a, const Series& b, const Series& c) {
  Series out(a.size(), 0.0);
  for (size_t i = 0; i < a.size(); ++i) {
    out[i] = std::max(0.0, a[i] - (i < b.size() ? b[i] : 0) - (i < c.size() ? c[i] : 0));
  }
  return out;
}

Series Scale(Series s, double factor) {
  for (double& v : s) v *= factor;
  return s;
}

}  // namespace cuclimb::analysis
