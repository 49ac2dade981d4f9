// SPDX-License-Identifier: Apache-2.0
// The one table of libcuclimb.so's options: environment variable, `cuclimb record` flag, value
// syntax, default and help. config.cpp parses it for the library; the launcher uses the same
// table for its --help and to validate flags before it starts the program. Header-only, no
// dependencies, so both sides include it.
#pragma once

// X(key, env, flag, value_name, default_value, help)
// value_name nullptr: a switch (the flag takes no value; the variable takes 0/1).
#define CUCLIMB_OPTIONS(X)                                                                         \
  X(kOutput, "CUCLIMB_OUTPUT", "output", "PATTERN", "cuclimb-%e-%p.trace",                         \
    "trace file; %p pid, %h host, %r rank (RANK, LOCAL_RANK, OMPI_COMM_WORLD_RANK, "               \
    "SLURM_PROCID), "                                                                              \
    "%e program name, %% a percent sign")                                                          \
  X(kKernels, "CUCLIMB_KERNELS", "kernels", "off|sampled|all", "sampled",                          \
    "GPU kernel timing (CUPTI CONCURRENT_KERNEL, ~1.5 us per launch while on): sampled turns it "  \
    "on for about 1/N of the iterations (1, 2, 4, ... then every Nth)")                            \
  X(kKernelEvery, "CUCLIMB_KERNEL_EVERY", "kernel-every", "N", "32",                               \
    "sampling period of --kernels=sampled: every Nth iteration, or one writer tick in N without "  \
    "iteration marks")                                                                             \
  X(kApi, "CUCLIMB_API", "api", "on|off", "on",                                                    \
    "host times of launches, synchronizations, copies and event records; off records "             \
    "allocations, handles and NVTX only")                                                          \
  X(kMemoryActivity, "CUCLIMB_MEMORY_ACTIVITY", "memory-activity", "off|sampled|on", "sampled",    \
    "CUPTI MEMORY2 and MEMORY_POOL records (graph and driver-internal allocations, pool sizes; "   \
    "~1 us per allocation and per free while on): sampled shares the kernel-timing windows")       \
  X(kStacks, "CUCLIMB_STACKS", "stacks", "off|fp|unwind|python[,unwind]", "off",                   \
    "host call stack per allocation and handle, from the caller: frame-pointer walk (cheap, "      \
    "stops at code built without frame pointers) or full unwind (~1-5 us each); python adds the "  \
    "Python frames (file, line, function) to fp or unwind; cuclimb record picks python for a "     \
    "Python program unless told")                                                                  \
  X(kStackDepth, "CUCLIMB_STACK_DEPTH", "stack-depth", "N", "32", "frames kept per stack (1-256)") \
  X(kSampleHz, "CUCLIMB_SAMPLE_HZ", "sample-hz", "HZ", "0",                                        \
    "host stack sampling of the threads that call CUDA, in samples per second per thread "         \
    "(0 off; 1000 is a good rate); uses SIGPROF")                                                  \
  X(kGaugeMs, "CUCLIMB_GAUGE_MS", "gauge-ms", "MS|off", "1000",                                    \
    "period of the writer's pool and device-memory gauges, also taken at iteration boundaries "    \
    "(0: boundaries only; off: no CUDA queries from cuclimb at all)")                              \
  X(kIteration, "CUCLIMB_ITERATION", "iteration", "NAMES",                                         \
    "iteration,iter,step,train_step,ProfilerStep#*",                                               \
    "comma-separated NVTX range or mark names that start a training iteration (an integer "        \
    "payload is the iteration number); a trailing * matches a prefix")                             \
  X(kFollowChildren, "CUCLIMB_FOLLOW_CHILDREN", "follow-children", "on|off", "on",                 \
    "trace CUDA child processes (fork+exec) too, each into its own file")                          \
  X(kPaused, "CUCLIMB_PAUSED", "paused", nullptr, "0",                                             \
    "start paused; the program resumes recording with cuclimb_resume()")                           \
  X(kRingKib, "CUCLIMB_RING_KIB", "ring-kib", "KIB", "4096",                                       \
    "per-thread event ring (128 bytes per event); a full ring drops events and counts them")       \
  X(kFlushMs, "CUCLIMB_FLUSH_MS", "flush-ms", "MS", "20",                                          \
    "writer thread wake-up period (a thread may record ~1.5 M events/s before its ring overflows " \
    "at 20 ms and 4 MiB)")                                                                         \
  X(kLog, "CUCLIMB_LOG", "log", "warn|quiet", "warn", "warnings on stderr")

namespace cuclimb::interposer {

enum class OptionKey : int {
#define CUCLIMB_OPTION_KEY(key, env, flag, value_name, default_value, help) key,
  CUCLIMB_OPTIONS(CUCLIMB_OPTION_KEY)
#undef CUCLIMB_OPTION_KEY
      kCount,
};

struct OptionInfo {
  OptionKey key;
  const char* env;
  const char* flag;
  const char* value_name;
  const char* default_value;
  const char* help;
};

inline constexpr OptionInfo kOptionTable[] = {
#define CUCLIMB_OPTION_INFO(key, env, flag, value_name, default_value, help) \
  {OptionKey::key, env, flag, value_name, default_value, help},
    CUCLIMB_OPTIONS(CUCLIMB_OPTION_INFO)
#undef CUCLIMB_OPTION_INFO
};

static_assert(sizeof(kOptionTable) / sizeof(OptionInfo) == static_cast<int>(OptionKey::kCount));

// Environment variables that are not options: set by the launcher or meant for experts.
inline constexpr const char* kEnvPreloadInit = "CUCLIMB_PRELOAD_INIT";  // subscribe in the ctor
inline constexpr const char* kEnvDebugCbids = "CUCLIMB_DEBUG_CBIDS";    // file: callback counts
inline constexpr const char* kEnvDebugCaptureQueries = "CUCLIMB_DEBUG_CAPTURE_QUERIES";
inline constexpr const char* kEnvDebugBareCallbacks = "CUCLIMB_DEBUG_BARE_CALLBACKS";
inline constexpr const char* kEnvLib = "CUCLIMB_LIB";  // launcher: path of libcuclimb.so

}  // namespace cuclimb::interposer
