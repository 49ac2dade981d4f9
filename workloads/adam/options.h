// SPDX-License-Identifier: Apache-2.0
// cuclimb-adam's command line: every flag, its default, and validation that runs before any CUDA
// call, so a bad flag or an impossible size is reported without touching the GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/allocators/allocator_config.h"

namespace cuclimb::workloads {

enum class Mode { kFlat, kClimb };
enum class Task { kRegression, kClassification };
enum class ActivationKind { kRelu, kGelu };
// How `st` is timed: `isolated` synchronises the stream before and after each timed optimizer
// step, so st is that step's own latency (host issue + GPU tail); `overlapped` times the calls
// alone, as an asynchronous framework sees them, and then includes back-pressure from earlier
// queued work (noisy on the H200: docs/workload.md).
enum class Timing { kIsolated, kOverlapped };

const char* ModeName(Mode mode);
const char* TaskName(Task task);
const char* ActivationName(ActivationKind activation);
const char* TimingName(Timing timing);

struct Options {
  // The report's reproducer.
  Mode mode = Mode::kFlat;
  int iters = 1500;
  int inner_steps = 10;
  int ephemeral_steps = 0;  // 0: same as inner_steps
  int nets = 1;             // persistent networks (p0, p1, ...); climb mode adds "eph"
  std::vector<int> dims = {64, 256, 256, 8};
  std::vector<int> ephemeral_dims;  // empty: same as dims
  int batch = 64;
  uint64_t seed = 42;
  Task task = Task::kRegression;
  ActivationKind activation = ActivationKind::kRelu;
  // Adam.
  float lr = 1e-3f;
  float weight_decay = 0.0f;
  bool adamw = false;
  bool inplace_adam = false;
  // Allocators.
  AllocatorKind allocator = AllocatorKind::kCubecl;
  uint64_t release_threshold_bytes = 0;  // async only
  bool nvtx_mem = false;                 // caching and cubecl
  // Retention and lifecycle knobs (any allocator).
  int retain_tiny = 0;
  bool retain_params = false;
  bool separate_pools = false;
  bool cleanup_each_cycle = false;
  // cubecl model knobs.
  bool persistent_window = true;
  bool size_match = true;
  bool persistent_pool = true;
  uint64_t align = 512;
  bool separate_meta_pool = false;
  bool rounded_meta = false;
  // Measurement.
  Timing timing = Timing::kIsolated;
  int gpu_warmup_ms = 300;  // untimed GEMMs before iteration 0, so clocks are up when it starts
  // A reference network "ref", p0's twin (same widths, weights and data), stepped right after
  // the persistent networks on an instance of the same allocator that nothing else uses. Both
  // make the same calls, so st/ref per iteration cancels what slows both alike (a shared VM's
  // driver calls slowing by a quarter for hundreds of iterations, docs/workload.md) and keeps
  // what sharing the allocator with the reallocated network adds.
  bool reference = false;
  // Output.
  bool stats = false;
  bool json = false;
  int warmup = -1;          // -1: min(50, iters / 10)
  int summary_window = -1;  // -1: max(1, iters / 20)
  int device = 0;

  int EffectiveEphemeralSteps() const {
    return ephemeral_steps > 0 ? ephemeral_steps : inner_steps;
  }
  const std::vector<int>& EffectiveEphemeralDims() const {
    return ephemeral_dims.empty() ? dims : ephemeral_dims;
  }
  int EffectiveWarmup() const;
  int EffectiveSummaryWindow() const;
};

struct ParseResult {
  bool ok = false;
  bool help = false;  // --help: print Usage() and exit 0
  Options options;
  std::string error;  // one line, names the flag
};

// Parses argv (argv[0] is skipped). Accepts "--flag value" and "--flag=value".
ParseResult ParseOptions(int argc, const char* const* argv);

// Checks ranges and cross-flag consistency, including an upper bound on device memory.
// Returns an empty string when the options are valid.
std::string ValidateOptions(const Options& options);

// The allocator settings these options describe.
AllocatorConfig MakeAllocatorConfig(const Options& options);

// Rough device bytes a run needs: parameters times the live copies Adam keeps, plus activations.
uint64_t EstimateDeviceBytes(const Options& options);

std::string Usage();

}  // namespace cuclimb::workloads
