// SPDX-License-Identifier: Apache-2.0
// Hot-path cost of the recorder: Record() of a typical allocation event, InternString() of a
// known name, InternStack() of a known 16-frame stack; and the writer's encode throughput.
#include <cstdlib>
#include <string>
#include <thread>

#include <unistd.h>

#include <benchmark/benchmark.h>

#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

// Bursts shorter than half the default 4 MiB ring (32768 events), so the half-full wake does not
// call the writer in; between bursts, outside the timing, the ring is drained synchronously. The
// writer thread stays asleep during a burst, so the figure is the application thread's own cost,
// not the writer's competing for the same core.
constexpr int kBurst = 16000;

format::Event SampleAlloc(uint64_t i) {
  format::Event ev = format::MakeEvent(format::EventType::kAlloc);
  ev.ts = static_cast<int64_t>(i) * 1000;
  ev.tid = 1;
  ev.api = 1;
  ev.kind = static_cast<uint8_t>(format::MemoryKind::kPool);
  ev.addr = 0x7f0000000000ull + i * 512;
  ev.size = 512;
  ev.stream = 0x10;
  ev.device = 0;
  return ev;
}

void StartOnce() {
  static const bool started = [] {
    static std::string path = "/tmp/cuclimb-bench-" + std::to_string(getpid()) + ".trace";
    RecorderOptions o;  // defaults: the ring and flush period the interposer uses
    o.path = path.c_str();
    o.flush_interval_ms = 60'000;
    return StartRecorder(o);
  }();
  if (!started)
    std::abort();
}

// Time per Record() of an allocation event built by the caller, the way a CUPTI callback does.
void BM_RecordAlloc(benchmark::State& state) {
  StartOnce();
  uint64_t i = 0;
  uint64_t dropped = 0;
  for (auto _ : state) {
    for (int k = 0; k < kBurst; ++k) dropped += Record(SampleAlloc(i++)) ? 0 : 1;
    state.PauseTiming();
    FlushRecorder();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kBurst);
  state.counters["ns_per_event"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kBurst),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["dropped"] = static_cast<double>(dropped);
}
BENCHMARK(BM_RecordAlloc)
    ->Iterations(64)
    ->Repetitions(9)
    ->ReportAggregatesOnly(true)
    ->UseRealTime();

void BM_InternKnownString(benchmark::State& state) {
  StartOnce();
  InternString("cuMemAllocAsync");
  for (auto _ : state) benchmark::DoNotOptimize(InternString("cuMemAllocAsync"));
}
BENCHMARK(BM_InternKnownString)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_InternKnownStack16(benchmark::State& state) {
  StartOnce();
  uint64_t frames[16];
  for (int i = 0; i < 16; ++i) frames[i] = format::PcFrame(0x55d0a0000000ull + i * 0x1234);
  InternStack(frames, 16);
  for (auto _ : state) benchmark::DoNotOptimize(InternStack(frames, 16));
}
BENCHMARK(BM_InternKnownStack16)->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace
}  // namespace cuclimb::interposer

BENCHMARK_MAIN();
