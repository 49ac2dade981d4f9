// SPDX-License-Identifier: Apache-2.0
// A synthetic training loop in the shape of the cubecl report: per outer iteration an ephemeral
// network is initialised, trained next to a persistent one for a few steps, and dropped. Knobs
// plant an accumulator of any kind, make step time depend on it (or on a GPU slowdown instead),
// add noise, warm-up growth, late GPU records and a second thread. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

#include "interposer/format/trace_format.h"
#include "trace/tables.h"
#include "trace_builder.h"

namespace cuclimb::testing {

struct SimOptions {
  int iterations = 120;
  int steps = 4;  // P/step and E/step ranges per iteration
  int kernels_per_step = 4;
  uint64_t seed = 1;
  double noise = 0.02;    // relative jitter (normal) of every duration
  double spike_rate = 0;  // probability that a step gets a 5x host spike

  enum class Boundaries { kRange, kMark, kNone };
  Boundaries boundaries = Boundaries::kRange;
  bool nvtx = true;  // false: no NVTX ranges (marks only with Boundaries::kMark)
  bool nested_in_train =
      false;  // wrap the loop in a "train" range (the iteration range is depth 1)

  // Accumulators: handles leaked per iteration (from leak_from up to leak_until, exclusive;
  // −1 = to the end). A burst leak leaks burst_size every burst_every iterations instead.
  int leak_device = 0, leak_pinned = 0, leak_managed = 0, leak_vmm = 0;
  int leak_streams = 0, leak_events = 0, leak_modules = 0, leak_graphs = 0, leak_regions = 0;
  int64_t pool_growth_bytes = 0;  // pool.reserved growth per iteration
  int host_fn_growth = 0;  // extra host samples of "grow_fn" per iteration (×10 per 100 its)
  int leak_from = 0, leak_until = -1;
  int burst_every = 0, burst_size = 0;  // device leak in bursts
  // Balanced churn of every kind (allocated and freed in the same iteration): flat controls.
  bool churn = true;

  // What step time depends on.
  double host_ns_per_leaked = 0;     // extra host time per P/step per live leaked device handle
  double host_ns_per_region = 0;     // the same per live leaked NVTX region
  double gpu_slowdown_ns = 0;        // adam kernel duration growth per iteration (GPU-only climb)
  double host_ns_per_fn_sample = 0;  // extra host time per P/step per sample of "grow_fn"
  int jit_warmup_iterations = 0;     // first iterations are slow (host), then normal

  // Real-program irregularities (each 0 = off).
  int gc_every = 0;          // a host pause (garbage collection) in one iteration every N
  double gc_ns = 0;          //   its length
  int eval_every = 0;        // an evaluation pass ("eval" range, extra kernels) every N
  int checkpoint_every = 0;  // a checkpoint (host time + device-to-host copies) every N
  double checkpoint_ns = 0;  //   its host time
  int accumulate = 1;        // gradient accumulation: the "P/opt" phase every Nth iteration
  double opt_ns = 0;         //   its host time (plus two kernels)
  int work_growth = 0;       // the program does more: +1 launch per P/step every N iterations
  // The machine: every host and GPU duration is multiplied by a speed factor per iteration.
  double drift_pct = 0;                   // the factor changes linearly by this much over the run
  int shift_from = -1, shift_until = -1;  // a level shift of shift_pct in [from, until)
  double shift_pct = 0;
  double profiler_ns_per_event = 150;  // the profiler's cost per recorded event
  double profiler_growth_pct = 0;      // ... and its change over the run

  bool stacks = true;             // allocation call stacks
  bool pc_stacks = false;         // use return addresses + a mapping instead of strings
  bool late_kernels = true;       // GPU records of iteration i arrive during iteration i+1
  int sampled_kernels_every = 1;  // > 1: GPU records only in iterations 1, 2, 4, ... then every Nth
  bool loader_thread = true;      // a second thread with copies, interleaved out of order
  bool gauges = true;
  bool samples = true;
  bool overhead = true;
  int64_t dropped = 0;
};

// Where the simulated events go.
struct SimSink {
  std::function<uint32_t(std::string_view)> str;
  std::function<uint32_t(std::initializer_list<std::string_view>)> stack;
  std::function<void(const format::Event&)> add;
};

// Runs the simulation; returns the number of events emitted.
uint64_t Simulate(const SimOptions& options, const SimSink& sink);

// Convenience: simulate into a TraceBuilder.
void Simulate(const SimOptions& options, TraceBuilder* builder);
std::string SimulateBinary(const SimOptions& options, bool trailer = true);

}  // namespace cuclimb::testing
