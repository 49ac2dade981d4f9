// SPDX-License-Identifier: Apache-2.0
// End-to-end speed and memory of `cuclimb analyze` on a generated training-loop trace: events/s
// on one core (decode + analysis; wall and CPU time, since a shared machine inflates wall time),
// the reader alone for comparison, and peak RSS of the analysis (measured in a child process, so
// generation does not count).
//
//   analyze_bench [--events N] [--steps S] [--trace PATH] [--keep]
// Defaults: 20 M events, 100 inner steps per iteration (≈ 4 000 events per iteration). The
// figures in docs/performance.md ("Analyzer") come from `--events 100000000`.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

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

cuclimb::testing::SimOptions Shape(int steps) {
  cuclimb::testing::SimOptions o;
  o.steps = steps;
  o.kernels_per_step = 8;
  o.noise = 0.05;
  o.leak_device = 2;  // the cubecl signature: a few 512 B allocations retained per iteration
  o.host_ns_per_leaked = 2;
  return o;
}

// Writes the simulated trace to path; returns the number of events.
uint64_t Generate(const std::string& path, uint64_t events, int steps, int* iterations) {
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
    (void)writer.Add(e, strings, stacks);
    last = std::max(last, e.ts);
  };
  const uint64_t n = cuclimb::testing::Simulate(o, sink);
  (void)writer.Finish(last, 0, "");
  std::fclose(f);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t events = 20'000'000;
  int steps = 100;
  std::string path;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--events") && i + 1 < argc)
      events = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--trace") && i + 1 < argc)
      path = argv[++i];
    else if (!std::strcmp(argv[i], "--keep"))
      keep = true;
    else {
      std::fprintf(stderr,
                   "usage: analyze_bench [--events N] [--steps S] [--trace PATH] [--keep]\n");
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
    const uint64_t n = Generate(path, events, steps, &iterations);
    std::printf("generated %llu events (%d iterations of %d steps) in %.1f s\n",
                static_cast<unsigned long long>(n), iterations, steps, Seconds(t0));
  }
  struct stat st {};
  ::stat(path.c_str(), &st);
  // Decode alone, for comparison.
  uint64_t decoded = 0;
  {
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
  // The analysis, in a child so that its peak RSS is its own.
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    const auto t0 = Clock::now();
    auto report = cuclimb::analysis::Analyze({path}, {});
    const double s = Seconds(t0);
    if (!report.ok()) {
      std::fprintf(stderr, "%s\n", std::string(report.status().message()).c_str());
      _exit(1);
    }
    const uint64_t n = report->ranks[0].trace.events;
    std::printf(
        "analyze (1 core): %llu events in %.2f s = %.1f M events/s; %lld iterations, verdict %s, "
        "%zu accumulators%s\n",
        static_cast<unsigned long long>(n), s, static_cast<double>(n) / s / 1e6,
        static_cast<long long>(report->iterations.count), report->verdict.c_str(),
        report->accumulators.size(), report->ranks[0].trace.repassed ? " (two passes)" : "");
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  const double cpu = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                     static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  std::printf("analyze CPU time: %.2f s = %.1f M events per CPU second; peak RSS %.0f MiB\n", cpu,
              static_cast<double>(decoded) / cpu / 1e6, ru.ru_maxrss / 1024.0);
  if (generate && !keep)
    std::remove(path.c_str());
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
