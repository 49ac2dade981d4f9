// SPDX-License-Identifier: Apache-2.0
// Process-wide state shared by the capture paths (CUPTI callbacks, NVTX hooks, signal handler)
// and the lifecycle. Plain globals in static storage: constant-initialized, never destroyed.
//
// Written on cold paths (init, pause/resume, fork child); read on the hot path with relaxed
// loads. g_config is written once, before g_capture_on is first set, and never again.
#pragma once

#include <atomic>
#include <cstdint>

#include "interposer/config.h"
#include "interposer/tables.h"

namespace cuclimb::interposer {

// Operations the CUDA-free core needs from the shared module (CUPTI and driver calls). Null in
// unit tests; every use checks.
struct Hooks {
  // CUPTI id getter for a context's device (cuptiGetDeviceId); -1 when unknown.
  int32_t (*device_of_context)(uint64_t context) = nullptr;
  // A context is about to be destroyed: force-flush its activity records.
  void (*context_destroying)(uint64_t context) = nullptr;
  // The calling thread made its first recorded CUDA call (host sampling registers it).
  void (*thread_first_seen)() = nullptr;
};

extern Config g_config;
extern Hooks g_hooks;

// Hot-path gate: true while recording (started, CUPTI or NVTX attached, not paused, not a forked
// child). Checked first by every callback.
extern std::atomic<bool> g_capture_on;
// Set in a forked child: nothing of the parent's recording may be touched.
extern std::atomic<bool> g_in_child;
// CUCLIMB_DEBUG_BARE_CALLBACKS=1 (benchmarks only): callbacks stay enabled in CUPTI but return at
// once, which measures CUPTI's own cost of a callback. Capture tracking is off too: never with a
// program that captures graphs.
extern std::atomic<bool> g_bare_callbacks;

// Iteration boundaries seen (NVTX ranges named in CUCLIMB_ITERATION, cuclimb_mark_iteration):
// the count, and the last iteration number (the range's integer payload when it has one).
extern std::atomic<uint64_t> g_iteration_marks;
extern std::atomic<uint64_t> g_iteration_number;
// A stream or context synchronization completed since the writer last looked (pools give memory
// back there).
extern std::atomic<bool> g_sync_seen;

extern ContextTable g_contexts;
extern FunctionNames g_functions;
extern PoolSet g_pools;

// Called by the NVTX hooks and the C API at an iteration boundary.
void NoteIterationBoundary(bool has_number, uint64_t number) noexcept;

// Resets every table and counter (tests only).
void ResetStateForTesting() noexcept;

}  // namespace cuclimb::interposer
