// SPDX-License-Identifier: Apache-2.0
// Host call stacks for allocations, handles and host samples.
//
// Stacks begin at the caller: the frames of the CUDA runtime code (cuda_code.h) a call passes
// through before it reaches our callback are dropped, so the first frame is the application's.
//
// Two walkers. The frame-pointer walk is cheap and async-signal-safe: it reads only inside the
// calling thread's own stack, checks alignment and strictly increasing frame addresses, and so
// cannot fault; it stops at the first function built without frame pointers. libcuda, libcupti
// and static cudart have none (and may keep other values in the frame-pointer register), so when
// our caller is CUDA runtime code, `fp` first unwinds by CFI (_Unwind_Backtrace over .eh_frame)
// through that code, up to the first application frame that has a frame record, and walks frame
// pointers from there; it crosses at most kMaxBridgeFrames application frames without one. The
// full unwind (`unwind`) uses CFI all the way. CFI may take the loader lock on old glibc (2.35+
// finds objects lock-free): never from a signal handler, where only frame pointers are walked.
// Frames are return addresses (PcFrame), innermost first, with libcuclimb.so's own frames
// removed; symbolization happens offline from the trace's mapping events.
#pragma once

#include <cstddef>
#include <cstdint>

#include "interposer/config.h"

namespace cuclimb::interposer {

// Bounds of the calling thread's stack, cached in TLS at its first use (cold: the first call
// on a thread may read /proc/self/maps through pthread_getattr_np). Returns false if unknown.
bool ThreadStackBounds(uintptr_t* low, uintptr_t* high) noexcept;

// Records where libcuclimb.so's own code lies, so its frames are skipped (cold; at init).
void SetOwnCodeRange(uintptr_t begin, uintptr_t end) noexcept;

// Application frames without a frame record that `fp` crosses by CFI before it gives up.
inline constexpr size_t kMaxBridgeFrames = 8;

// Frame-pointer walk from frame pointer fp within [low, high); writes at most max frames.
size_t WalkFramePointers(uintptr_t fp, uintptr_t low, uintptr_t high, uint64_t* frames,
                         size_t max) noexcept;

// Writes the calling thread's stack with mode (at most depth and kMaxStackFrames frames) into
// frames, beginning at the first frame outside CUDA runtime code; returns how many (0 when off).
size_t CollectStack(StackMode mode, uint32_t depth, uint64_t* frames) noexcept;

// Captures the calling thread's stack with mode (kOff: returns 0) and interns it; returns the
// stack id (format::kNoStack when off, empty or the table is full). python: merges the thread's
// Python frames in (python_frames.h).
uint32_t CaptureStack(StackMode mode, uint32_t depth, bool python = false) noexcept;

// Signal-handler variant of CollectStack: frame-pointer walk from the interrupted context (pc,
// stack pointer, frame pointer), the interrupted pc first unless it is CUDA runtime code, like
// the frames above it up to the first application frame. Only for threads whose bounds are
// already cached (ThreadStackBounds ran on them).
size_t CollectStackFromContext(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint32_t depth,
                               uint64_t* frames) noexcept;

// CollectStackFromContext, interned (python: with the thread's Python frames merged in, unless it
// was interrupted inside the interpreter). Returns the stack id.
uint32_t CaptureStackFromContext(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint32_t depth,
                                 bool python = false) noexcept;

}  // namespace cuclimb::interposer
