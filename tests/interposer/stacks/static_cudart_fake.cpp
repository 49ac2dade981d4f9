// SPDX-License-Identifier: Apache-2.0
// Stands in for static cudart inside a program: functions named as static cudart names its own
// (cudaXxx, libcudart_static_<hash>), built without frame pointers, calling the fake driver.
#include "fake_cuda.h"

using Callback = FakeCallback;

extern "C" __attribute__((noinline)) void libcudart_static_0123456789abcdef(Callback cb,
                                                                            void* arg) {
  fake_nofp_call(2, cb, arg);
  asm volatile("" ::: "memory");
}

extern "C" __attribute__((noinline)) int cudaFakeMalloc(Callback cb, void* arg) {
  libcudart_static_0123456789abcdef(cb, arg);
  asm volatile("" ::: "memory");
  return 0;
}
