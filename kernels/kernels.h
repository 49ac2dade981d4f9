// SPDX-License-Identifier: Apache-2.0
// Host launch wrappers for cuclimb's MLP training kernels: the only kernels header workloads use.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "kernels/cuda_check.h"

// Conventions for every wrapper below:
// - Matrices are row-major float32; `ld*` is the row stride in elements.
// - Work is queued on `stream` and the call returns at once; a launch error exits through
//   CUCLIMB_CUDA_CHECK (the kernels serve programs, not libraries).
// - Every output element is written (tests poison outputs with NaN to prove it); inputs may alias
//   outputs only where a wrapper says so.
// - Sizes of zero are valid and launch nothing.
namespace cuclimb::kernels {

enum class Transpose { kNo, kYes };

// C[m x n] = alpha * op(A) * op(B) + beta * C, with op(A) m x k and op(B) k x n. A is stored
// m x k (kNo) or k x m (kYes); likewise B is k x n or n x k. When beta == 0, C is not read, so
// it may hold garbage. Tiled 64 x 64 with 16-deep shared-memory panels; any shape.
void Gemm(Transpose trans_a, Transpose trans_b, int m, int n, int k, float alpha, const float* a,
          int lda, const float* b, int ldb, float beta, float* c, int ldc, cudaStream_t stream);

// y[r][c] = x[r][c] + bias[c]; x may equal y.
void AddBias(const float* x, const float* bias, float* y, int rows, int cols, cudaStream_t stream);

// out[c] = sum over r of x[r][c]: the bias gradient.
void ColumnSum(const float* x, int rows, int cols, float* out, cudaStream_t stream);

// out[0] = sum of x[0..n): one block, deterministic order for a given n.
void ReduceSum(const float* x, std::size_t n, float* out, cudaStream_t stream);

enum class Activation { kRelu, kGelu, kTanh };

// y = act(x), elementwise; x may equal y. GELU is the exact erf form.
void ActivationForward(Activation act, const float* x, float* y, std::size_t n,
                       cudaStream_t stream);

// dx = dy * act'(x), where x is the activation's input; dx may equal dy.
void ActivationBackward(Activation act, const float* dy, const float* x, float* dx, std::size_t n,
                        cudaStream_t stream);

// Mean squared error over rows x cols: loss[0] = mean((pred - target)^2) and
// grad = 2 (pred - target) / (rows * cols).
void MseLoss(const float* pred, const float* target, int rows, int cols, float* loss, float* grad,
             cudaStream_t stream);

// Softmax cross-entropy with integer labels in [0, cols): loss[0] = mean over rows of
// -log softmax(logits)[label] and grad = (softmax - onehot) / rows. A label out of range counts
// as a zero target row (its loss term is log-sum-exp).
void SoftmaxCrossEntropy(const float* logits, const int32_t* labels, int rows, int cols,
                         float* loss, float* grad, cudaStream_t stream);

// labels[r] = argmax over c of x[r][c] (the first maximum): synthetic classification targets.
void ArgmaxRows(const float* x, int rows, int cols, int32_t* labels, cudaStream_t stream);

// Hyper-parameters of one Adam/AdamW step. bias_correction1/2 are 1 - beta^t, computed by the
// caller in double precision for step t >= 1.
struct AdamHyper {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  bool decoupled = false;  // AdamW: decay applied to the parameter, not added to the gradient.
  float bias_correction1 = 1.0f;
  float bias_correction2 = 1.0f;
};

// One fused Adam step over n elements:
//   g' = g + wd * p (Adam only); m' = b1 m + (1 - b1) g'; v' = b2 v + (1 - b2) g'^2;
//   u = (m' / bc1) / (sqrt(v' / bc2) + eps) (+ wd * p for AdamW); p' = p - lr * u.
// Out-of-place like Burn's Adam (new moment and parameter tensors each step), or in place when
// the outputs alias the inputs element for element. `update_out` (u) may be null.
void AdamUpdate(const AdamHyper& hyper, std::size_t n, const float* param, const float* grad,
                const float* m, const float* v, float* param_out, float* m_out, float* v_out,
                float* update_out, cudaStream_t stream);

// x[i] = value.
void Fill(float* x, std::size_t n, float value, cudaStream_t stream);

// x[i] = lo + (hi - lo) * U(seed, i), U in [0, 1) from a counter-based hash: the same seed gives
// the same values on any launch configuration.
void FillUniform(float* x, std::size_t n, float lo, float hi, uint64_t seed, cudaStream_t stream);

// x[i] = mean + stddev * N(seed, i) (Box-Muller over the same hash).
void FillNormal(float* x, std::size_t n, float mean, float stddev, uint64_t seed,
                cudaStream_t stream);

}  // namespace cuclimb::kernels
