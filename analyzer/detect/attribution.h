// SPDX-License-Identifier: Apache-2.0
// Does an accumulator explain a climbing range, is it the likely cause, or do the two merely
// rise together? (docs/report-schema.md, "Attribution".)
//
// Over the iterations after both warm-ups, with R the range's time and C the candidate, both
// clipped (stats::ClipOutliers: a GC pause, a checkpoint or an evaluation every N iterations
// cannot carry a correlation):
//  - share = b × ΔC / ΔR, b the least-squares slope of R on C and Δ the robust first → last
//    change of each (medians of the first and last tenth), clamped to [0, 1];
//  - r, the correlation of R and C on means of bins of 8 iterations (periodic patterns average
//    out); r_index, of C and the index; partial_r / partial_p, of R and C given the index
//    (Fisher z), per iteration.
// Verdicts, strongest first:
//  1. "unrelated" when R does not move with C (r < 0.3) or too few iterations remain.
//  2. "correlated_only" when C accounts for less than min_share of R's growth.
//  3. "explains", ground "shape": R follows C's own ups and downs beyond the common trend
//     (partial r > 0, partial p < alpha).
//  4. "correlated_only" when C's shape would have shown in R (separation ≥ min_separation: C's
//     deviations from a straight line, scaled into R, stand out of R's noise) and did not.
//  5. Otherwise both are (nearly) straight lines in the index, which no statistic can separate.
//     The evidence that can:
//     - mechanism: the range's extra time sits in calls of C's API family ("calls": at least a
//       quarter of R's growth), or in host code next to them ("host": at least half of R's
//       growth is host-side — host time and CUDA calls — and R makes calls of C's family);
//       growth carried by synchronization wait or GPU time is not caused by host-side state;
//     - onset: C's growth and R's climb start in the same iteration (within 5 % of the window,
//       at least 3), which counts when one of them starts mid-run (beyond a tenth of the window);
//       starts that disagree there rule C out;
//     - unique: C is the only state (kinds that are state: not pool reserve, not host samples)
//       that rises with R and could account for its growth; host functions compete among
//       themselves;
//     - dose: ranks whose C grows at different rates climb in proportion (set across ranks).
//     "explains" with a mechanism and an aligned mid-run onset or a dose; "likely_cause" with a
//     mechanism and uniqueness, or a mechanism in C's own calls; otherwise "correlated_only".
#pragma once

#include <vector>

#include "report/report.h"

namespace cuclimb::analysis {

// The statistics of one (range, candidate) pair and its verdict as far as it can be decided
// alone; straight-line pairs are left to GradeRange (verdict "" until then).
Explanation Measure(const RangeReport& range, const Accumulator& candidate,
                    const Thresholds& thresholds);

// Completes the verdicts of one range's explanations (explanations[i] is for candidates[i]):
// uniqueness, then the straight-line grades.
void GradeRange(const RangeReport& range, const std::vector<const Accumulator*>& candidates,
                std::vector<Explanation>* explanations);

// Measure and grade one candidate as if it were the only one (tests).
Explanation Explain(const RangeReport& range, const Accumulator& candidate,
                    const Thresholds& thresholds);

// Fraction of a range's growth (decomposition deltas) that is host-side: (Δhost + Δapi) / Δwall,
// clamped to [0, 1]; 0 when the wall time does not grow.
double HostSideShare(const Decomposition& d);

// Whether the range's host code and its CUDA calls grew by the same proportion (within 2x, the
// calls carrying at least a tenth of its time): the signature of a machine that runs slower, not
// of state that costs host time next to some calls.
bool ScalesEvenly(const Decomposition& d);

// Whether the range makes calls through which the candidate's state can cost it time.
bool HasPath(const std::string& kind, const Decomposition& d);

}  // namespace cuclimb::analysis
