// SPDX-License-Identifier: Apache-2.0
// End-to-end speed and memory of `cuclimb analyze` on a generated training-loop trace: events/s
// on one core (decode + analysis; wall and CPU time, since a shared machine inflates wall time),
// the reader alone for comparison, and peak RSS of the analysis (measured in a child process, so
// generation does not count).
//
//   analyze_bench [--events N] [--steps S] [--mix training|alloc] [--trace PATH] [--keep]
//                 [--no-decode]
//                 [--jobs N] [--scaling N] [--ranks R] [--repeats K]
// Defaults: 20 M events, 100 inner steps per iteration (≈ 4 000 events per iteration). The
// figures in docs/performance.md ("Analyzer") come from `--events 100000000`.
// --mix alloc: an allocation-heavy loop (every launch of a step between the allocation and the
// free of a temporary, as cudaMallocAsync without a caching allocator does).
// --no-decode: skip the decode-only pass (minutes at 10^9 events when only memory matters).
// --jobs N: the measured analysis uses N threads (AnalyzeOptions::jobs; default 1).
// --scaling N: instead, wall time of the analysis with 1, 2, 4, ... N threads, on R copies of
// the trace as the ranks of one job (default 8) and on the trace alone; prints a table of the
// medians of K interleaved runs (--repeats, default 1).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <vector>

#include <unistd.h>

#include "analysis/analyze.h"
#include "trace/binary_writer.h"
#include "trace/reader.h"
#include "training_sim.h"

namespace {

using cuclimb::format::Event;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

bool g_alloc_mix = false;

cuclimb::testing::SimOptions Shape(int steps) {
  cuclimb::testing::SimOptions o;
  o.temps_per_launch = g_alloc_mix ? 1 : 0;
  o.steps = steps;
  o.kernels_per_step = 8;
  o.noise = 0.05;
  o.leak_device = 2;  // the cubecl signature: a few 512 B allocations retained per iteration
  o.host_ns_per_leaked = 2;
  return o;
}

// Writes the simulated trace to path; returns the number of events.
uint64_t Generate(const std::string& path, uint64_t events, int steps, int* iterations,
                  uint64_t* allocs_and_frees) {
  cuclimb::trace::StringTable strings;
  cuclimb::trace::StackTable stacks;
  uint64_t counted = 0;
  cuclimb::testing::SimSink sink{
      [&](std::string_view s) { return strings.Intern(s); },
      [&](std::initializer_list<std::string_view> frames) {
        std::vector<uint64_t> words;
        for (std::string_view f : frames)
          words.push_back(cuclimb::format::StringFrame(strings.Intern(f)));
        return stacks.Intern(words);
      },
      [&](const Event&) { ++counted; }};
  cuclimb::testing::SimOptions probe = Shape(steps);
  probe.iterations = 20;
  cuclimb::testing::Simulate(probe, sink);
  const double per_iteration = static_cast<double>(counted) / probe.iterations;
  cuclimb::testing::SimOptions o = Shape(steps);
  o.iterations = std::max(10, static_cast<int>(static_cast<double>(events) / per_iteration));
  *iterations = o.iterations;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    std::perror(path.c_str());
    std::exit(1);
  }
  cuclimb::trace::TraceHeader header;
  header.producer = "analyze_bench";
  cuclimb::trace::BinaryTraceWriter writer(
      header,
      [f](std::string_view bytes) {
        return std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size()
                   ? absl::OkStatus()
                   : absl::DataLossError("write failed");
      },
      3, 1u << 20);
  int64_t last = 0;
  sink.add = [&](const Event& e) {
    const auto type = static_cast<cuclimb::format::EventType>(e.type);
    *allocs_and_frees +=
        type == cuclimb::format::EventType::kAlloc || type == cuclimb::format::EventType::kFree;
    (void)writer.Add(e, strings, stacks);
    last = std::max(last, e.ts);
  };
  const uint64_t n = cuclimb::testing::Simulate(o, sink);
  (void)writer.Finish(last, 0, "");
  std::fclose(f);
  return n;
}

double CpuSeconds() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct Timing {
  double wall = 0, cpu = 0;  // seconds
  // When the first and the last trace had been read: ranks that end far apart on equal traces
  // mean threads that waited for the slowest, not threads that slowed each other.
  double first_read = 0, last_read = 0;
};

