// SPDX-License-Identifier: Apache-2.0
// The recording core of libcuclimb.so: per-thread rings, interning and the background writer.
//
// Contract for capture code (CUPTI callbacks, NVTX hooks, samplers):
//   - Record(), InternString() and InternStack() are the hot path: wait-free or lock-free, no
//     allocation through malloc, never throw, callable from any thread, including from inside
//     signal-unsafe CUPTI callbacks. No system call but two rare, bounded ones: a futex wake
//     when a ring passes half full while the writer sleeps, and sched_yield while waiting for
//     a preempted thread that is interning the same name. They return false / kNoString when
//     recording is off or space ran out, and count what they lose.
//   - Everything else (Start, Flush, Stop, the tick hook) is the cold path.
// The writer thread drains every thread's ring, writes string/stack definitions before the
// events that use them, compresses chunks with zstd and appends them to the trace file, so a
// process killed at any moment leaves a file readable up to its last complete chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "interposer/format/chunk_encoder.h"
#include "interposer/format/trace_format.h"

namespace cuclimb::interposer {

struct RecorderOptions {
  const char* path = nullptr;               // trace file; created O_EXCL|O_NOFOLLOW, mode 0600
  size_t ring_kib = 4096;                   // per-thread ring capacity
  int flush_interval_ms = 100;              // writer wake-up period (also woken at half-full rings)
  size_t chunk_kib = 512;                   // raw bytes per chunk before compression
  int zstd_level = format::kAutoZstdLevel;  // per chunk: harder on small ones
  format::ClockId clock = format::ClockId::kMonotonic;
  int64_t base_clock_ns = 0;         // clock reading that ts 0 stands for (0: now)
  const char* producer = "cuclimb";  // written into the file header
};

// Starts recording: opens the file and starts the writer thread. Returns false (and logs why)
// when the file cannot be created; recording then stays off. Call once.
bool StartRecorder(const RecorderOptions& options) noexcept;

// True between a successful StartRecorder() and StopRecorder(), and while not paused.
bool RecorderActive() noexcept;

// Pauses or resumes recording (events are dropped silently, not counted, while paused); writes
// a kRecording event so the analyzer knows.
void SetRecording(bool on) noexcept;

// Nanoseconds on the trace clock since the base (the `ts` of events).
int64_t TraceNow() noexcept;

// Hot path: appends ev to the calling thread's ring. Returns false when the ring is full
// (counted as a drop) or recording is off.
bool Record(const format::Event& ev) noexcept;

// Hot path, lock-free: returns the id of s (at most kMaxStringBytes are kept), interning it on
// first sight. Returns kNoString when the table is full (counted).
uint32_t InternString(std::string_view s) noexcept;

// Hot path, lock-free: the id of the stack made of frames (PcFrame/StringFrame words,
// innermost first), at most kMaxStackFrames kept. kNoStack when the table is full.
uint32_t InternStack(const uint64_t* frames, size_t count) noexcept;

// The calling thread's OS thread id (cached).
uint32_t CurrentTid() noexcept;

// Adds time spent inside cuclimb on the calling thread (reported as kOverhead events).
void AddSelfTime(int64_t ns) noexcept;

// Called on the writer thread at every wake-up, before the rings are drained: the place for
// CUDA/CUPTI work that must not run on application threads (activity flush, pool sampling).
// `now_ns` is TraceNow(). Set before StartRecorder(); nullptr to clear.
using TickHook = void (*)(void* context, int64_t now_ns);
void SetTickHook(TickHook hook, void* context) noexcept;

// Drains all rings and writes a chunk now (cold path; safe from atexit handlers).
void FlushRecorder() noexcept;

// Flushes, writes the trailer (totals, drops, `status` if not null) and closes the file.
// Idempotent. Afterwards Record() returns false.
void StopRecorder(const char* status) noexcept;

// For a forked child: forget the parent's writer and file without touching them (the writer
// thread does not exist in the child, and its locks may be held). Recording stays off.
void AbandonRecorderInChild() noexcept;

// Counters for tests and the trailer.
struct RecorderStats {
  uint64_t events_recorded;  // appended to rings
  uint64_t events_written;   // encoded into chunks
  uint64_t events_dropped;   // ring full + intern table full
  uint64_t chunks_written;
  uint64_t bytes_written;
};
RecorderStats GetRecorderStats() noexcept;

}  // namespace cuclimb::interposer
