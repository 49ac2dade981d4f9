// SPDX-License-Identifier: Apache-2.0
// The fake CUDA libraries of the stack tests (fake_cuda_lib.cpp, static_cudart_fake.cpp).
#pragma once

extern "C" {
using FakeCallback = void (*)(void* arg);

// libcudart.so.0-fake-nofp: no frame pointers, garbage in the frame-pointer register.
void fake_nofp_call(int levels, FakeCallback cb, void* arg);
void fake_nofp_spin(const volatile int* stop);
// libcuda.so.0-fake-fp: frame pointers.
void fake_fp_call(int levels, FakeCallback cb, void* arg);
void fake_fp_spin(const volatile int* stop);
// Fake static cudart, linked into the test program.
int cudaFakeMalloc(FakeCallback cb, void* arg);
void libcudart_static_0123456789abcdef(FakeCallback cb, void* arg);
}
