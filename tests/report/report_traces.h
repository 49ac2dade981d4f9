// SPDX-License-Identifier: Apache-2.0
// Traces for the report tests: a long, hostile one (every string a trace can carry is an HTML or
// script injection attempt, dozens of ranges, 1500 iterations, a climb, drops), and the
// analyzer's training-loop simulator (tests/analyzer/sim) for realistic flat and climbing runs.
#pragma once

#include <string>

#include "trace_builder.h"
#include "training_sim.h"

namespace cuclimb::testing {

// Strings planted in the hostile trace. The report must show each as text.
inline constexpr char kHostileKernel[] = "</script><script>window.__pwned=1</script>";
inline constexpr char kHostileRange[] = "<img src=x onerror=\"window.__pwned=1\">";
inline constexpr char kHostileFrame[] = "<svg onload=\"window.__pwned=1\">::alloc";
inline constexpr char kHostileCmd[] = "train.py --tag '\"><script>window.__pwned=1</script><!--";
inline constexpr char kHostileThread[] = "<iframe srcdoc=\"<script>parent.__pwned=1</script>\">";
inline constexpr char kEntityRange[] = "a &lt;b&gt; &amp; c";  // must not be decoded
inline constexpr char kSeparatorRange[] = "line\u2028separator";

struct HostileShape {
  int iterations = 1500;
  int ranges = 36;                   // NVTX ranges per iteration besides the iteration range
  int64_t host_ns_per_leaked = 200;  // the first range slows with every leaked allocation
  int drops_every = 100;             // a drops event every N iterations (0 = none)
};

// The hostile trace: per iteration a "step" range holding `ranges` named ranges, each with a
// temporary allocation, a launch and its GPU record; one allocation per iteration leaks from a
// call site whose frame is hostile, and the first range's time grows with the leak.
TraceBuilder HostileTrace(const HostileShape& shape);

// The simulator's cubecl-like climb (two leaked allocations per iteration slow the persistent
// network's step) and its flat control, `iterations` long.
SimOptions ClimbSim(int iterations, uint64_t seed = 1);
SimOptions FlatSim(int iterations, uint64_t seed = 1);

// Memory creep on a large base: a 12.3 MiB buffer from the prologue plus 4 KiB kept per
// iteration (12.3 → 12.7 MiB over 100 iterations), a slow host climb, GC pauses, and GPU records
// only on sampled iterations (1, 2, 4, ... then every `sampled_every`th), as
// CUCLIMB_KERNELS=sampled records them.
TraceBuilder CreepTrace(int iterations = 100, int sampled_every = 8);

// A timeline as tangled as real recordings get, for the Perfetto export's tracks: two NVTX
// domains interleaved on one thread (their ranges do not nest), a runtime call recorded after
// the driver call it wraps and starting on the same nanosecond, zero-length calls, kernels
// delivered an iteration late and out of order on their stream, a loader thread with calls of
// its own, NVTX start/end ranges overlapping across threads, a pop without a push, and a push
// never popped. Iterations are the "step" ranges of thread 1, with jitter and a slow checkpoint
// every 50.
TraceBuilder TangledTrace(int iterations);

}  // namespace cuclimb::testing
