// SPDX-License-Identifier: Apache-2.0
// Reductions: column sums (bias gradients), a full sum, and row argmax (synthetic labels).
#include "kernels/block_reduce.cuh"
#include "kernels/kernels.h"
#include "kernels/launch_util.h"

namespace cuclimb::kernels {
namespace {

using internal::GridFor;
using internal::kThreads;

constexpr int kColumnsPerBlock = 32;
constexpr int kRowLanes = 8;

// A 32 x 8 block: each of the 8 row lanes sums every 8th row of 32 adjacent columns (coalesced),
// then the lanes are added in shared memory in a fixed order.
__global__ void ColumnSumKernel(const float* __restrict__ x, int rows, int cols,
                                float* __restrict__ out) {
  __shared__ float partial[kRowLanes][kColumnsPerBlock];
  const int col = blockIdx.x * kColumnsPerBlock + threadIdx.x;
  float sum = 0.0f;
  if (col < cols) {
    for (int r = threadIdx.y; r < rows; r += kRowLanes)
      sum += x[static_cast<size_t>(r) * cols + col];
  }
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    float total = 0.0f;
    for (int lane = 0; lane < kRowLanes; ++lane) total += partial[lane][threadIdx.x];
    out[col] = total;
  }
}

constexpr int kReduceThreads = 1024;

__global__ void ReduceSumKernel(const float* __restrict__ x, size_t n, float* __restrict__ out) {
  float sum = 0.0f;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) sum += x[i];
  sum = internal::BlockSum(sum);
  if (threadIdx.x == 0)
    *out = sum;
}

__global__ void ArgmaxRowsKernel(const float* __restrict__ x, int rows, int cols,
                                 int32_t* __restrict__ labels) {
  for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += gridDim.x * blockDim.x) {
    const float* row = x + static_cast<size_t>(r) * cols;
    int best = 0;
    for (int c = 1; c < cols; ++c) {
      if (row[c] > row[best])
        best = c;
    }
    labels[r] = best;
  }
}

}  // namespace

void ColumnSum(const float* x, int rows, int cols, float* out, cudaStream_t stream) {
  if (cols <= 0)
    return;
  if (rows <= 0) {
    Fill(out, static_cast<size_t>(cols), 0.0f, stream);
    return;
  }
  const dim3 block(kColumnsPerBlock, kRowLanes);
  const dim3 grid((cols + kColumnsPerBlock - 1) / kColumnsPerBlock);
  ColumnSumKernel<<<grid, block, 0, stream>>>(x, rows, cols, out);
  CUCLIMB_CHECK_LAUNCH("ColumnSumKernel");
}

void ReduceSum(const float* x, size_t n, float* out, cudaStream_t stream) {
  // n == 0 still writes the (zero) sum: the output is a value the caller will read.
  ReduceSumKernel<<<1, kReduceThreads, 0, stream>>>(x, n, out);
  CUCLIMB_CHECK_LAUNCH("ReduceSumKernel");
}

void ArgmaxRows(const float* x, int rows, int cols, int32_t* labels, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0)
    return;
  ArgmaxRowsKernel<<<GridFor(static_cast<size_t>(rows)), kThreads, 0, stream>>>(x, rows, cols,
                                                                                labels);
  CUCLIMB_CHECK_LAUNCH("ArgmaxRowsKernel");
}

}  // namespace cuclimb::kernels
