// SPDX-License-Identifier: Apache-2.0
// Stack walkers of stack.h.
#include "interposer/stack.h"

#include <atomic>

#include <pthread.h>
#include <unwind.h>

#include "interposer/format/trace_format.h"
#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

__attribute__((tls_model("initial-exec"))) thread_local uintptr_t t_stack_low = 0;
__attribute__((tls_model("initial-exec"))) thread_local uintptr_t t_stack_high = 0;
__attribute__((tls_model("initial-exec"))) thread_local bool t_stack_known = false;

std::atomic<uintptr_t> g_own_begin{0};
std::atomic<uintptr_t> g_own_end{0};

inline bool IsOwnCode(uintptr_t pc) {
  return pc >= g_own_begin.load(std::memory_order_relaxed) &&
         pc < g_own_end.load(std::memory_order_relaxed);
}

struct UnwindState {
  uint64_t* frames;
  size_t max;
  size_t count;
};

_Unwind_Reason_Code CollectFrame(struct _Unwind_Context* context, void* arg) {
  auto* state = static_cast<UnwindState*>(arg);
  const uintptr_t pc = _Unwind_GetIP(context);
  if (pc == 0)
    return _URC_END_OF_STACK;
  if (IsOwnCode(pc))
    return _URC_NO_REASON;
  if (state->count >= state->max)
    return _URC_END_OF_STACK;
  state->frames[state->count++] = format::PcFrame(pc);
  return _URC_NO_REASON;
}

}  // namespace

bool ThreadStackBounds(uintptr_t* low, uintptr_t* high) noexcept {
  if (!t_stack_known) {
    t_stack_known = true;  // once, even if it fails
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &addr, &size) == 0 && addr != nullptr) {
        t_stack_low = reinterpret_cast<uintptr_t>(addr);
        t_stack_high = t_stack_low + size;
      }
      pthread_attr_destroy(&attr);
    }
  }
  *low = t_stack_low;
  *high = t_stack_high;
  return t_stack_high != 0;
}

void SetOwnCodeRange(uintptr_t begin, uintptr_t end) noexcept {
  g_own_begin.store(begin, std::memory_order_relaxed);
  g_own_end.store(end, std::memory_order_relaxed);
}

size_t WalkFramePointers(uintptr_t fp, uintptr_t low, uintptr_t high, uint64_t* frames,
                         size_t max) noexcept {
  size_t n = 0;
  while (n < max) {
    // A frame record is {saved fp, return address}: both words must lie inside the stack.
    if (fp < low || fp > high - 2 * sizeof(uintptr_t) || (fp & (sizeof(uintptr_t) - 1)) != 0) {
      break;
    }
    const auto* record = reinterpret_cast<const uintptr_t*>(fp);
    const uintptr_t next = record[0];
    const uintptr_t ret = record[1];
    if (ret < 4096)
      break;
    if (!IsOwnCode(ret))
      frames[n++] = format::PcFrame(ret);
    if (next <= fp)
      break;  // frames grow towards higher addresses; anything else is garbage
    fp = next;
  }
  return n;
}

uint32_t CaptureStack(StackMode mode, uint32_t depth) noexcept {
  if (mode == StackMode::kOff || depth == 0)
    return format::kNoStack;
  uint64_t frames[format::kMaxStackFrames];
  const size_t max = depth < format::kMaxStackFrames ? depth : format::kMaxStackFrames;
  size_t n = 0;
  if (mode == StackMode::kUnwind) {
    UnwindState state{frames, max, 0};
    _Unwind_Backtrace(CollectFrame, &state);
    n = state.count;
  } else {
    uintptr_t low = 0;
    uintptr_t high = 0;
    if (!ThreadStackBounds(&low, &high))
      return format::kNoStack;
    // Callers' frames lie above the current one. The part of the main thread's stack below the
    // current frame may not be mapped yet, so the walk never reads below it.
    const auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
    if (here > low)
      low = here;
    n = WalkFramePointers(here, low, high, frames, max);
  }
  return n == 0 ? format::kNoStack : InternStack(frames, n);
}

uint32_t CaptureStackFromContext(uintptr_t pc, uintptr_t sp, uintptr_t fp,
                                 uint32_t depth) noexcept {
  if (!t_stack_known || t_stack_high == 0 || depth == 0)
    return format::kNoStack;
  const uintptr_t low = sp > t_stack_low ? sp : t_stack_low;
  uint64_t frames[format::kMaxStackFrames];
  const size_t max = depth < format::kMaxStackFrames ? depth : format::kMaxStackFrames;
  size_t n = 0;
  // The interrupted pc is exact, not a return address; +1 keeps "return address" semantics
  // (symbolizers look up pc - 1).
  frames[n++] = format::PcFrame(pc + 1);
  n += WalkFramePointers(fp, low, t_stack_high, frames + n, max - n);
  return InternStack(frames, n);
}

}  // namespace cuclimb::interposer
