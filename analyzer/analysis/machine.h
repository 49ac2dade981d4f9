// SPDX-License-Identifier: Apache-2.0
// Did the machine change speed under the program? (docs/report-schema.md, "Causes".)
//
// A program that does the same work every iteration still gets slower or faster when the machine
// does (clocks, a neighbour on a shared GPU or CPU, thermal limits). Then everything it does
// scales together: the GPU time per launch of every kernel, the host time per call of every
// API, the host code between calls. The program's own growth moves a few of them (the allocator
// calls of a leak, one kernel that slows, host code that does more). So, over the iteration's
// tested window, each component's change is measured first tenth → last tenth:
//  - kernels: mean GPU time per execution, over iterations where the kernel ran (at least 3 such
//    iterations in each tenth);
//  - APIs: host time per call, over iterations with calls (synchronization waits excluded: they
//    follow the GPU, not the host);
//  - host: the iteration range's host time between CUDA calls, per iteration.
// Components move with the iteration when their change has the iteration's sign and at least
// half its size. The machine scales everything together when the iteration changed by
// min_climb_pct or more, no state accumulates, and either the CPU moved (two thirds of the APIs
// compared, at least 2, and the host time) or the GPU did (two thirds of the kernels, at least
// 3). A level shift that reverses is the other signature: the iteration time's bin medians (20
// bins) leave the mean of the first and last bin by min_climb_pct and more for at least 2 bins,
// while the first and last bin agree within half of that.
#pragma once

#include "report/report.h"

namespace cuclimb::analysis::internal {

// `iteration` may be null (no range times the iteration): then nothing is detected.
MachineDrift DetectMachineDrift(const RankReport& report, const RangeReport* iteration,
                                const Thresholds& thresholds);

}  // namespace cuclimb::analysis::internal
