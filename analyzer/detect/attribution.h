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

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "detect/accumulator_kind.h"
#include "detect/thresholds.h"

namespace cuclimb::analysis {

// Graded attribution verdicts, strongest first (detect/attribution.h, report-schema.md).
inline constexpr char kExplains[] = "explains";               // the range follows its shape
inline constexpr char kLikelyCause[] = "likely_cause";        // linear together; other evidence
inline constexpr char kCorrelatedOnly[] = "correlated_only";  // rises with it, not its cause
inline constexpr char kUnrelated[] = "unrelated";             // does not move with it

// How much of a range's growth one candidate explains (detect/attribution.h).
struct Explanation {
  std::string range;
  std::string verdict;   // kExplains | kLikelyCause | kCorrelatedOnly | kUnrelated
  double share = 0;      // robust slope(range ~ candidate) × Δcandidate / Δrange, in [0, 1]
  double r = 0;          // rank (Spearman) correlation of range and candidate
  double r_index = 0;    // rank correlation of candidate with the iteration index
  double partial_r = 0;  // rank correlation of range and candidate given the index
  double partial_p = 1;
  double separation = 0;  // how visible the candidate's own shape would be in the range
  double lag = 0;         // iterations by which the range trails the candidate (best of 0..3)
  // Evidence beyond the statistics, used when both are straight lines in the index:
  bool onset_aligned = false;  // the candidate's growth and the range's climb start together
  bool unique = false;         // the only accepted candidate that rises with this range
  std::string mechanism;       // where the range's extra time sits: "calls" (the candidate's
                               // API family), "host" (host code between calls), "" (elsewhere)
  bool dose = false;           // ranks with different growth rates climb in proportion
  std::vector<std::string> grounds;  // evidence behind the verdict: "shape", "onset",
                                     // "unique", "mechanism", "dose" (in that order)
  std::string reason;                // one sentence
};

// What attribution needs of a climbing range: its time per iteration, where its growth sits.
// Deltas are growth over the range's tested window in ms (Theil–Sen slope × iterations).
struct RangeView {
  std::string name;
  absl::Span<const double> total_ms;
  int64_t warmup = 0;       // the range's warm-up cut
  int64_t climb_start = 0;  // where its climb starts
  double wall_delta = 0, host_delta = 0, api_delta = 0;
  double wall_first = 0, api_first = 0;  // first levels, ms per iteration
  // Relative change of host code and of CUDA calls (only meaningful when parts_tested).
  double host_change_pct = 0, api_change_pct = 0;
  bool parts_tested = false;
  struct Part {
    std::string name;  // an API or synchronization API
    double delta_ms = 0;
  };
  std::vector<Part> calls;  // time inside each API and synchronization API
};

// What attribution needs of a candidate accumulator.
struct CandidateView {
  AccumulatorKind kind = AccumulatorKind::kDeviceAllocations;
  absl::Span<const double> values;
  int64_t warmup = 0;        // the candidate's warm-up cut
  int64_t growth_start = 0;  // its onset
};

// The statistics of one (range, candidate) pair and its verdict as far as it can be decided
// alone; straight-line pairs are left to GradeRange (verdict "" until then).
Explanation Measure(const RangeView& range, const CandidateView& candidate,
                    const Thresholds& thresholds);

// Completes the verdicts of one range's explanations (explanations[i] is for candidates[i]):
// uniqueness, then the straight-line grades.
void GradeRange(const RangeView& range, const std::vector<CandidateView>& candidates,
                std::vector<Explanation>* explanations);

// Measure and grade one candidate as if it were the only one.
Explanation Explain(const RangeView& range, const CandidateView& candidate,
                    const Thresholds& thresholds);

// Fraction of a range's growth that is host-side: (Δhost + Δapi) / Δwall, clamped to [0, 1]; 0
// when the wall time does not grow.
double HostSideShare(const RangeView& range);

// Whether the range makes calls through which the candidate's state can cost it time.
bool HasPath(AccumulatorKind kind, const RangeView& range);

// Whether the range's host code and its CUDA calls grew by the same proportion (within 2x, the
// calls carrying at least a tenth of its time): the signature of a machine that runs slower, not
// of state that costs host time next to some calls.
bool ScalesEvenly(const RangeView& range);

}  // namespace cuclimb::analysis
