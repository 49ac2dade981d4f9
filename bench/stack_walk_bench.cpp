// SPDX-License-Identifier: Apache-2.0
// Nanoseconds per stack, without a GPU: the application (frame pointers, 12 frames deep) calls a
// fake CUDA library that calls back into a probe playing libcuclimb.so (tests/interposer/stacks),
// which collects the stack with `fp` or `unwind`. The library is built with frame pointers, or
// without them and with garbage in the frame-pointer register (as libcuda); "direct" is a call
// straight from the application (an NVTX hook), where `fp` needs no CFI at all.
#include <cstdint>

#include <benchmark/benchmark.h>

#include "fake_cuda.h"
#include "stack_probe.h"

namespace {

constexpr int kModeFp = 1;
constexpr int kModeUnwind = 2;
constexpr int kAppFrames = 12;

using Call = void (*)(int, FakeCallback, void*);

void CallDirect(int, FakeCallback cb, void* arg) {
  cb(arg);
}

__attribute__((noinline)) void App(int depth, Call call, ProbeRequest* request) {
  if (depth > 0) {
    App(depth - 1, call, request);
  } else {
    call(3, probe_callback, request);
  }
  benchmark::DoNotOptimize(request->count);
}

void Run(benchmark::State& state, int mode, Call call) {
  probe_refresh();
  ProbeRequest request;
  request.mode = mode;
  size_t frames = 0;
  for (auto _ : state) {
    request.count = 0;
    App(kAppFrames, call, &request);
    frames = request.count;
  }
  state.counters["frames"] = static_cast<double>(frames);
}

void BM_FpThroughCudaWithoutFramePointers(benchmark::State& s) {
  Run(s, kModeFp, fake_nofp_call);
}
void BM_FpThroughCudaWithFramePointers(benchmark::State& s) {
  Run(s, kModeFp, fake_fp_call);
}
void BM_FpDirect(benchmark::State& s) {
  Run(s, kModeFp, CallDirect);
}
void BM_UnwindThroughCudaWithoutFramePointers(benchmark::State& s) {
  Run(s, kModeUnwind, fake_nofp_call);
}
void BM_UnwindThroughCudaWithFramePointers(benchmark::State& s) {
  Run(s, kModeUnwind, fake_fp_call);
}
void BM_UnwindDirect(benchmark::State& s) {
  Run(s, kModeUnwind, CallDirect);
}

BENCHMARK(BM_FpThroughCudaWithoutFramePointers);
BENCHMARK(BM_FpThroughCudaWithFramePointers);
BENCHMARK(BM_FpDirect);
BENCHMARK(BM_UnwindThroughCudaWithoutFramePointers);
BENCHMARK(BM_UnwindThroughCudaWithFramePointers);
BENCHMARK(BM_UnwindDirect);

}  // namespace

BENCHMARK_MAIN();
