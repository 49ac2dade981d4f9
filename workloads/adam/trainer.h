// SPDX-License-Identifier: Apache-2.0
// The report's reproducer: persistent networks trained every outer iteration, plus (climb mode)
// an ephemeral network and fresh Adam built, trained and dropped inside each one.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "workloads/adam/options.h"
#include "workloads/allocators/device_allocator.h"

namespace cuclimb::workloads {

struct IterationRecord {
  int iter = 0;
  // Per persistent network, in names order: host wall-clock of its optimizer steps in this
  // iteration (the report's `st`), GPU time of the same launches (event pairs), and the loss of
  // its last step.
  std::vector<double> st_ms;
  std::vector<double> gpu_st_ms;
  std::vector<float> loss;
  float ephemeral_loss = 0.0f;  // climb mode: the ephemeral network's last loss
  // --reference: the same two timings for "ref", p0's twin on its own caching allocator.
  double ref_st_ms = 0.0;
  double ref_gpu_st_ms = 0.0;
  float ref_loss = 0.0f;  // equals loss[0] up to float reassociation: the twin trains alike
  double wall_ms = 0.0;   // the whole outer iteration, host side, synchronised at the end
  AllocatorStats stats;   // cumulative, summed over allocator instances
};

struct TrainResult {
  std::vector<std::string> names;  // persistent networks: p0, p1, ...
  std::vector<IterationRecord> iterations;
};

// The persistent networks' names: p0, p1, ...
std::vector<std::string> PersistentNames(const Options& options);

// Runs the workload on options.device. `on_iteration` sees each record as soon as the iteration
// has synchronised. Exits on CUDA errors through CUCLIMB_CUDA_CHECK; `options` must be valid.
TrainResult Train(const Options& options,
                  const std::function<void(const IterationRecord&)>& on_iteration);

}  // namespace cuclimb::workloads
