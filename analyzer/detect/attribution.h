// SPDX-License-Identifier: Apache-2.0
// Does an accumulator explain a climbing range, or do the two merely rise together?
//
// Over the iterations after both warm-ups, with R the range's time, C the candidate and t the
// iteration index:
//  - share = b × ΔC / ΔR, b the least-squares slope of R on C and Δ the robust first → last
//    change of each over that window, clamped to [0, 1]: the part of R's growth that C's growth
//    accounts for if the relation is causal.
//  - Two rising lines always correlate, so correlation alone is never enough. What can tell a
//    cause from a coincidence is C's own shape: its deviations from a straight line in t (steps,
//    bursts, bends). If C drives R, R shows them too, scaled by b_t = slope(R~t) / slope(C~t).
//    separation = b_t × sd(C − line) / sd(R − line) says how visible they would be in R.
//    1. If the partial correlation of R and C given t is positive and significant (p < alpha)
//       and share ≥ min_share: "explains" (R follows C's shape).
//    2. Otherwise, if separation ≥ min_separation, the test had the power to see C's shape in R
//       and did not: "correlated_only".
//    3. Otherwise C is (nearly) a straight line in t, as a fixed leak per iteration is, and no
//       statistic can tell it from time. Mechanism decides: "explains" if share ≥ min_share,
//       at least half of R's growth is host-side (host time between CUDA calls plus time
//       inside CUDA calls, where allocator and bookkeeping costs land; growth carried by
//       synchronization wait or GPU kernel time is not something host-side state causes), and
//       R has a path to C: it makes calls of C's family (allocation and free calls for memory
//       kinds and pools, event calls for events, stream calls or launches for streams, launches
//       for modules, graph calls for graphs; NVTX regions and host functions always qualify).
//       Otherwise "correlated_only".
//  - "unrelated" when R does not move with C at all (r < 0.3).
#pragma once

#include "report/report.h"

namespace cuclimb::analysis {

Explanation Explain(const RangeReport& range, const Accumulator& candidate,
                    const Thresholds& thresholds);

// Fraction of a range's growth (decomposition deltas) that is host-side: (Δhost + Δapi) / Δwall,
// clamped to [0, 1]; 0 when the wall time does not grow.
double HostSideShare(const Decomposition& d);

// Whether the range makes calls through which the candidate's state can cost it time (step 3).
bool HasPath(const std::string& kind, const Decomposition& d);

}  // namespace cuclimb::analysis
