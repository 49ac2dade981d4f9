// SPDX-License-Identifier: Apache-2.0
// AdamOptimizer: moment lifecycle and the fused update launches.
#include "workloads/adam/adam_optimizer.h"

#include <cmath>
#include <utility>

namespace cuclimb::workloads {

AdamOptimizer::AdamOptimizer(const Device& device, const AdamConfig& config)
    : device_(device), config_(config) {}

void AdamOptimizer::Step(const std::vector<Tensor*>& params, std::vector<Tensor> grads) {
  ++step_;
  if (m_.empty()) {
    // Burn creates the moment state lazily, at the first step, as zeros.
    for (const Tensor* param : params) {
      for (auto* moments : {&m_, &v_}) {
        Tensor zeros = Tensor::Empty(device_, param->rows(), param->cols());
        LaunchKernel(device_, kKernelFill, {&zeros},
                     [&] { kernels::Fill(zeros.f32(), zeros.numel(), 0.0f, device_.stream); });
        moments->push_back(std::move(zeros));
      }
    }
  }
  kernels::AdamHyper hyper;
  hyper.lr = config_.lr;
  hyper.beta1 = config_.beta1;
  hyper.beta2 = config_.beta2;
  hyper.eps = config_.eps;
  hyper.weight_decay = config_.weight_decay;
  hyper.decoupled = config_.decoupled;
  hyper.bias_correction1 =
      static_cast<float>(1.0 - std::pow(static_cast<double>(config_.beta1), step_));
  hyper.bias_correction2 =
      static_cast<float>(1.0 - std::pow(static_cast<double>(config_.beta2), step_));

  for (std::size_t i = 0; i < params.size(); ++i) {
    Tensor& param = *params[i];
    Tensor& grad = grads[i];
    Tensor& m = m_[i];
    Tensor& v = v_[i];
    if (config_.in_place) {
      LaunchKernel(device_, kKernelAdam, {&param, &grad, &m, &v}, [&] {
        kernels::AdamUpdate(hyper, param.numel(), param.f32(), grad.f32(), m.f32(), v.f32(),
                            param.f32(), m.f32(), v.f32(), nullptr, device_.stream);
      });
    } else {
      Tensor m_new = Tensor::Empty(device_, param.rows(), param.cols());
      Tensor v_new = Tensor::Empty(device_, param.rows(), param.cols());
      Tensor update = Tensor::Empty(device_, param.rows(), param.cols());
      Tensor param_new = Tensor::Empty(device_, param.rows(), param.cols());
      LaunchKernel(device_, kKernelAdam,
                   {&param, &grad, &m, &v, &param_new, &m_new, &v_new, &update}, [&] {
                     kernels::AdamUpdate(hyper, param.numel(), param.f32(), grad.f32(), m.f32(),
                                         v.f32(), param_new.f32(), m_new.f32(), v_new.f32(),
                                         update.f32(), device_.stream);
                   });
      m = std::move(m_new);
      v = std::move(v_new);
      param = std::move(param_new);
    }
    grad.Reset();
  }
}

}  // namespace cuclimb::workloads
