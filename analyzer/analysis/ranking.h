// SPDX-License-Identifier: Apache-2.0
// The order of accumulators in a report (docs/report-schema.md, "Accumulators", Order).
#pragma once

#include <vector>

#include "report/report.h"

namespace cuclimb::analysis {

// Orders accumulators: first by their strongest verdict for any climbing range (explains, then
// likely_cause, then none), then by the largest share of those verdicts (in tenths: straight-
// line shares differ by noise), then by the kind's prior (the order of kAccumulatorKinds:
// allocator state before handle leaks), then by significance (|Mann–Kendall Z|), then by
// relative growth, then by id. Sets `score` (for display: 100·[explains] + 50·[likely cause] +
// 10·that share + min(|Z|, 9.99)) and `rank` (1-based).
void RankAccumulators(std::vector<Accumulator>* accumulators);

}  // namespace cuclimb::analysis
