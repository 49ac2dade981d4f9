// SPDX-License-Identifier: Apache-2.0
// Host stack sampling of the threads that call CUDA (CUCLIMB_SAMPLE_HZ), so that host time that
// climbs can be pinned on functions: many accumulators live in framework host code.
//
// A sampler thread (all signals blocked) sends SIGPROF with tgkill to every registered thread at
// the configured rate; the handler walks frame pointers from the interrupted context (async-
// signal-safe: reads only the thread's own stack) and records a `sample` event. The handler is
// installed only if SIGPROF has no handler yet (another profiler's is left alone and sampling is
// off, with a warning), and it stays installed after sampling stops: a late SIGPROF must not
// kill the program. SA_RESTART is set; like every SIGPROF profiler, sampling can still shorten
// sleeps in the program (nanosleep returns EINTR).
#pragma once

#include <cstdint>

namespace cuclimb::interposer {

// Installs the handler and starts the sampler thread (cold). False (with a warning) if not.
bool StartHostSampler(uint32_t hz) noexcept;

// Registers the calling thread for sampling (its first recorded CUDA call; cold per thread).
void RegisterSampledThread() noexcept;

// Stops the sampler thread (exit path); the handler stays, inert.
void StopHostSampler() noexcept;

}  // namespace cuclimb::interposer