// Wall and CPU time of the analysis of `paths` with `jobs` threads; exits on failure.
Timing TimeAnalysis(const std::vector<std::string>& paths, int jobs) {
  cuclimb::analysis::AnalyzeOptions options;
  options.jobs = jobs;
  const double cpu0 = CpuSeconds();
  const auto t0 = Clock::now();
  // Progress comes from one thread at a time (Analyze serialises it across ranks); the last
  // report of a trace's pass is the one with the most events.
  std::vector<double> read_at(paths.size(), 0);
  std::vector<uint64_t> events_at(paths.size(), 0);
  options.progress = [&](const cuclimb::analysis::Progress& p) {
    const auto i = static_cast<size_t>(p.trace_index);
    if (p.events >= events_at[i]) {
      events_at[i] = p.events;
      read_at[i] = Seconds(t0);
    }
  };
  auto report = cuclimb::analysis::Analyze(paths, options);
  Timing t{Seconds(t0), CpuSeconds() - cpu0};
  t.first_read = *std::min_element(read_at.begin(), read_at.end());
  t.last_read = *std::max_element(read_at.begin(), read_at.end());
  if (!report.ok()) {
    std::fprintf(stderr, "%s\n", std::string(report.status().message()).c_str());
    std::exit(1);
  }
  return t;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The --scaling table: threads, then wall time and speed-up for R ranks and for one trace, each
// the median of `repeats` runs; the runs are interleaved (every thread count once, then again),
// so that a change in the machine's load spreads over all thread counts rather than one.
void Scaling(const std::string& path, uint64_t events, int max_threads, int ranks, int repeats) {
  const std::vector<std::string> job(static_cast<size_t>(ranks), path);
  std::vector<int> counts;
  for (int t = 1;; t = std::min(2 * t, max_threads)) {
    counts.push_back(t);
    if (t == max_threads)
      break;
  }
  const size_t k = counts.size();
  std::vector<std::vector<double>> job_s(k), one_s(k), job_cpu(k), one_cpu(k);
  for (int r = 0; r < repeats; ++r) {
    for (size_t i = 0; i < k; ++i) {
      const Timing j = TimeAnalysis(job, counts[i]);
      const Timing o = TimeAnalysis({path}, counts[i]);
      job_s[i].push_back(j.wall);
      job_cpu[i].push_back(j.cpu);
      one_s[i].push_back(o.wall);
      one_cpu[i].push_back(o.cpu);
      std::printf(
          "run %d: %d threads: %d ranks %.2f s (CPU %.2f s; traces read by %.2f-%.2f s), "
          "1 trace %.2f s (CPU %.2f s)\n",
          r + 1, counts[i], ranks, j.wall, j.cpu, j.first_read, j.last_read, o.wall, o.cpu);
      std::fflush(stdout);
    }
  }
  std::printf(
      "scaling: %d ranks of %.1f M events, and 1 trace (wall time, median of %d interleaved runs; "
      "%u cores here)\n",
      ranks, static_cast<double>(events) / 1e6, repeats, std::thread::hardware_concurrency());
  std::printf(
      "| threads | %d ranks: s | speed-up | per thread | %d ranks: CPU s | 1 trace: s | speed-up | "
      "1 trace: CPU s |\n",
      ranks, ranks);
  std::printf("|---|---|---|---|---|---|---|---|\n");
  const double base_job = Median(job_s[0]), base_one = Median(one_s[0]);
  for (size_t i = 0; i < k; ++i) {
    const double js = Median(job_s[i]), os = Median(one_s[i]);
    // The job's CPU time against one thread's says whether the threads slowed each other (the
    // same work costing more CPU: clock, L3, memory bandwidth) or waited (the same CPU, more wall).
    std::printf("| %d | %.2f | %.2fx | %.2f | %.2f | %.2f | %.2fx | %.2f |\n", counts[i], js,
                base_job / js, base_job / js / counts[i], Median(job_cpu[i]), os, base_one / os,
                Median(one_cpu[i]));
  }
}

// Where the per-iteration series' memory goes, by family.
void PrintFootprint(const cuclimb::analysis::SeriesFootprint& f) {
  constexpr double kMiB = 1048576.0;
  std::printf("series store: %zu series of up to %zu slots, %.1f MiB (dense doubles: %.1f MiB)\n",
              f.series, f.slots, static_cast<double>(f.bytes) / kMiB,
              static_cast<double>(f.DenseBytes()) / kMiB);
  for (const auto& family : f.families) {
    std::printf("  %-14s %6zu series %9zu pages %9.1f MiB\n", family.name.c_str(), family.series,
                family.pages, static_cast<double>(family.bytes) / kMiB);
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t events = 20'000'000;
  int steps = 100;
  std::string path;
  bool keep = false, decode = true;
  int jobs = 1, scaling = 0, ranks = 8, repeats = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--events") && i + 1 < argc)
      events = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--trace") && i + 1 < argc)
      path = argv[++i];
    else if (!std::strcmp(argv[i], "--keep"))
      keep = true;
    else if (!std::strcmp(argv[i], "--no-decode"))
      decode = false;
    else if (!std::strcmp(argv[i], "--mix") && i + 1 < argc &&
             (!std::strcmp(argv[i + 1], "training") || !std::strcmp(argv[i + 1], "alloc")))
      g_alloc_mix = !std::strcmp(argv[++i], "alloc");
    else if (!std::strcmp(argv[i], "--jobs") && i + 1 < argc)
      jobs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--scaling") && i + 1 < argc)
      scaling = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--ranks") && i + 1 < argc)
      ranks = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
      repeats = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr,
                   "usage: analyze_bench [--events N] [--steps S] [--mix training|alloc] "
                   "[--trace PATH] [--keep] [--no-decode]\n"
                   "                     [--jobs N] [--scaling N] [--ranks R] [--repeats K]\n");
      return 2;
    }
  }
  const bool generate = path.empty() || access(path.c_str(), R_OK) != 0;
  if (path.empty())
    path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
           "/cuclimb_analyze_bench.trace";
  if (generate) {
    const auto t0 = Clock::now();
    int iterations = 0;
    uint64_t allocs_and_frees = 0;
    const uint64_t n = Generate(path, events, steps, &iterations, &allocs_and_frees);
    std::printf(
        "generated %llu events (%s mix: %d iterations of %d steps, %.0f%% allocations and "
        "frees) in %.1f s\n",
        static_cast<unsigned long long>(n), g_alloc_mix ? "allocation-heavy" : "training",
        iterations, steps, 100.0 * static_cast<double>(allocs_and_frees) / n, Seconds(t0));
  }
  struct stat st {};
  ::stat(path.c_str(), &st);
  // Decode alone, for comparison.
  uint64_t decoded = 0;
  if (decode || scaling > 0) {
    auto reader = cuclimb::trace::TraceReader::Open(path);
    if (!reader.ok()) {
      std::fprintf(stderr, "%s\n", std::string(reader.status().message()).c_str());
      return 1;
    }
    const auto t0 = Clock::now();
    Event ev{};
    uint64_t n = 0;
    while ((*reader)->Next(&ev)) ++n;
    const double s = Seconds(t0);
    std::printf("trace %s: %.0f MiB, %.1f bytes/event\n", path.c_str(), st.st_size / 1048576.0,
                static_cast<double>(st.st_size) / static_cast<double>(n));
    std::printf("decode only:      %llu events in %.2f s = %.1f M events/s\n",
                static_cast<unsigned long long>(n), s, static_cast<double>(n) / s / 1e6);
    decoded = n;
  }
  if (scaling > 0) {
    Scaling(path, decoded, scaling, ranks, repeats);
    if (generate && !keep)
      std::remove(path.c_str());
    return 0;
  }
  // The analysis, in a child so that its peak RSS is its own; it passes its event count back
  // through a shared page when the decode pass was skipped.
  auto* analysed = static_cast<uint64_t*>(
      mmap(nullptr, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (analysed == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  *analysed = 0;
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    const auto t0 = Clock::now();
    cuclimb::analysis::AnalyzeOptions options;
    options.jobs = jobs;
    cuclimb::analysis::SeriesFootprint footprint;
    options.footprint = [&footprint](int, const cuclimb::analysis::SeriesFootprint& f) {
      footprint = f;
    };
    auto report = cuclimb::analysis::Analyze({path}, options);
    const double s = Seconds(t0);
    if (!report.ok()) {
      std::fprintf(stderr, "%s\n", std::string(report.status().message()).c_str());
      _exit(1);
    }
    const uint64_t n = report->ranks[0].trace.events;
    *analysed = n;
    std::printf(
        "analyze (%d thread%s): %llu events in %.2f s = %.1f M events/s; %lld iterations, verdict "
        "%s, %zu accumulators%s\n",
        jobs, jobs > 1 ? "s" : "", static_cast<unsigned long long>(n), s,
        static_cast<double>(n) / s / 1e6, static_cast<long long>(report->iterations.count),
        report->verdict.c_str(), report->accumulators.size(),
        report->ranks[0].trace.repassed ? " (two passes)" : "");
    PrintFootprint(footprint);
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  std::printf("analyze CPU time: %.2f s = %.1f M events per CPU second; peak RSS %.0f MiB\n", cpu,
              static_cast<double>(decode ? decoded : *analysed) / cpu / 1e6, ru.ru_maxrss / 1024.0);
  if (generate && !keep)
    std::remove(path.c_str());
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
