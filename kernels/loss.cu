// SPDX-License-Identifier: Apache-2.0
// Loss kernels with their gradients: mean squared error and softmax cross-entropy.
#include "kernels/block_reduce.cuh"
#include "kernels/kernels.h"
#include "kernels/launch_util.h"

namespace cuclimb::kernels {
namespace {

// The losses run as one block: an MLP batch is small, and one block gives the scalar loss a
// fixed summation order without a second launch or a scratch buffer the caller must allocate.
constexpr int kLossThreads = 1024;

__global__ void MseLossKernel(const float* __restrict__ pred, const float* __restrict__ target,
                              size_t n, float* __restrict__ loss, float* __restrict__ grad) {
  const float inv_n = 1.0f / static_cast<float>(n);
  float sum = 0.0f;
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float diff = pred[i] - target[i];
    grad[i] = 2.0f * diff * inv_n;
    sum += diff * diff;
  }
  sum = internal::BlockSum(sum);
  if (threadIdx.x == 0)
    *loss = sum * inv_n;
}

__global__ void SoftmaxCrossEntropyKernel(const float* __restrict__ logits,
                                          const int32_t* __restrict__ labels, int rows, int cols,
                                          float* __restrict__ loss, float* __restrict__ grad) {
  const float inv_rows = 1.0f / static_cast<float>(rows);
  float sum = 0.0f;
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    const float* row = logits + static_cast<size_t>(r) * cols;
    float* grad_row = grad + static_cast<size_t>(r) * cols;
    float max_logit = row[0];
    for (int c = 1; c < cols; ++c) max_logit = fmaxf(max_logit, row[c]);
    float denom = 0.0f;
    for (int c = 0; c < cols; ++c) denom += expf(row[c] - max_logit);
    const int label = labels[r];
    const bool in_range = label >= 0 && label < cols;
    const float log_denom = logf(denom);
    sum += log_denom - (in_range ? row[label] - max_logit : 0.0f);
    for (int c = 0; c < cols; ++c) {
      const float p = expf(row[c] - max_logit) / denom;
      grad_row[c] = (p - (c == label ? 1.0f : 0.0f)) * inv_rows;
    }
  }
  sum = internal::BlockSum(sum);
  if (threadIdx.x == 0)
    *loss = sum * inv_rows;
}

}  // namespace

void MseLoss(const float* pred, const float* target, int rows, int cols, float* loss, float* grad,
             cudaStream_t stream) {
  if (rows <= 0 || cols <= 0)
    return;
  MseLossKernel<<<1, kLossThreads, 0, stream>>>(pred, target, static_cast<size_t>(rows) * cols,
                                                loss, grad);
  CUCLIMB_CHECK_LAUNCH("MseLossKernel");
}

void SoftmaxCrossEntropy(const float* logits, const int32_t* labels, int rows, int cols,
                         float* loss, float* grad, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0)
    return;
  SoftmaxCrossEntropyKernel<<<1, kLossThreads, 0, stream>>>(logits, labels, rows, cols, loss, grad);
  CUCLIMB_CHECK_LAUNCH("SoftmaxCrossEntropyKernel");
}

}  // namespace cuclimb::kernels
