// SPDX-License-Identifier: Apache-2.0
// A multilayer perceptron on cuclimb's kernels: parameters created inside the allocator's
// persistent window, an explicit forward pass that keeps what backward needs, and backward.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "workloads/adam/tensor.h"

namespace cuclimb::workloads {

// What the forward pass keeps for backward: each layer's input and, for hidden layers, the
// pre-activation. Dropping it frees the activations, like dropping Burn's autodiff graph.
struct ForwardCache {
  std::vector<Tensor> inputs;           // inputs[l] is layer l's input (inputs[0] unused: x)
  std::vector<Tensor> pre_activations;  // per hidden layer
  Tensor output;                        // last layer, no activation
};

class Mlp {
 public:
  // dims = {in, hidden..., out}. Weights and biases ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), like
  // Burn's Kaiming-uniform default; each parameter is allocated and initialised between
  // BeginPersistent/EndPersistent, as Burn's initializer does.
  Mlp(const Device& device, const std::vector<int>& dims, kernels::Activation activation,
      uint64_t seed);

  ForwardCache Forward(const Tensor& x) const;

  // Gradients of every parameter in Parameters() order, given dL/d(output). Intermediates are
  // freed as soon as they are consumed.
  std::vector<Tensor> Backward(const Tensor& x, ForwardCache cache, Tensor output_grad) const;

  // w0, b0, w1, b1, ...: the optimizer replaces them in place (Burn's Adam returns new tensors).
  std::vector<Tensor*> Parameters();
  const std::vector<int>& dims() const { return dims_; }

  // Moves the parameters out (the --retain-params knob keeps them alive past the network).
  std::vector<Tensor> TakeParameters();

 private:
  Device device_;
  std::vector<int> dims_;
  kernels::Activation activation_;
  std::vector<Tensor> weights_;
  std::vector<Tensor> biases_;
};

}  // namespace cuclimb::workloads
