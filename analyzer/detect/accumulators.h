// SPDX-License-Identifier: Apache-2.0
// Accumulators: state that grows steadily per iteration and is not returned; their ranking.
#pragma once

#include <string>
#include <vector>

#include "report/report.h"

namespace cuclimb::analysis {

// Decides whether a candidate series (with its trend already computed) is an accumulator:
//  - the trend was tested, is rising (Mann–Kendall p < alpha, Theil–Sen slope > 0),
//  - the growth has not stopped (detect/trend.h GrowthStopped),
//  - it is steady: the series steps up in at least 3 iterations of the tested window, and
//  - it is material: the fitted growth over the window is ≥ 2 units (handles, samples), and
//    for rates (host_function) also ≥ min_climb_pct of the first level; for pool_reserved
//    ≥ 1 MiB.
// *why gets a sentence either way.
bool IsAccumulator(const std::string& kind, const Series& values, const Trend& trend,
                   const Thresholds& thresholds, std::string* why);

// Orders accumulators: first those that explain a climbing range (larger share first, in
// tenths), then by a prior on the kind (allocator state before handle leaks, as in
// cubecl-pool-model.md §7), then by significance (|Mann–Kendall Z|), then by relative growth,
// then by id. Sets `score` and `rank`
// (1-based). score = 100·[explains any] + 10·max share + min(|Z|, 9.99), for display only.
void RankAccumulators(std::vector<Accumulator>* accumulators);

}  // namespace cuclimb::analysis
