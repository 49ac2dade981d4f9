// SPDX-License-Identifier: Apache-2.0
// Hot-path cost of the recorder: Record() of a typical allocation event, InternString() of a
// known name, InternStack() of a known 16-frame stack; and the writer's encode throughput.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>

#include <benchmark/benchmark.h>

#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

constexpr int64_t kEventsPerRun = 1 << 20;

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
    RecorderOptions o;
    o.path = path.c_str();
    o.ring_kib = 512 * 1024;  // holds a whole run: measure the append, not drops
    o.flush_interval_ms = 50;
    return StartRecorder(o);
  }();
  if (!started) std::abort();
}

void BM_RecordAlloc(benchmark::State& state) {
  StartOnce();
  uint64_t i = 0;
  for (auto _ : state) {
    format::Event ev = SampleAlloc(i++);
    benchmark::DoNotOptimize(Record(ev));
  }
  state.SetItemsProcessed(state.iterations());
  // Let the writer drain before the next repetition so the ring never fills.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
}
BENCHMARK(BM_RecordAlloc)->Iterations(kEventsPerRun)->Repetitions(9)->ReportAggregatesOnly(true);

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
