// SPDX-License-Identifier: Apache-2.0
// Helpers for end-to-end analyzer tests over simulated traces.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/analyze.h"
#include "report/text_report.h"
#include "training_sim.h"

namespace cuclimb::testing {

inline analysis::Report AnalyzeSim(const SimOptions& o, const analysis::AnalyzeOptions& ao = {},
                                   std::string* bytes_out = nullptr) {
  const std::string bytes = SimulateBinary(o);
  auto report = analysis::AnalyzeBuffers({bytes}, {"sim.trace"}, ao);
  EXPECT_TRUE(report.ok()) << report.status();
  if (bytes_out != nullptr)
    *bytes_out = bytes;
  return report.ok() ? *std::move(report) : analysis::Report{};
}

inline const analysis::Accumulator* FindKind(const analysis::Report& r, const std::string& kind) {
  for (const analysis::Accumulator& a : r.accumulators) {
    if (a.kind == kind)
      return &a;
  }
  return nullptr;
}

inline const analysis::RangeReport* FindRange(const analysis::Report& r, const std::string& name) {
  for (const analysis::RangeReport& x : r.ranges) {
    if (x.name == name)
      return &x;
  }
  return nullptr;
}

inline const analysis::StateSeries* FindState(const analysis::RankReport& r,
                                              const std::string& metric,
                                              const std::string& dimension,
                                              const std::string& key) {
  for (const analysis::StateSeries& s : r.state) {
    if (s.metric == metric && s.dimension == dimension && s.key == key)
      return &s;
  }
  return nullptr;
}

// Whether the accumulator is named as the cause of some climbing range: it explains it, or it is
// its likely cause (a straight line in the index with its mechanism).
inline bool Blamed(const analysis::Accumulator& a) {
  return !a.explains.empty() || !a.likely_cause_of.empty();
}

// The accumulator id a range's climb is put down to, or "" when its cause is something else.
inline std::string CauseOf(const analysis::RangeReport* r) {
  return r != nullptr && r->cause.kind == "accumulator" ? r->cause.accumulator : "";
}

// The text report, for failure messages.
inline std::string Text(const analysis::Report& r) {
  return "\n" + analysis::ToText(r);
}

}  // namespace cuclimb::testing
