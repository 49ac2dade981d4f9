// SPDX-License-Identifier: Apache-2.0
// A program that plays the CUDA driver for libcuclimb.so on a machine without a GPU: it loads the
// library from CUDA_INJECTION64_PATH and calls InitializeInjection as cuInit does, then delivers
// driver and resource callbacks through the fake libcupti.so.13 (fake_cupti/), which only
// delivers the ids cuclimb enabled. Drives NVTX iterations through the real NVTX headers.
// cupti_lifecycle_test.cpp runs it in each mode and reads the trace and the fake's log.
//
//   cupti_host MODE [ARGS]
//   stdout: "state PHASE driver=ID,ID,... resource=ID,... sync=0|1 kernel=0|1 memory=0|1" lines.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <thread>

#include <dlfcn.h>
#include <unistd.h>

#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

namespace {

using DeliverFn = int (*)(CUpti_CallbackDomain, CUpti_CallbackId, const void*);
using EnabledFn = int (*)(CUpti_CallbackDomain, CUpti_CallbackId);
using ActivityOnFn = int (*)(CUpti_ActivityKind);

DeliverFn g_deliver = nullptr;
EnabledFn g_enabled = nullptr;
ActivityOnFn g_activity_on = nullptr;
void* g_cuclimb = nullptr;

template <typename F>
F Sym(void* lib, const char* name) {
  F f = lib != nullptr ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
  if (f == nullptr) {
    std::fprintf(stderr, "cupti_host: %s not found\n", name);
    std::exit(90);
  }
  return f;
}

// What cuInit does with CUDA_INJECTION64_PATH.
void InitializeLikeTheDriver() {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  g_cuclimb = path != nullptr ? dlopen(path, RTLD_NOW) : nullptr;
  if (g_cuclimb == nullptr) {
    std::fprintf(stderr, "cupti_host: cannot load %s: %s\n", path != nullptr ? path : "(unset)",
                 dlerror());
    std::exit(91);
  }
  Sym<int (*)()>(g_cuclimb, "InitializeInjection")();
  void* fake = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
  g_deliver = Sym<DeliverFn>(fake, "fake_cupti_deliver");
  g_enabled = Sym<EnabledFn>(fake, "fake_cupti_enabled");
  g_activity_on = Sym<ActivityOnFn>(fake, "fake_cupti_activity_on");
}

void PrintState(const char* phase) {
  std::string driver;
  for (CUpti_CallbackId id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id) {
    if (g_enabled(CUPTI_CB_DOMAIN_DRIVER_API, id) != 0)
      driver += (driver.empty() ? "" : ",") + std::to_string(id);
  }
  std::string resource;
  for (CUpti_CallbackId id = 1; id < CUPTI_CBID_RESOURCE_SIZE; ++id) {
    if (g_enabled(CUPTI_CB_DOMAIN_RESOURCE, id) != 0)
      resource += (resource.empty() ? "" : ",") + std::to_string(id);
  }
  std::printf("state %s driver=%s resource=%s sync=%d kernel=%d memory=%d\n", phase, driver.c_str(),
              resource.c_str(),
              g_enabled(CUPTI_CB_DOMAIN_SYNCHRONIZE, CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED),
              g_activity_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
              g_activity_on(CUPTI_ACTIVITY_KIND_MEMORY2));
  std::fflush(stdout);
}

// One driver call, ENTER then EXIT, as CUPTI delivers it.
template <typename P>
void DriverCall(CUpti_CallbackId cbid, P* params, uint64_t context, uint32_t corr) {
  uint64_t correlation_data = 0;
  CUresult ret = CUDA_SUCCESS;
  CUpti_CallbackData cb{};
  cb.callbackSite = CUPTI_API_ENTER;
  cb.functionName = "host";
  cb.functionParams = params;
  cb.functionReturnValue = &ret;
  cb.context = reinterpret_cast<CUcontext>(context);
  cb.correlationData = &correlation_data;
  cb.correlationId = corr;
  g_deliver(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cb);
  cb.callbackSite = CUPTI_API_EXIT;
  g_deliver(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cb);
}

void ContextCreated(uint64_t context) {
  CUpti_ResourceData data{};
  data.context = reinterpret_cast<CUcontext>(context);
  g_deliver(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &data);
}

void Alloc(uint64_t address, size_t size, CUstream stream, uint32_t corr) {
  CUdeviceptr out = address;
  cuMemAllocAsync_params p{&out, size, stream};
  DriverCall(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, &p, 0x11, corr);
}

void CaptureBegin(CUstream stream) {
  cuStreamBeginCapture_v2_params p{stream, CU_STREAM_CAPTURE_MODE_GLOBAL};
  DriverCall(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, &p, 0x11, 0);
}

void CaptureEnd(CUstream stream) {
  CUgraph graph = nullptr;
  cuStreamEndCapture_params p{stream, &graph};
  DriverCall(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, &p, 0x11, 0);
}

void StreamCreated(uint64_t context, CUstream stream) {
  CUpti_ResourceData data{};
  data.context = reinterpret_cast<CUcontext>(context);
  data.resourceHandle.stream = stream;
  g_deliver(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_STREAM_CREATED, &data);
}

// A launch as NCCL makes it: cuLaunchKernelEx with the kernel's symbol, on NCCL's own stream.
void LaunchEx(const char* symbol, CUstream stream, uint32_t corr) {
  CUlaunchConfig config{};
  config.gridDimX = 4;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 512;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = stream;
  cuLaunchKernelEx_params p{&config, reinterpret_cast<CUfunction>(0xf00d), nullptr, nullptr};
  uint64_t correlation_data = 0;
  CUresult ret = CUDA_SUCCESS;
  CUpti_CallbackData cb{};
  cb.functionName = "cuLaunchKernelEx";
  cb.functionParams = &p;
  cb.functionReturnValue = &ret;
  cb.symbolName = symbol;
  cb.context = reinterpret_cast<CUcontext>(0x11);
  cb.correlationData = &correlation_data;
  cb.correlationId = corr;
  cb.callbackSite = CUPTI_API_ENTER;
  g_deliver(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &cb);
  cb.callbackSite = CUPTI_API_EXIT;
  g_deliver(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &cb);
}

void StreamWaitEvent(CUstream stream, CUevent event) {
  cuStreamWaitEvent_params p{stream, event, 0};
  DriverCall(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, &p, 0x11, 0);
}

template <typename F>
F CApi(const char* name) {
  return Sym<F>(g_cuclimb, name);
}

void Sleep(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

void Iterations(int count, int ms) {
  for (int i = 1; i <= count; ++i) {
    nvtxRangePushA("iteration");
    Sleep(ms);
    nvtxRangePop();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "states";
  InitializeLikeTheDriver();
  if (mode == "states") {
    // Which callbacks and activity kinds are on while recording, paused and resumed.
    PrintState("recording");
    CApi<void (*)()>("cuclimb_pause")();
    PrintState("paused");
    CApi<void (*)()>("cuclimb_resume")();
    PrintState("resumed");
    return 0;
  }
  if (mode == "capture-while-paused") {
    // A capture that begins while paused is still known when recording resumes: allocations on
    // its stream are graph allocations.
    auto* stream = reinterpret_cast<CUstream>(0x5150);
    ContextCreated(0x11);
    Alloc(0xa000, 256, stream, 1);
    CApi<void (*)()>("cuclimb_pause")();
    Alloc(0xb000, 256, stream, 2);  // not delivered: allocation ids are off while paused
    CaptureBegin(stream);
    CApi<void (*)()>("cuclimb_resume")();
    Alloc(0xc000, 256, stream, 3);
    CaptureEnd(stream);
    Alloc(0xd000, 256, stream, 4);
    return 0;
  }
  if (mode == "iterations") {
    const int count = argc > 2 ? std::atoi(argv[2]) : 40;
    const int ms = argc > 3 ? std::atoi(argv[3]) : 15;
    Iterations(count, ms);
    return 0;
  }
  if (mode == "collectives") {
    // What a DDP step looks like to the driver: NCCL creates its own stream, the user's stream
    // waits for it, and NCCL launches its kernels on it from the thread that calls the
    // collective (not the main thread here, as with a DDP reducer's hook).
    auto* user = reinterpret_cast<CUstream>(0x5150);
    auto* nccl = reinterpret_cast<CUstream>(0x7001);
    ContextCreated(0x11);
    StreamCreated(0x11, nccl);
    std::thread reducer([nccl] {
      for (uint32_t i = 0; i < 3; ++i)
        LaunchEx("ncclDevKernel_AllReduce_Sum_f32_RING_LL", nccl, 100 + i);
    });
    reducer.join();
    StreamWaitEvent(user, reinterpret_cast<CUevent>(0xe7));
    return 0;
  }
  if (mode == "fork") {
    // The child inherits the subscription but must never call CUPTI: not even the atexit flush.
    Alloc(0xa000, 256, nullptr, 1);
    const pid_t child = fork();
    if (child == 0) {
      Alloc(0xb000, 256, nullptr, 2);
      std::exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("child %d exited %d\n", static_cast<int>(child),
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    Alloc(0xc000, 256, nullptr, 3);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }
  std::fprintf(stderr, "cupti_host: unknown mode %s\n", mode.c_str());
  return 2;
}
