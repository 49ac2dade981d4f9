// SPDX-License-Identifier: Apache-2.0
// A synthetic data-parallel training job (PyTorch DDP over NCCL): N ranks, one trace each, whose
// timelines are coupled the way collectives couple them. Every iteration each rank runs its
// forward on the main thread, its backward on the autograd thread, which launches the gradient
// all-reduce kernels on an NCCL stream as buckets become ready; an all-reduce finishes on every
// rank when the last rank's kernel has arrived, so the NCCL kernels of the ranks that arrived
// early spin (their GPU time grows) and the host of those ranks waits longer in the
// synchronization that reads the loss. Knobs plant what real jobs do: an accumulator on one rank
// (a rank that keeps every loss tensor), machine drift on one rank, jitter, GC pauses, rank 0's
// checkpoints, evaluations, kernel timing on sampled iterations, a rank whose recording starts
// late and one whose trace is cut early. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cuclimb::testing {

struct DdpRankOptions {
  // An accumulator: device allocations kept per iteration and never freed (a loss tensor kept in
  // a Python list keeps its graph's buffers), and the host time each live one costs the forward
  // per iteration (the collector and the autograd bookkeeping walk them).
  int keep_per_iter = 0;
  double host_ns_per_kept = 0;
  // Machine drift on this rank, per iteration of its trace: relative growth of the GPU time of
  // its compute kernels (a throttling GPU) and of its host time (a busy CPU neighbour).
  double gpu_drift_per_iter = 0;
  double host_drift_per_iter = 0;
  // The trace holds job iterations [first_iteration, last_iteration); −1 = to the end. A trace
  // that ends early was cut: it has no trailer and no tear-down.
  int first_iteration = 0;
  int last_iteration = -1;
  bool records_rank = true;  // the process record carries RANK (false: an older recorder)
};

struct DdpOptions {
  int ranks = 2;
  int iterations = 160;  // job iterations
  uint64_t seed = 1;
  double noise = 0.03;               // relative jitter (normal) of every duration
  std::vector<DdpRankOptions> rank;  // per rank; missing entries are the defaults

  enum class KernelTiming { kAll, kSampled, kOff };
  KernelTiming kernels = KernelTiming::kAll;  // GPU kernel records: every iteration, 1, 2, 4, …,
  int kernel_every = 32;                      // 16 then every kernel_every-th, or none

  int checkpoint_every = 0;  // rank 0 saves a checkpoint (a long host pause) every N iterations
  int eval_every = 0;        // every rank evaluates (local kernels and a sync) every N iterations
  double gc_rate = 0.02;     // per rank and iteration: a garbage-collector pause in the forward
  int buckets = 2;           // gradient buckets: all-reduces per iteration
  // The collective backend. NCCL: all-reduce kernels on an NCCL stream, which spin on the GPU
  // while they wait. Gloo (ranks sharing a GPU): each bucket is copied to the host, all-reduced
  // by the CPU (the wait for the slowest rank is host time, no CUDA call) and copied back.
  enum class Backend { kNccl, kGloo };
  Backend backend = Backend::kNccl;
};

// One binary trace per rank, in rank order.
std::vector<std::string> SimulateDdp(const DdpOptions& options);

}  // namespace cuclimb::testing
