// SPDX-License-Identifier: Apache-2.0
// Grid sizing and launch-error checks shared by the .cu files (internal to kernels/).
#pragma once

#include <algorithm>
#include <cstddef>

#include <cuda_runtime_api.h>

#include "kernels/cuda_check.h"

namespace cuclimb::kernels::internal {

inline constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill the GPU, capped so a huge n does
// not overflow gridDim.x; the loop covers the rest.
inline unsigned int GridFor(std::size_t n) {
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(std::clamp<std::size_t>(blocks, 1, 65535));
}

}  // namespace cuclimb::kernels::internal

// Checks the launch just queued; names the kernel so a failure is attributable.
#define CUCLIMB_CHECK_LAUNCH(kernel_name)                                                      \
  do {                                                                                         \
    const cudaError_t cuclimb_launch_status_ = cudaGetLastError();                             \
    if (cuclimb_launch_status_ != cudaSuccess) {                                               \
      ::cuclimb::kernels::FailCuda(cuclimb_launch_status_, "launch of " kernel_name, __FILE__, \
                                   __LINE__);                                                  \
    }                                                                                          \
  } while (false)
