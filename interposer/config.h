// SPDX-License-Identifier: Apache-2.0
// libcuclimb.so's configuration: the CUCLIMB_* variables of config_options.h, read once into a
// POD at start, plus the expansion of the output pattern.
//
// Cold path only. Never allocates: the launcher and the library both call these functions, and
// the library may run them inside cuInit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "interposer/config_options.h"

namespace cuclimb::interposer {

enum class KernelMode : uint8_t { kOff, kSampled, kAll };
enum class StackMode : uint8_t { kOff, kFramePointer, kUnwind };
enum class MemoryActivity : uint8_t { kOff, kSampled, kOn };

inline constexpr size_t kMaxPathBytes = 1024;
inline constexpr size_t kMaxIterationNames = 8;
inline constexpr size_t kMaxIterationNameBytes = 48;

struct Config {
  char output[kMaxPathBytes] = "cuclimb-%e-%p.trace";
  KernelMode kernels = KernelMode::kSampled;
  uint32_t kernel_every = 32;
  bool api = true;
  MemoryActivity memory_activity = MemoryActivity::kSampled;
  StackMode stacks = StackMode::kOff;  // native frames
  bool python_stacks = false;          // Python frames merged in (CUCLIMB_STACKS=python[,unwind])
  uint32_t stack_depth = 32;
  uint32_t sample_hz = 0;
  uint32_t gauge_ms = 1000;
  bool gauges = true;  // false: no writer-side CUDA queries at all (CUCLIMB_GAUGE_MS=off)
  // Iteration markers, each NUL-terminated; a name ending in '*' matches a prefix.
  char iteration[kMaxIterationNames][kMaxIterationNameBytes] = {"iteration", "iter", "step",
                                                                "train_step", "ProfilerStep#*"};
  size_t iteration_count = 5;
  bool follow_children = true;
  bool paused = false;
  uint32_t ring_kib = 4096;
  uint32_t flush_ms = 20;
  bool quiet = false;
};

// Applies one option value. Returns false and writes a one-line reason into error (which names
// the variable) when the value is invalid; config is then unchanged for that option.
bool ApplyOption(Config* config, OptionKey key, const char* value, char* error,
                 size_t error_size) noexcept;

// Reads every CUCLIMB_* variable through getenv_fn (getenv in the library; tests pass their
// own). Invalid values keep the default; each is reported through warn(message) once, unless
// CUCLIMB_LOG=quiet (whatever its place in the environment).
using GetenvFn = const char* (*)(const char* name);
using WarnFn = void (*)(const char* message);
Config LoadConfig(GetenvFn getenv_fn, WarnFn warn) noexcept;

// True when CUCLIMB_LOG=quiet: for warnings due before the configuration is read (the LD_PRELOAD
// constructor).
bool QuietFromEnv(GetenvFn getenv_fn) noexcept;

// LD_PRELOAD without cuclimb's own entries (file name starting with "libcuclimb"), for
// CUCLIMB_FOLLOW_CHILDREN=off: the user's other preloads stay. Entries are separated by spaces
// or colons, as ld.so reads them; kept ones keep their separator. Returns false when out is too
// small (out is then empty).
bool PreloadWithoutCuclimb(const char* preload, char* out, size_t out_size) noexcept;

// The option's table entry.
const OptionInfo& InfoOf(OptionKey key) noexcept;

// True when name (a NVTX message or domain name) marks an iteration under config.
bool IsIterationName(const Config& config, const char* name) noexcept;

// Values substituted into the output pattern.
struct PatternValues {
  long pid = 0;
  const char* host = "";
  const char* rank = "";  // empty: "0" is written
  const char* program = "";
};

// Expands %p %h %r %e %% of pattern into out. Returns false when out is too small or the pattern
// has an unknown %-sequence (error says which).
bool ExpandOutputPattern(const char* pattern, const PatternValues& values, char* out,
                         size_t out_size, char* error, size_t error_size) noexcept;

// Where a process's rank in a multi-process job comes from, first set wins: the global rank of
// torchrun/torch.distributed (RANK), of Open MPI, of PMIx and PMI (MPICH, Intel MPI, srun
// --mpi=pmi*), of MVAPICH, then Slurm's task id (SLURM_PROCID: for srun-launched ranks; under
// mpirun inside an allocation it would number the launch step's tasks, hence after the MPI
// variables), and last the node-local rank (LOCAL_RANK: only when nothing global is set).
inline constexpr const char* kRankVariables[] = {
    "RANK",      "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
    "PMI_RANK",  "MV2_COMM_WORLD_RANK",  "SLURM_PROCID",
    "LOCAL_RANK"};

// The rank from the environment (kRankVariables, first set to a decimal number of at most 9
// digits wins); nullptr when none is.
const char* RankFromEnv(GetenvFn getenv_fn) noexcept;

}  // namespace cuclimb::interposer
