// SPDX-License-Identifier: Apache-2.0
// Host call stacks for allocations, handles and host samples.
//
// Two walkers. The frame-pointer walk is cheap (well under 1 us for 32 frames) and
// async-signal-safe: it reads only inside the calling thread's own stack, checks alignment and
// strictly increasing frame addresses, and so cannot fault; it stops at the first function built
// without frame pointers (often inside libcuda, so allocation stacks may be short). The full
// unwind (_Unwind_Backtrace over .eh_frame) crosses such code but costs ~2-3 us per stack and may
// take the loader lock: never from a signal handler. Frames are return addresses (PcFrame),
// innermost first, with libcuclimb.so's own frames removed; symbolization happens offline from
// the trace's mapping events.
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

// Frame-pointer walk from frame pointer fp within [low, high); writes at most max frames.
size_t WalkFramePointers(uintptr_t fp, uintptr_t low, uintptr_t high, uint64_t* frames,
                         size_t max) noexcept;

// Captures the calling thread's stack with mode (kOff: returns 0) and interns it; returns the
// stack id (format::kNoStack when off, empty or the table is full).
uint32_t CaptureStack(StackMode mode, uint32_t depth) noexcept;

// Signal-handler variant: frame-pointer walk from the interrupted context (pc, stack pointer,
// frame pointer), with the interrupted pc first. Only for threads whose bounds are already
// cached (ThreadStackBounds ran on them). Returns the interned stack id.
uint32_t CaptureStackFromContext(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint32_t depth) noexcept;

}  // namespace cuclimb::interposer
