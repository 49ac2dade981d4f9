// SPDX-License-Identifier: Apache-2.0
// Stack walkers of stack.h.
#include "interposer/stack.h"

#include <algorithm>
#include <atomic>

#include <pthread.h>
#include <unwind.h>

#include "interposer/cuda_code.h"
#include "interposer/format/trace_format.h"
#include "interposer/python_frames.h"
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

#if defined(__x86_64__)
constexpr int kFramePointerRegister = 6;  // DWARF number of rbp
#elif defined(__aarch64__)
constexpr int kFramePointerRegister = 29;  // x29
#endif

// A frame-pointer value worth checking as the frame record {caller's fp, return address} of the
// frame whose stack pointer (at its call) is sp.
inline bool MayBeFrameRecord(uintptr_t fp, uintptr_t sp, uintptr_t high) {
  return fp >= sp && fp <= high - 2 * sizeof(uintptr_t) && (fp & (sizeof(uintptr_t) - 1)) == 0;
}

struct UnwindState {
  uint64_t* frames;
  size_t max;
  size_t count;
  bool leading;         // no application frame seen yet: CUDA runtime frames are dropped
  bool bridge;          // fp mode: stop at the first application frame with a frame record
  size_t bridged;       // application frames crossed without a frame record
  uintptr_t high;       // stack bound (bridge only)
  uintptr_t candidate;  // the last application frame's fp, if it may be a frame record
  uintptr_t resume_fp;  // frame record to walk on from (bridge only; 0: none)
};

_Unwind_Reason_Code CollectFrame(struct _Unwind_Context* context, void* arg) {
  auto* state = static_cast<UnwindState*>(arg);
  const uintptr_t pc = _Unwind_GetIP(context);
  if (pc == 0)
    return _URC_END_OF_STACK;
  if (state->leading) {
    if (IsCudaRuntimeCode(pc) || IsOwnCode(pc))
      return _URC_NO_REASON;
    state->leading = false;
  } else if (IsOwnCode(pc)) {
    return _URC_NO_REASON;
  }
#if defined(__x86_64__) || defined(__aarch64__)
  if (state->bridge) {
    // libgcc hands each frame its registers and, as "CFA", its stack pointer at the call. The
    // previous application frame had a frame record if its fp points at {fp, this pc}, right
    // below this frame's stack pointer on x86-64: then frame pointers take over from there.
    const uintptr_t sp = _Unwind_GetCFA(context);
    const uintptr_t c = state->candidate;
    if (c != 0 && reinterpret_cast<const uintptr_t*>(c)[1] == pc
#if defined(__x86_64__)
        && sp == c + 2 * sizeof(uintptr_t)
#endif
    ) {
      state->resume_fp = c;
      return _URC_END_OF_STACK;
    }
    if (state->count > 0 && ++state->bridged > kMaxBridgeFrames)
      return _URC_END_OF_STACK;
    const auto fp = static_cast<uintptr_t>(_Unwind_GetGR(context, kFramePointerRegister));
    state->candidate = MayBeFrameRecord(fp, sp, state->high) ? fp : 0;
  }
#endif
  if (state->count >= state->max)
    return _URC_END_OF_STACK;
  state->frames[state->count++] = format::PcFrame(pc);
  return _URC_NO_REASON;
}

// The return address in our outermost own frame: what called into libcuclimb.so. Our code keeps
// frame pointers, so this walk is exact.
uintptr_t FirstForeignReturnAddress(uintptr_t fp, uintptr_t low, uintptr_t high) {
  for (int i = 0; i < 16; ++i) {
    if (fp < low || fp > high - 2 * sizeof(uintptr_t) || (fp & (sizeof(uintptr_t) - 1)) != 0)
      return 0;
    const auto* record = reinterpret_cast<const uintptr_t*>(fp);
    if (!IsOwnCode(record[1]))
      return record[1];
    if (record[0] <= fp)
      return 0;
    fp = record[0];
  }
  return 0;
}

// Drops the leading frames that lie in CUDA runtime code; returns the new count.
size_t DropLeadingCudaFrames(uint64_t* frames, size_t n) {
  size_t first = 0;
  while (first < n && IsCudaRuntimeCode(static_cast<uintptr_t>(frames[first] >> 1))) ++first;
  for (size_t i = first; i < n; ++i) frames[i - first] = frames[i];
  return n - first;
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

size_t CollectStack(StackMode mode, uint32_t depth, uint64_t* frames) noexcept {
  if (mode == StackMode::kOff || depth == 0)
    return 0;
  const size_t max = depth < format::kMaxStackFrames ? depth : format::kMaxStackFrames;
  UnwindState state{frames, max, 0, true, false, 0, 0, 0, 0};
  if (mode == StackMode::kUnwind) {
    _Unwind_Backtrace(CollectFrame, &state);
    return state.count;
  }
  uintptr_t low = 0;
  uintptr_t high = 0;
  if (!ThreadStackBounds(&low, &high))
    return 0;
  // Callers' frames lie above the current one. The part of the main thread's stack below the
  // current frame may not be mapped yet, so the walk never reads below it.
  const auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (here > low)
    low = here;
  if (!IsCudaRuntimeCode(FirstForeignReturnAddress(here, low, high)))
    return WalkFramePointers(here, low, high, frames, max);  // called by the application itself
  state.bridge = true;
  state.high = high;
  _Unwind_Backtrace(CollectFrame, &state);
  size_t n = state.count;
  if (state.resume_fp != 0 && n < max)
    n += WalkFramePointers(state.resume_fp, state.resume_fp, high, frames + n, max - n);
  return n;
}

uint32_t CaptureStack(StackMode mode, uint32_t depth, bool python) noexcept {
  uint64_t frames[format::kMaxStackFrames];
  size_t n = CollectStack(mode, depth, frames);
  if (python) {
    n = MergePythonFrames(frames, n, std::min<size_t>(depth, format::kMaxStackFrames), 0);
  }
  return n == 0 ? format::kNoStack : InternStack(frames, n);
}

size_t CollectStackFromContext(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint32_t depth,
                               uint64_t* frames) noexcept {
  if (!t_stack_known || t_stack_high == 0 || depth == 0)
    return 0;
  const uintptr_t low = sp > t_stack_low ? sp : t_stack_low;
  const size_t max = depth < format::kMaxStackFrames ? depth : format::kMaxStackFrames;
  size_t n = 0;
  // The interrupted pc is exact, not a return address; +1 keeps "return address" semantics
  // (symbolizers look up pc - 1).
  frames[n++] = format::PcFrame(pc + 1);
  n += WalkFramePointers(fp, low, t_stack_high, frames + n, max - n);
  // Interrupted inside libcuda (a synchronization, say): its frames have no frame records, so
  // what follows is whatever the frame-pointer register held; keep what lies outside CUDA code.
  return DropLeadingCudaFrames(frames, n);
}

uint32_t CaptureStackFromContext(uintptr_t pc, uintptr_t sp, uintptr_t fp, uint32_t depth,
                                 bool python) noexcept {
  uint64_t frames[format::kMaxStackFrames];
  size_t n = CollectStackFromContext(pc, sp, fp, depth, frames);
  if (python) {
    n = MergePythonFrames(frames, n, std::min<size_t>(depth, format::kMaxStackFrames), pc);
  }
  return n == 0 ? format::kNoStack : InternStack(frames, n);
}

}  // namespace cuclimb::interposer
