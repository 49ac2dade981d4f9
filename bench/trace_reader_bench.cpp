// SPDX-License-Identifier: Apache-2.0
// Trace decoding speed (events/s on one core) and size (bytes per event) on a training-loop mix
// of launches, kernel records, allocations, frees, API calls and NVTX ranges.
//
//   trace_reader_bench [google benchmark flags]
//   trace_reader_bench --file TRACE [--repeat N] [--digest]
//
// The second form decodes a trace file (analyze_bench --keep writes one of either mix) the way the
// analysis reads it, 256 events per Read(), and prints events per CPU second (median of N runs):
// the figure of decoding alone, and what `valgrind --tool=callgrind` divides by for
// instructions per event. --digest adds a hash of every decoded event's bytes, to compare
// decoders (outside the timed figure's meaning: it costs more than decoding).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <time.h>

#include <benchmark/benchmark.h>

#include "random_trace.h"
#include "trace/reader.h"

namespace cuclimb::trace {
namespace {

const std::string& TrainingTrace(size_t* events) {
  static size_t count = 0;
  static const std::string bytes = [] {
    testing::TrainingLoopShape shape;
    shape.iterations = 20000;  // ~2 M events
    testing::TraceBuilder b = testing::TrainingLoopTrace(shape);
    count = b.events().size();
    return b.ToBinary(true, 3, 512u << 10);
  }();
  *events = count;
  return bytes;
}

void BM_DecodeBinary(benchmark::State& state) {
  size_t events = 0;
  const std::string& bytes = TrainingTrace(&events);
  for (auto _ : state) {
    auto reader = TraceReader::FromBuffer(bytes);
    Event ev{};
    size_t n = 0;
    while ((*reader)->Next(&ev)) ++n;
    if (n != events)
      state.SkipWithError("event count mismatch");
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(events));
  state.counters["bytes_per_event"] = static_cast<double>(bytes.size()) / events;
}
BENCHMARK(BM_DecodeBinary)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

void BM_EncodeBinary(benchmark::State& state) {
  testing::TrainingLoopShape shape;
  shape.iterations = 5000;
  testing::TraceBuilder b = testing::TrainingLoopTrace(shape);
  for (auto _ : state) benchmark::DoNotOptimize(b.ToBinary(true, 3, 512u << 10));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(b.events().size()));
}
BENCHMARK(BM_EncodeBinary)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(3)
    ->ReportAggregatesOnly(true);

double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Decodes `path` `repeat` times; prints the event count and the median events per CPU second.
int DecodeFile(const std::string& path, int repeat, bool digest) {
  std::vector<Event> batch(256);  // as analysis/analyze.cpp reads
  std::vector<double> seconds;
  uint64_t events = 0;
  for (int r = 0; r < repeat; ++r) {
    auto reader = TraceReader::Open(path);
    if (!reader.ok()) {
      std::fprintf(stderr, "%s\n", std::string(reader.status().message()).c_str());
      return 3;
    }
    const double t0 = CpuSeconds();
    uint64_t n = 0;
    uint64_t check = 0;                  // touches every event, as a consumer would
    uint64_t hash = 0xcbf29ce484222325;  // FNV-1a over the events' bytes
    while (const size_t k = (*reader)->Read(batch.data(), batch.size())) {
      n += k;
      for (size_t i = 0; i < k; ++i) check += static_cast<uint64_t>(batch[i].ts) ^ batch[i].addr;
      if (digest) {
        const auto* p = reinterpret_cast<const unsigned char*>(batch.data());
        for (size_t b = 0; b < k * sizeof(Event); ++b) hash = (hash ^ p[b]) * 0x100000001b3;
      }
    }
    seconds.push_back(CpuSeconds() - t0);
    benchmark::DoNotOptimize(check);
    if (digest && r == 0)
      std::printf("%s: digest %016llx\n", path.c_str(), static_cast<unsigned long long>(hash));
    if ((*reader)->status().reason != StopReason::kComplete) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), (*reader)->status().message.c_str());
      return 3;
    }
    events = n;
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  std::printf("%s: %llu events, decode %.3f s CPU (median of %d) = %.1f M events per CPU second\n",
              path.c_str(), static_cast<unsigned long long>(events), median, repeat,
              static_cast<double>(events) / median / 1e6);
  return 0;
}

}  // namespace
}  // namespace cuclimb::trace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--file") == 0) {
    int repeat = 1;
    bool digest = false;
    for (int i = 3; i < argc; ++i) {
      if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
        repeat = std::max(1, std::atoi(argv[++i]));
      } else if (std::strcmp(argv[i], "--digest") == 0) {
        digest = true;
      } else {
        std::fprintf(stderr, "usage: trace_reader_bench --file TRACE [--repeat N] [--digest]\n");
        return 2;
      }
    }
    return cuclimb::trace::DecodeFile(argv[2], repeat, digest);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
