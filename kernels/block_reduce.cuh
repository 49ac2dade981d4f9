// SPDX-License-Identifier: Apache-2.0
// Block-wide float sum for the single-block reductions (internal to kernels/).
#pragma once

namespace cuclimb::kernels::internal {

// Sum of `value` over the block; the result is valid in thread 0. blockDim.x must be a multiple
// of 32 and at most 1024. Fixed tree order, so a given launch shape is deterministic.
__device__ inline float BlockSum(float value) {
  __shared__ float warp_sums[32];
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_down_sync(0xffffffffu, value, offset);
  if (lane == 0)
    warp_sums[warp] = value;
  __syncthreads();
  const int warps = blockDim.x / 32;
  value = threadIdx.x < warps ? warp_sums[threadIdx.x] : 0.0f;
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset /= 2)
      value += __shfl_down_sync(0xffffffffu, value, offset);
  }
  return value;
}

}  // namespace cuclimb::kernels::internal
