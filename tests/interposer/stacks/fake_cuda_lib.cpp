// SPDX-License-Identifier: Apache-2.0
// A stand-in for libcuda/libcupti in stack tests: a call into it passes through a few of its own
// frames and then calls back (as CUPTI calls cuclimb's callback). Built twice: with frame
// pointers, and without them while keeping garbage in the frame-pointer register, as an
// optimized driver may (the frames between the application and the callback then have no frame
// records, and the register says nothing). The file name is chosen to match cuda_code.cpp's
// table ("libcudart.so.0-fake-..."), so the stack walkers treat it as CUDA runtime code.
#include <cstdint>

#include "fake_cuda.h"

#ifndef FAKE_CUDA_PREFIX
#error "FAKE_CUDA_PREFIX names the exported functions"
#endif
#define FAKE_CAT2(a, b) a##b
#define FAKE_CAT(a, b) FAKE_CAT2(a, b)
#define FAKE_NAME(name) FAKE_CAT(FAKE_CUDA_PREFIX, name)

using Callback = FakeCallback;

namespace {

// Puts garbage into the frame-pointer register for the rest of the function (the compiler saves
// and restores the caller's value, and says so in the CFI). Only without frame pointers: with
// them, the register belongs to the frame.
inline void ClobberFramePointer() {
#if defined(FAKE_CUDA_CLOBBER_FP) && defined(__x86_64__)
  asm volatile("movq $0x5a5a5a5a5a5a5a5a, %%rbp" ::: "rbp", "memory");
#endif
}

__attribute__((noinline)) void Dispatch(Callback cb, void* arg, volatile int* sink) {
  ClobberFramePointer();
  cb(arg);
  *sink = *sink + 1;  // keeps the call from being a tail call
}

__attribute__((noinline)) void Enter(int levels, Callback cb, void* arg, volatile int* sink) {
  ClobberFramePointer();
  if (levels <= 0) {
    Dispatch(cb, arg, sink);
  } else {
    Enter(levels - 1, cb, arg, sink);
  }
  *sink = *sink + 1;
}

}  // namespace

// Calls cb(arg) from under `levels` + 2 frames of this library.
extern "C" __attribute__((visibility("default"), noinline)) void FAKE_NAME(call)(int levels,
                                                                                 Callback cb,
                                                                                 void* arg) {
  volatile int sink = 0;
  Enter(levels, cb, arg, &sink);
}

namespace {
__attribute__((noinline)) int Poll(const volatile int* stop) {
  return *stop;
}
}  // namespace

// Spins inside this library until *stop becomes non-zero (a host sample's target). Not a leaf,
// so that with frame pointers it has a frame record wherever it is interrupted.
extern "C" __attribute__((visibility("default"), noinline)) void FAKE_NAME(spin)(
    const volatile int* stop) {
  ClobberFramePointer();
  while (Poll(stop) == 0) {
  }
}
