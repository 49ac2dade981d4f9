// SPDX-License-Identifier: Apache-2.0
// Mlp: initialisation in persistent windows, forward and backward passes.
#include "workloads/adam/mlp.h"

#include <cmath>
#include <utility>

namespace cuclimb::workloads {
namespace {

using kernels::Transpose;

// Allocates a parameter and fills it inside one persistent window: the init launch's metadata
// is reserved inside the window too, which is what routes it to the persistent pool in cubecl.
Tensor InitParameter(const Device& device, int rows, int cols, float bound, uint64_t seed) {
  device.allocator->BeginPersistent();
  Tensor tensor = Tensor::Empty(device, rows, cols);
  LaunchKernel(device, kKernelFillUniform, {&tensor}, [&] {
    kernels::FillUniform(tensor.f32(), tensor.numel(), -bound, bound, seed, device.stream);
  });
  device.allocator->EndPersistent();
  return tensor;
}

}  // namespace

Mlp::Mlp(const Device& device, const std::vector<int>& dims, kernels::Activation activation,
         uint64_t seed)
    : device_(device), dims_(dims), activation_(activation) {
  for (std::size_t l = 0; l + 1 < dims.size(); ++l) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(dims[l]));
    weights_.push_back(InitParameter(device, dims[l], dims[l + 1], bound, seed * 1000 + 2 * l));
    biases_.push_back(InitParameter(device, 1, dims[l + 1], bound, seed * 1000 + 2 * l + 1));
  }
}

ForwardCache Mlp::Forward(const Tensor& x) const {
  ForwardCache cache;
  const std::size_t layers = weights_.size();
  cache.inputs.resize(layers);
  const Tensor* input = &x;
  for (std::size_t l = 0; l < layers; ++l) {
    const Tensor& w = weights_[l];
    const Tensor& b = biases_[l];
    Tensor z = Tensor::Empty(device_, input->rows(), w.cols());
    LaunchKernel(device_, kKernelGemm, {input, &w, &z}, [&] {
      kernels::Gemm(Transpose::kNo, Transpose::kNo, input->rows(), w.cols(), w.rows(), 1.0f,
                    input->f32(), input->cols(), w.f32(), w.cols(), 0.0f, z.f32(), z.cols(),
                    device_.stream);
    });
    LaunchKernel(device_, kKernelAddBias, {&z, &b}, [&] {
      kernels::AddBias(z.f32(), b.f32(), z.f32(), z.rows(), z.cols(), device_.stream);
    });
    if (l + 1 == layers) {
      cache.output = std::move(z);
      break;
    }
    Tensor a = Tensor::Empty(device_, z.rows(), z.cols());
    LaunchKernel(device_, kKernelActivation, {&z, &a}, [&] {
      kernels::ActivationForward(activation_, z.f32(), a.f32(), z.numel(), device_.stream);
    });
    cache.pre_activations.push_back(std::move(z));
    cache.inputs[l + 1] = std::move(a);
    input = &cache.inputs[l + 1];
  }
  return cache;
}

std::vector<Tensor> Mlp::Backward(const Tensor& x, ForwardCache cache, Tensor output_grad) const {
  const std::size_t layers = weights_.size();
  std::vector<Tensor> grads(2 * layers);
  Tensor grad = std::move(output_grad);
  for (std::size_t l = layers; l-- > 0;) {
    const Tensor& input = l == 0 ? x : cache.inputs[l];
    const Tensor& w = weights_[l];
    Tensor dw = Tensor::Empty(device_, w.rows(), w.cols());
    LaunchKernel(device_, kKernelGemm, {&input, &grad, &dw}, [&] {
      // dW = input^T * grad: (in x batch) * (batch x out).
      kernels::Gemm(Transpose::kYes, Transpose::kNo, w.rows(), w.cols(), input.rows(), 1.0f,
                    input.f32(), input.cols(), grad.f32(), grad.cols(), 0.0f, dw.f32(), dw.cols(),
                    device_.stream);
    });
    Tensor db = Tensor::Empty(device_, 1, w.cols());
    LaunchKernel(device_, kKernelColumnSum, {&grad, &db}, [&] {
      kernels::ColumnSum(grad.f32(), grad.rows(), grad.cols(), db.f32(), device_.stream);
    });
    grads[2 * l] = std::move(dw);
    grads[2 * l + 1] = std::move(db);
    if (l == 0)
      break;
    // dInput = grad * W^T: (batch x out) * (out x in), then through the activation.
    Tensor dinput = Tensor::Empty(device_, grad.rows(), w.rows());
    LaunchKernel(device_, kKernelGemm, {&grad, &w, &dinput}, [&] {
      kernels::Gemm(Transpose::kNo, Transpose::kYes, grad.rows(), w.rows(), w.cols(), 1.0f,
                    grad.f32(), grad.cols(), w.f32(), w.cols(), 0.0f, dinput.f32(), dinput.cols(),
                    device_.stream);
    });
    grad.Reset();
    cache.inputs[l].Reset();
    const Tensor& pre = cache.pre_activations[l - 1];
    Tensor dpre = Tensor::Empty(device_, dinput.rows(), dinput.cols());
    LaunchKernel(device_, kKernelActivationBackward, {&dinput, &pre, &dpre}, [&] {
      kernels::ActivationBackward(activation_, dinput.f32(), pre.f32(), dpre.f32(), dpre.numel(),
                                  device_.stream);
    });
    cache.pre_activations[l - 1].Reset();
    grad = std::move(dpre);
  }
  return grads;
}

std::vector<Tensor*> Mlp::Parameters() {
  std::vector<Tensor*> params;
  for (std::size_t l = 0; l < weights_.size(); ++l) {
    params.push_back(&weights_[l]);
    params.push_back(&biases_[l]);
  }
  return params;
}

std::vector<Tensor> Mlp::TakeParameters() {
  std::vector<Tensor> params;
  for (std::size_t l = 0; l < weights_.size(); ++l) {
    params.push_back(std::move(weights_[l]));
    params.push_back(std::move(biases_[l]));
  }
  weights_.clear();
  biases_.clear();
  return params;
}

}  // namespace cuclimb::workloads
