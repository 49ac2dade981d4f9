// SPDX-License-Identifier: Apache-2.0
// The detection pipeline (internal to analysis/): candidates of every family → trend and
// acceptance → onset and rate → evidence → attribution to climbing ranges → ranking. Sets the
// report's state series, leaks and accumulators and each range's explained_by.
#pragma once

#include "analysis/assemble.h"
#include "detect/attribution.h"
#include "report/report.h"

namespace cuclimb::analysis::internal {

void DetectAccumulators(Context& ctx, RankReport* report);

// What attribution needs of a range and of an accepted accumulator.
RangeView ViewOf(const RangeReport& range);
CandidateView ViewOf(const Accumulator& accumulator);

}  // namespace cuclimb::analysis::internal
