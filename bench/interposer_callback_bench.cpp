// SPDX-License-Identifier: Apache-2.0
// Our own work per hooked call, without a GPU: the CUPTI switchboard (ENTER + EXIT of one driver
// call, synthesized) and the NVTX push/pop hooks, with the recorder running. CUPTI's own cost of
// delivering a callback is not included (bench/interposer_step_bench.cu measures it on a GPU).
#include <cstdio>
#include <string>

#include <unistd.h>

#include <benchmark/benchmark.h>

#include "interposer/callbacks.h"
#include "interposer/clock.h"
#include "interposer/state.h"
#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

void StartOnce() {
  static bool started = [] {
    static std::string path = "/tmp/cuclimb-callback-bench-" + std::to_string(getpid()) + ".trace";
    RecorderOptions options;
    options.path = path.c_str();
    options.base_clock_ns = ClockNs();
    SetBaseNs(options.base_clock_ns);
    const bool ok = StartRecorder(options);
    InternApiNames();
    g_capture_on.store(true);
    unlink(path.c_str());  // the writer keeps its descriptor
    return ok;
  }();
  (void)started;
}

template <typename P>
void Deliver(CUpti_CallbackId cbid, P* params, const char* symbol = nullptr) {
  uint64_t correlation_data = 0;
  CUresult ret = CUDA_SUCCESS;
  CUpti_CallbackData cb{};
  cb.callbackSite = CUPTI_API_ENTER;
  cb.functionParams = params;
  cb.functionReturnValue = &ret;
  cb.symbolName = symbol;
  cb.correlationData = &correlation_data;
  cb.correlationId = 1;
  OnCuptiCallback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cb);
  cb.callbackSite = CUPTI_API_EXIT;
  OnCuptiCallback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cb);
}

void BM_AllocAsyncCallback(benchmark::State& state) {
  StartOnce();
  CUdeviceptr p = 0x1000;
  cuMemAllocAsync_params params{&p, 4096, reinterpret_cast<CUstream>(0x55)};
  for (auto _ : state) {
    Deliver(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, &params);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_AllocAsyncCallback)->Threads(1)->Threads(4);

void BM_LaunchCallback(benchmark::State& state) {
  StartOnce();
  cuLaunchKernel_params params{
      reinterpret_cast<CUfunction>(0xf00), 2,       1,      1, 128, 1, 1, 0,
      reinterpret_cast<CUstream>(0x55),    nullptr, nullptr};
  for (auto _ : state) {
    Deliver(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &params, "_Z6kernelPfS_i");
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_LaunchCallback)->Threads(1)->Threads(4);

void BM_AllocWithFramePointerStack(benchmark::State& state) {
  StartOnce();
  g_config.stacks = StackMode::kFramePointer;
  CUdeviceptr p = 0x1000;
  cuMemAllocAsync_params params{&p, 4096, reinterpret_cast<CUstream>(0x55)};
  for (auto _ : state) Deliver(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, &params);
  g_config.stacks = StackMode::kOff;
}
BENCHMARK(BM_AllocWithFramePointerStack);

void BM_AllocWithUnwindStack(benchmark::State& state) {
  StartOnce();
  g_config.stacks = StackMode::kUnwind;
  CUdeviceptr p = 0x1000;
  cuMemAllocAsync_params params{&p, 4096, reinterpret_cast<CUstream>(0x55)};
  for (auto _ : state) Deliver(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, &params);
  g_config.stacks = StackMode::kOff;
}
BENCHMARK(BM_AllocWithUnwindStack);

}  // namespace
}  // namespace cuclimb::interposer

BENCHMARK_MAIN();
