// SPDX-License-Identifier: Apache-2.0
// Generated traces for round-trip tests, fuzzer seeds and benchmarks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "trace_builder.h"

namespace cuclimb::testing {

// Events of every type with every field filled at random (valid enum values and ids), in
// increasing time order.
TraceBuilder RandomTrace(uint64_t seed, size_t events);

// A training loop as the recorder sees it: per iteration an NVTX range, launches (with GPU kernel
// records for every `kernel_every`-th iteration), stream-ordered allocations and frees from a few
// call sites, API calls and a synchronization. About 5 × launches_per_iter events per iteration.
struct TrainingLoopShape {
  int iterations = 100;
  int launches_per_iter = 40;
  int allocs_per_iter = 12;
  int kernel_every = 1;
  uint64_t seed = 1;
};
TraceBuilder TrainingLoopTrace(const TrainingLoopShape& shape);

}  // namespace cuclimb::testing
