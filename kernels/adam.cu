// SPDX-License-Identifier: Apache-2.0
// Fused Adam/AdamW update: moments, bias correction and the parameter step in one pass.
#include "kernels/kernels.h"
#include "kernels/launch_util.h"

namespace cuclimb::kernels {
namespace {

using internal::GridFor;
using internal::kThreads;

// No __restrict__: in-place mode aliases param/param_out, m/m_out and v/v_out, which is safe
// because each element is read before it is written by the same thread.
__global__ void AdamKernel(AdamHyper hyper, size_t n, const float* param, const float* grad,
                           const float* m, const float* v, float* param_out, float* m_out,
                           float* v_out, float* update_out) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float p = param[i];
    float g = grad[i];
    if (!hyper.decoupled)
      g = fmaf(hyper.weight_decay, p, g);
    const float m_new = fmaf(hyper.beta1, m[i], (1.0f - hyper.beta1) * g);
    const float v_new = fmaf(hyper.beta2, v[i], (1.0f - hyper.beta2) * g * g);
    const float m_hat = m_new / hyper.bias_correction1;
    const float v_hat = v_new / hyper.bias_correction2;
    float update = m_hat / (sqrtf(v_hat) + hyper.eps);
    if (hyper.decoupled)
      update = fmaf(hyper.weight_decay, p, update);
    m_out[i] = m_new;
    v_out[i] = v_new;
    if (update_out != nullptr)
      update_out[i] = update;
    param_out[i] = p - hyper.lr * update;
  }
}

}  // namespace

void AdamUpdate(const AdamHyper& hyper, size_t n, const float* param, const float* grad,
                const float* m, const float* v, float* param_out, float* m_out, float* v_out,
                float* update_out, cudaStream_t stream) {
  if (n == 0)
    return;
  AdamKernel<<<GridFor(n), kThreads, 0, stream>>>(hyper, n, param, grad, m, v, param_out, m_out,
                                                  v_out, update_out);
  CUCLIMB_CHECK_LAUNCH("AdamKernel");
}

}  // namespace cuclimb::kernels
