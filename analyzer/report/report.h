// SPDX-License-Identifier: Apache-2.0
// The in-memory result of `cuclimb analyze`: everything the terminal, JSON and HTML reports,
// `cuclimb diff`, `cuclimb check` and the Perfetto export need, as plain data.
//
// Conventions, so that consumers never guess:
//  - A `Series` holds one value per iteration: element i is iteration i (0-based), and its size
//    is Iterations::count. Events before the first iteration (the prologue) and after the last
//    one (the epilogue) are never in a Series; they are counted in Iterations.
//  - Times in Series are milliseconds (`_ms`); timestamps are trace nanoseconds (`_ns`, relative
//    to the trace's base clock); sizes are bytes (`_bytes`).
//  - Level series (live handles, live bytes, gauges) hold the value at the end of the iteration;
//    rate series (allocations, time, samples) hold the total inside the iteration.
//  - Vectors are in a stable, documented order so that the same trace gives the same report.
// docs/report-schema.md describes each field as it appears in the JSON report.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "detect/attribution.h"
#include "detect/thresholds.h"
#include "detect/trend.h"
#include "iterations/iteration_span.h"
#include "series/series.h"

namespace cuclimb::analysis {

inline constexpr char kReportSchema[] = "cuclimb.report/1";

struct TraceInfo {
  std::string path;
  std::string form;    // "binary" | "jsonl"
  std::string format;  // "1.0"
  std::string producer;
  std::string clock;  // "monotonic" | "monotonic_raw" | "synthetic" | "unknown"
  int64_t base_realtime_ns = 0;
  std::string status;          // "complete" | "no_trailer" | "truncated" | "corrupt"
  std::string status_message;  // the reader's one-line message
  bool partial = false;        // truncated or corrupt: analysed up to the damage
  uint64_t events = 0;
  uint64_t skipped_records = 0;
  int64_t first_ts_ns = 0;
  int64_t last_ts_ns = 0;
  bool repassed = false;  // a second pass was needed (segmentation changed after the prefix)
};

struct DeviceInfo {
  int32_t ordinal = -1;
  std::string name, uuid;
  uint64_t total_bytes = 0;
  int64_t compute_capability = 0;  // major*10 + minor
};

struct ProcessInfo {
  int64_t pid = 0;
  int64_t rank = -1;  // job rank, −1 when not part of a job
  std::string cmd, host, exe;
  uint64_t driver_version = 0, cupti_version = 0;
  std::vector<DeviceInfo> devices;  // by ordinal
};

struct ThreadInfo {
  uint32_t tid = 0;
  std::string name;
  uint64_t events = 0;
  uint64_t cuda_calls = 0;  // api, launch, alloc, free, sync, copy, create, destroy, vmm
};

// An iteration source the choice weighed, and why it won or lost (report-schema.md).
struct IterationCandidate {
  std::string source;   // "nvtx_range" | "nvtx_mark" | "launch_period"
  std::string name;     // range or mark ("domain::name" outside the default domain); anchor kernel
  std::string origin;   // "program" | "library_step" | "library"
  std::string library;  // the library whose range it is ("XLA", "cuBLAS", ...); "" for the program
  uint32_t tid = 0;
  uint64_t instances = 0;  // ranges and marks
  int64_t depth = 0;       // least nesting depth of a range (0 = outermost)
  double coverage = 0;     // share of its thread's launches (or calls, or time) inside a range
  bool chosen = false;
  std::string reason;  // why it was chosen or passed over
};

// The warm-up cut of the run: iterations at the start in which the program is still settling
// (JIT, caches, allocator pools), excluded from every trend test (detect/warmup.h).
struct WarmupChoice {
  bool automatic = true;   // false when --warmup N fixed it
  int64_t iterations = 0;  // the cut applied: iterations [0, iterations) are excluded
  int64_t wanted = 0;      // what the detector found before the cap (= iterations when not capped)
  double max_share = 0;    // the cap, as a share of the run (Thresholds::max_warmup_share)
  bool capped = false;     // the detector wanted more than the cap allows; a note says so
  std::string series;      // the series it was chosen on (the iteration's own time)
  std::string why;         // one sentence
};

struct Iterations {
  std::string source;                // "nvtx_range" | "nvtx_mark" | "launch_period" | "none"
  std::string name;                  // range or mark name; the anchor kernel for "launch_period"
  bool user_chosen = false;          // from --iteration
  uint32_t tid = 0;                  // thread whose boundaries define iterations
  int64_t count = 0;                 // number of iterations (Series length)
  int64_t period_launches = 0;       // "launch_period": launches per iteration
  std::vector<IterationSpan> spans;  // count entries
  uint64_t prologue_events = 0, epilogue_events = 0;
  std::string why;  // one sentence on how the source was chosen
  // What the choice weighed: the chosen first, then the others by preference; at most 12.
  std::vector<IterationCandidate> candidates;
  WarmupChoice warmup;
};

// A component of a range's time, or one named part of it (an API, a kernel).
struct Component {
  std::string name;
  Series ms;
  Trend trend;
  double delta_ms = 0;  // slope × tested iterations: growth over the run
};

// Where a range's time goes, per iteration. wall = api + sync + host; gpu runs concurrently.
struct Decomposition {
  Component wall, api, sync, host, gpu;  // names "wall", "api", "sync", "host", "gpu"
  std::vector<Component> by_api;         // host time inside CUDA calls, by API; by total desc
  std::vector<Component> by_sync;        // synchronization wait, by API
  std::vector<Component> by_kernel;      // GPU time of kernels launched inside the range
};

// Why a range (or the run) climbs (analysis/causes.h, report-schema.md "Causes").
inline constexpr char kCauseAccumulator[] = "accumulator";  // state that grows, named by id
inline constexpr char kCauseGpu[] = "gpu";    // kernels slower on the same launch configuration
inline constexpr char kCauseHost[] = "host";  // host code between CUDA calls
inline constexpr char kCauseApi[] = "api";    // time inside CUDA calls, no state growing
inline constexpr char kCauseSync[] = "sync";  // waiting on the GPU, kernels not timed
inline constexpr char kCauseWork[] = "work";  // more CUDA calls or launches per iteration
inline constexpr char kCauseMachine[] = "machine";  // everything scales together, or reverses
inline constexpr char kCauseUnknown[] = "unknown";

struct Cause {
  std::string kind;         // "" when the range does not climb; otherwise a kCause* value
  std::string accumulator;  // accumulator id ("kind:key") when kind is "accumulator"
  std::string verdict;      // that accumulator's verdict for the range: explains | likely_cause
  std::string range;        // top-level cause only: the range that sets it
  std::string summary;      // one plain sentence
};

// How a range climbs on one rank of a job (several traces only; analysis/rank_climbs.h). Growth
// is per iteration (Theil–Sen slopes, ms/iter), so ranks with different iteration counts compare.
struct RankClimb {
  int rank = 0;          // job rank: the recorded one (RANK), else the trace's position
  int index = 0;         // the trace's position on the command line
  bool present = false;  // the rank has this range
  Trend trend;           // the rank's own trend of the range
  bool climbing = false;
  double wall_ms_per_iter = 0, host_ms_per_iter = 0, api_ms_per_iter = 0, sync_ms_per_iter = 0;
  double compute_ms_per_iter = 0;     // GPU time per iteration of the rank's other kernels
  double collective_ms_per_iter = 0;  // GPU time per iteration of its collective (NCCL) kernels
  bool collectives = false;           // the rank launches collective kernels
  bool collectives_timed = false;     // ... and their GPU times were recorded
  double wait_ms_per_iter = 0;        // the range's growth spent waiting for peers in collectives
  double own_ms_per_iter = 0;         // the rest: growth of the rank's own work
  std::string role;                   // "straggler" | "waits" | "climbs" | "flat" | "absent"
};

// A range across the ranks of a job.
struct RangeByRank {
  std::string pattern;           // "" (one trace) | "none" | "all" | "straggler" | "one" | "some"
  int straggler = -1;            // job rank whose own work the others wait for ("straggler")
  bool inferred = false;         // no collective kernels: the straggler is inferred
  std::vector<int> climbing;     // job ranks where the range climbs
  std::vector<int> waiting;      // job ranks whose growth is waiting for the straggler
  std::string summary;           // one sentence
  std::vector<RankClimb> ranks;  // every rank, by job rank
};

struct RangeReport {
  std::string name;       // "domain::name" outside the default domain
  uint32_t tid = 0;       // thread with the most instances
  Series total_ms;        // the report's `st`: total time of the range's instances per iteration
  Series count;           // instances per iteration
  Trend trend;            // on total_ms
  bool climbing = false;  // the trend test: p < alpha, slope > 0, change ≥ min_climb_pct
  // Whether the climb is the program's and large enough to set the verdict:
  double iteration_share_pct = 0;     // growth over the run as % of the iteration's first level
  bool material = false;              // iteration_share_pct ≥ min_iteration_share_pct
  bool steady = false;                // a sustained rise: not one step, not a shift that reverses
  int64_t climb_start_iteration = 0;  // where the range's own growth starts (≥ the warm-up)
  bool sets_verdict = false;          // climbing, material, steady and cause.kind is not "machine"
  Cause cause;                        // set for every climbing range
  Decomposition decomposition;
  std::vector<std::string> explained_by;  // accumulator ids ("kind:key") with verdict explains
  std::string where_time_goes;            // when climbing: which component carries the growth
  // Top level of a several-trace report only: how it climbs on each rank.
  RangeByRank by_rank;
};

struct KernelRow {
  std::string name;
  uint64_t launches = 0, executions = 0;
  double gpu_ms = 0;
  Series launches_per_iter, gpu_ms_per_iter, mean_us;  // mean_us: mean GPU duration
  Trend duration_trend;                                // on mean_us
  bool slowing = false;                                // duration_trend rising and material
};

struct ApiRow {
  std::string name;
  uint64_t calls = 0;
  double ms = 0;
  Series calls_per_iter, ms_per_iter;
  Trend trend;  // on ms_per_iter
};

// One per-iteration state series: metric × dimension × key.
struct StateSeries {
  std::string metric;     // live_handles, live_bytes, allocs, frees, ... (report-schema.md)
  std::string dimension;  // total, memory_kind, api, size_class, call_site, handle_type, ...
  std::string key;
  std::string unit;  // handles, bytes, calls, samples, kernels
  Series values;
  Trend trend;
};

struct CallSite {
  uint32_t stack_id = 0;
  std::string label;                // the first frame outside CUDA and cuclimb libraries
  std::vector<std::string> frames;  // symbolized, innermost first
};

struct HandleExample {
  uint64_t address = 0;  // or handle value
  uint64_t serial = 0;   // allocation number in the trace: address reuse is a new handle
  uint64_t size_bytes = 0;
  std::string api;
  int64_t alloc_iteration = 0;  // −1 = prologue
  int64_t alloc_ts_ns = 0;
  int64_t free_iteration = -2;  // −2 = never freed
};

// An accumulator on one rank of a job (several traces only).
struct AccumulatorOnRank {
  int rank = 0, index = 0;  // job rank and command-line position
  bool lives = false;       // accepted as an accumulator on this rank
  bool measured = false;    // the rank has the candidate's series: growth_per_iter is its slope
  double growth_per_iter = 0, bytes_per_iter = 0;
  double p_value = 1;
  std::vector<std::string> explains;  // this rank's ranges it explains
};

struct Accumulator {
  int rank = 0;
  std::string kind;  // device_allocations, pinned_allocations, ... (report-schema.md)
  std::string key;   // call site label, "API size-class", handle API, pool or heap
  std::string id;    // "kind:key", unique
  double growth_per_iter = 0;
  std::string unit;  // "handles" or "bytes" (pool_reserved) or "samples" (host_function)
  double p_value = 1;
  double bytes_per_iter = 0;  // growth of live bytes, when the kind has bytes
  Series values;              // the candidate series (unit)
  Series bytes;               // live bytes series, when the kind has bytes
  Trend trend;
  int64_t growth_start_iteration = 0;
  CallSite site;
  std::vector<std::string> apis, size_classes;  // seen in this key's survivors
  std::vector<HandleExample> examples;          // oldest post-warm-up survivors first
  Series survivors_by_alloc_iteration;       // this key's handles live at exit, by alloc iteration
  std::vector<Explanation> explanations;     // one per climbing range
  std::vector<std::string> explains;         // ranges with verdict "explains"
  std::vector<std::string> likely_cause_of;  // ranges with verdict "likely_cause"
  double score = 0;                          // ranking key (report-schema.md)
  std::string evidence;                      // one line for the terminal
  // Top level of a several-trace report only: where it lives, rank by rank.
  std::vector<AccumulatorOnRank> by_rank;
};

struct LeakSite {
  std::string kind, key;
  uint64_t handles = 0, bytes = 0;
  CallSite site;
  std::vector<HandleExample> examples;
};

struct Leaks {
  uint64_t handles = 0, bytes = 0;                  // allocations live at the end of the trace
  std::vector<LeakSite> by_site;                    // by bytes desc
  std::map<std::string, uint64_t> handles_by_type;  // streams, events, ... never destroyed
  uint64_t unmatched_frees = 0;                     // frees of addresses never seen allocated
  uint64_t replaced_allocations = 0;                // an address allocated again without a free
  uint64_t activity_duplicates = 0;  // CUPTI MEMORY2 records of calls also seen by callbacks
};

struct Temporaries {
  Series count, bytes;  // allocations freed in the iteration that made them
  uint64_t total = 0, total_bytes = 0;
  std::map<std::string, uint64_t> lifetime_histogram;  // "same", "1", "2-3", "4-7", ..., "never"
};

struct Peak {
  uint64_t live_bytes = 0;  // highest live bytes of all tracked memory
  int64_t ts_ns = 0, iteration = 0;
  std::map<std::string, uint64_t> by_kind;  // highest live bytes per memory kind
  Series live_bytes_per_iter;               // highest within each iteration
};

struct PoolFragmentation {
  std::string pool;  // "0x..." or "all"
  Series reserved_bytes, used_bytes;
  double last_fragmentation = 0;  // 1 − used / reserved at the last iteration
};

struct Fragmentation {
  std::vector<PoolFragmentation> pools;
  std::vector<PoolFragmentation> heaps;  // NVTX heaps: heap size vs live region bytes
};

struct Overhead {
  Series self_ms;  // profiler time per iteration, all threads
  double self_ms_total = 0;
  double self_pct_of_wall = 0;
  uint64_t recorded_events = 0;  // from overhead events
  // The profiler's cost per recorded event: a program that makes more calls per iteration costs
  // more per iteration, which is not the profiler's climb; a rising cost per event is.
  Series self_ns_per_event;  // per iteration; carried over iterations without overhead events
  double ns_per_event_first = 0, ns_per_event_last = 0;  // robust levels (after the warm-up)
  int64_t dropped = 0;                                   // trailer total
  std::map<std::string, int64_t> drops_by_reason;
  Series drops;  // per iteration
  int64_t recording_pauses = 0;
  bool overhead_climbing = false;  // the profiler's cost per event climbs (a warning)
};

// Evidence that the machine, not the program, changed speed (analysis/causes.h): every kernel's
// GPU time per launch and every API's host time per call move together, no state grows; or the
// iteration time shifts to a new level and comes back.
struct MachineDrift {
  double kernel_change_pct = 0;       // median over kernels of the change of mean GPU time per run
  double api_change_pct = 0;          // median over APIs of the change of host time per call
  double host_change_pct = 0;         // change of host time between calls, per iteration
  int64_t kernels = 0, apis = 0;      // how many kernels and APIs had enough data to compare
  bool scaling_together = false;      // kernels and APIs (those measured) all moved the same way
  bool level_shift_reverses = false;  // the iteration time stepped away and came back
  bool detected = false;              // the climb (or fall) of the step time is the machine's
  std::string summary;                // one sentence
};

struct RankReport {
  int index = 0;  // position on the command line
  TraceInfo trace;
  ProcessInfo process;
  std::vector<ThreadInfo> threads;  // by cuda_calls desc
  Iterations iterations;
  std::vector<RangeReport> ranges;        // climbing first, then by first-level time desc
  std::vector<KernelRow> kernels;         // by total GPU time desc
  std::vector<ApiRow> apis;               // by total time desc
  std::vector<StateSeries> state;         // by metric, dimension, key
  std::vector<Accumulator> accumulators;  // by rank
  Leaks leaks;
  Temporaries temporaries;
  Peak peak;
  Fragmentation fragmentation;
  Overhead overhead;
  MachineDrift machine;
  std::vector<std::string> notes;  // caveats: partial trace, too few iterations, ...
  bool climbing = false;           // some range sets the verdict
  Cause cause;  // what the rank's verdict rests on (kind "" when flat and no drift)
};

// A rank the others wait for (analysis/straggler.h): its own work grows while, on the other
// ranks, the time inside collectives grows with it.
struct StragglerWait {
  int rank = 0, index = 0;
  double climb_pct = 0;               // the range's climb on this rank
  double wait_ms_per_iter = 0;        // the range's growth spent waiting
  double collective_ms_per_iter = 0;  // growth of its collectives' GPU time per iteration
  double sync_ms_per_iter = 0;        // growth of its host's wait in synchronization calls
  bool collectives_timed = false;     // its collective kernels' GPU times were recorded
  std::string collective;             // the collective kernel whose time grows most
  std::string wait_call;              // the CUDA call of the range whose time grows most
};

struct Straggler {
  bool found = false;
  bool inferred = false;  // from accumulators alone: no collective kernels time the wait
  int rank = -1, index = -1;
  std::string range;           // the range it is found on (the iteration's, when it shows there)
  double climb_pct = 0;        // the range's climb on the straggler
  double own_ms_per_iter = 0;  // growth of the straggler's own work in the range
  std::string where;           // where that growth sits: "host", "api", "gpu"
  std::string where_detail;    // in words: host code between calls, a CUDA call, a kernel
  std::vector<std::string> accumulators;  // ids that grow more on it and explain its range
  double extra_growth_per_iter = 0;  // the first one's growth there minus the waiting ranks' mean
  std::string unit;                  // of extra_growth_per_iter
  std::vector<StragglerWait> waiting;
  double wait_share = 0;  // the waiting ranks' mean wait over the straggler's own growth
  std::string summary;    // the story in words
};

struct Report {
  std::string schema = kReportSchema;
  std::string verdict;   // "climbing" | "flat"
  Cause cause;           // why: the cause of the range that sets the verdict, or "machine"
  bool partial = false;  // some trace was cut or damaged
  Thresholds thresholds;
  // Across ranks: with one trace these equal ranks[0]'s; see report-schema.md for the merge.
  Iterations iterations;
  std::vector<RangeReport> ranges;
  std::vector<Accumulator> accumulators;
  std::map<std::string, std::vector<int>> accumulator_ranks;  // id → job ranks that have it
  std::vector<RankReport> ranks;
  std::vector<std::string> notes;
  std::vector<int> job_ranks;  // by trace index: its job rank (the recorded one, else the index)
  Straggler straggler;         // several traces only
};

}  // namespace cuclimb::analysis
