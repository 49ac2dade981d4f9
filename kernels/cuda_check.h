// SPDX-License-Identifier: Apache-2.0
// CUCLIMB_CUDA_CHECK: the abort-on-error policy of cuclimb's programs (kernels, workloads, tests).
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime_api.h>

namespace cuclimb::kernels {

// Exit status of a program stopped by a CUDA error; distinct from usage errors (2).
inline constexpr int kExitCudaError = 3;

// Prints "file:line: call failed: cudaErrorX (message)" and exits. Programs only: the interposer
// never calls this (style.md section 6), it lives inside someone else's process.
[[noreturn]] inline void FailCuda(cudaError_t status, const char* call, const char* file,
                                  int line) {
  std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call, cudaGetErrorName(status),
               cudaGetErrorString(status));
  std::exit(kExitCudaError);
}

}  // namespace cuclimb::kernels

#define CUCLIMB_CUDA_CHECK(call)                                                \
  do {                                                                          \
    const cudaError_t cuclimb_status_ = (call);                                 \
    if (cuclimb_status_ != cudaSuccess) {                                       \
      ::cuclimb::kernels::FailCuda(cuclimb_status_, #call, __FILE__, __LINE__); \
    }                                                                           \
  } while (false)
