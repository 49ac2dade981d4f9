// SPDX-License-Identifier: Apache-2.0
// How a range climbs on each rank of a job, and the pattern across ranks (internal to
// analysis/; docs/report-schema.md, "Several traces"): alike on every rank, on one or some of
// them, or on the others because of one, the straggler.
//
// Why the split into own work and waiting: ranks of a data-parallel job meet in collectives every
// iteration. When one rank's own work grows, its collective kernels arrive later; the other
// ranks' collective kernels, launched on time, spin on the GPU until it arrives, and their hosts
// wait as long where they read the result (a stream synchronization or a blocking copy). So every
// rank's step time climbs alike, and only the split tells the cause from the echo: on the
// straggler the growth is its own (host code, CUDA calls, its compute kernels), on the others it
// is time inside collectives.
#pragma once

#include <string>
#include <vector>

#include "detect/trend.h"
#include "report/report.h"

namespace cuclimb::analysis::internal {

// GPU time per iteration (ms) of one rank's kernels, collectives apart, from the kernel table,
// and which iterations had their kernels timed: with sampled kernel timing (CUCLIMB_KERNELS=
// sampled) only some are, and growth is measured on those alone.
struct RankGpuTime {
  Series collective_ms, compute_ms;
  std::vector<bool> timed;         // by iteration: some kernel of the iteration was timed
  bool collectives = false;        // the rank launches collective kernels
  bool collectives_timed = false;  // ... and some were timed
};
RankGpuTime GpuTimeOf(const RankReport& rank);

// The range `name` on every rank (`ranks`, `job_ranks` and `gpu` by trace index): each rank's
// growth split into own work and waiting, its role, and the pattern. `options` are the merge's
// trend options; each rank's own warm-up cut of the range is kept.
RangeByRank ClimbsByRank(const std::string& name, const std::vector<RankReport>& ranks,
                         const std::vector<int>& job_ranks, const std::vector<RankGpuTime>& gpu,
                         const TrendOptions& options);

// Whether accumulator `a` of `rank` explains (or is the likely cause of) the rank's climb of
// `range`, which grows there by `growth_ms_per_iter`, or of one of its climbing ranges that
// carries at least half of that growth.
bool ExplainsClimb(const RankReport& rank, const Accumulator& a, const std::string& range,
                   double growth_ms_per_iter);

// "rank 1", "ranks 0, 2, 3", "ranks 0, 2–7".
std::string RankList(std::vector<int> ranks);

}  // namespace cuclimb::analysis::internal
