// SPDX-License-Identifier: Apache-2.0
// Trace decoding speed (events/s on one core) and size (bytes per event) on a training-loop mix
// of launches, kernel records, allocations, frees, API calls and NVTX ranges.
#include <string>

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

}  // namespace
}  // namespace cuclimb::trace

BENCHMARK_MAIN();
