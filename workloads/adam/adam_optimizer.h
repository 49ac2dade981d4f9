// SPDX-License-Identifier: Apache-2.0
// Adam/AdamW with Burn's tensor lifecycle: moments created at the first step, then new moment,
// temporary and parameter tensors every step (or in place with --inplace-adam).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernels.h"
#include "workloads/adam/tensor.h"

namespace cuclimb::workloads {

struct AdamConfig {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  bool decoupled = false;  // AdamW
  bool in_place = false;
};

class AdamOptimizer {
 public:
  AdamOptimizer(const Device& device, const AdamConfig& config);

  // One step over every parameter; consumes the gradients. Out of place (burn-optim adam.rs
  // L143-206): per parameter, new m, v, update temporary and parameter tensors, the old ones
  // dropped; each allocation goes through the allocator, so in cubecl they land in the
  // persistent pool by size match.
  void Step(const std::vector<Tensor*>& params, std::vector<Tensor> grads);

  int64_t steps() const { return step_; }

 private:
  Device device_;
  AdamConfig config_;
  int64_t step_ = 0;
  std::vector<Tensor> m_;
  std::vector<Tensor> v_;
};

}  // namespace cuclimb::workloads
