// SPDX-License-Identifier: Apache-2.0
// Does an accumulator explain a climbing range, or do the two merely rise together?
//
// Over the iterations after both warm-ups, with R the range's time and C the candidate:
//  - share = b × ΔC / ΔR, b the least-squares slope of R on C and Δ the robust first → last
//    change of each over that window, clamped to [0, 1]: the part of R's growth that C's growth
//    accounts for if the relation is causal.
//  - Two rising lines always correlate, so correlation alone is never enough:
//    * When C is not collinear with the iteration index (|r(C, t)| < collinear_r: it grows in
//      steps, bursts or curves), C explains R only if the partial correlation of R and C given
//      t is positive and significant (p < alpha): R follows C's own shape, not just time.
//    * When C is a straight line in t (the common case: a fixed leak per iteration), statistics
//      cannot tell C from time. Then the range's decomposition decides: C explains R only if
//      at least half of R's growth is host-side (host time between CUDA calls plus time inside
//      CUDA calls), where allocator and bookkeeping costs land. Growth carried by
//      synchronization wait or GPU kernel time is something host-side state does not cause.
//  - In both cases share ≥ min_share is required. Otherwise the verdict is "correlated_only"
//    (or "unrelated" when r < 0.3), with the reason.
#pragma once

#include "report/report.h"

namespace cuclimb::analysis {

Explanation Explain(const RangeReport& range, const Accumulator& candidate,
                    const Thresholds& thresholds);

// Fraction of a range's growth (decomposition deltas) that is host-side: (Δhost + Δapi) / Δwall,
// clamped to [0, 1]; 0 when the wall time does not grow.
double HostSideShare(const Decomposition& d);

}  // namespace cuclimb::analysis
