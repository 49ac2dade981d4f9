// SPDX-License-Identifier: Apache-2.0
// Elementwise kernels: bias add and the ReLU, GELU and tanh activations with their gradients.
#include "kernels/kernels.h"
#include "kernels/launch_util.h"

namespace cuclimb::kernels {
namespace {

using internal::GridFor;
using internal::kThreads;

__global__ void AddBiasKernel(const float* x, const float* __restrict__ bias, float* y, size_t rows,
                              size_t cols) {
  const size_t n = rows * cols;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    y[i] = x[i] + bias[i % cols];
  }
}

// 1 / sqrt(2) and 1 / sqrt(2 pi) for the exact GELU, x * Phi(x).
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;

__device__ float ActivationValue(Activation act, float x) {
  switch (act) {
    case Activation::kRelu:
      return x > 0.0f ? x : 0.0f;
    case Activation::kGelu:
      return 0.5f * x * (1.0f + erff(x * kInvSqrt2));
    case Activation::kTanh:
      return tanhf(x);
  }
  return x;
}

__device__ float ActivationDerivative(Activation act, float x) {
  switch (act) {
    case Activation::kRelu:
      return x > 0.0f ? 1.0f : 0.0f;
    case Activation::kGelu:
      return 0.5f * (1.0f + erff(x * kInvSqrt2)) + x * kInvSqrt2Pi * expf(-0.5f * x * x);
    case Activation::kTanh: {
      const float t = tanhf(x);
      return 1.0f - t * t;
    }
  }
  return 1.0f;
}

__global__ void ActivationForwardKernel(Activation act, const float* x, float* y, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    y[i] = ActivationValue(act, x[i]);
  }
}

__global__ void ActivationBackwardKernel(Activation act, const float* dy, const float* x, float* dx,
                                         size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    dx[i] = dy[i] * ActivationDerivative(act, x[i]);
  }
}

}  // namespace

void AddBias(const float* x, const float* bias, float* y, int rows, int cols, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0)
    return;
  const size_t n = static_cast<size_t>(rows) * cols;
  AddBiasKernel<<<GridFor(n), kThreads, 0, stream>>>(x, bias, y, rows, cols);
  CUCLIMB_CHECK_LAUNCH("AddBiasKernel");
}

void ActivationForward(Activation act, const float* x, float* y, size_t n, cudaStream_t stream) {
  if (n == 0)
    return;
  ActivationForwardKernel<<<GridFor(n), kThreads, 0, stream>>>(act, x, y, n);
  CUCLIMB_CHECK_LAUNCH("ActivationForwardKernel");
}

void ActivationBackward(Activation act, const float* dy, const float* x, float* dx, size_t n,
                        cudaStream_t stream) {
  if (n == 0)
    return;
  ActivationBackwardKernel<<<GridFor(n), kThreads, 0, stream>>>(act, dy, x, dx, n);
  CUCLIMB_CHECK_LAUNCH("ActivationBackwardKernel");
}

}  // namespace cuclimb::kernels
