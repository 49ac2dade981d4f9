// SPDX-License-Identifier: Apache-2.0
// CUPTI activity collection: pre-zeroed buffers handed to CUPTI, the queue of completed buffers,
// flushing, and decoding into trace events (through activity.h).
//
// Threads: CUPTI requests buffers on whatever thread needs one (an application thread, its
// worker, or ours inside a flush); it completes them on its worker thread or synchronously
// inside cuptiActivityFlushAll. Both callbacks only take a buffer from a free list or push one
// onto the completed queue (a short spin lock, never held across a CUPTI call). Decoding runs on
// the writer thread, or on the thread that flushes at exit.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuclimb::interposer {

struct ActivityOptions {
  bool memory = true;        // MEMORY2 + MEMORY_POOL
  bool kernels_all = false;  // CONCURRENT_KERNEL on for the whole run
  bool parse = true;         // decode records (false for an unvalidated CUPTI minor)
};

// Registers the buffer callbacks and enables the kinds (cold, once, from InitializeInjection).
// Returns false (and logs) when CUPTI refused.
bool StartActivity(const ActivityOptions& options) noexcept;

// Switches CONCURRENT_KERNEL on or off (writer thread: sampled kernel timing; pause/resume).
// Never enables KERNEL, which serializes every kernel.
void SetKernelActivity(bool on) noexcept;
bool KernelActivityOn() noexcept;
// Switches MEMORY2/MEMORY_POOL off and back on (pause/resume).
void SetMemoryActivity(bool on) noexcept;

// cuptiActivityFlushAll: complete buffers only, or every buffer (forced: at exit, at context
// teardown).
void FlushActivity(bool forced) noexcept;

// Decodes completed buffers into events, recording at most max_events of them (the caller's ring
// must not overflow); returns how many were recorded. A partly decoded buffer resumes next time.
size_t DrainActivity(size_t max_events) noexcept;

// Records the drop counters (CUPTI dropped records, buffers refused) as kDrops events if they
// changed since the last call.
void RecordActivityDrops() noexcept;

}  // namespace cuclimb::interposer
