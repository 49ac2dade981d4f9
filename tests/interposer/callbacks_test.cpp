// SPDX-License-Identifier: Apache-2.0
// Translation of CUPTI callback data and activity records into trace events, fed with
// synthesized CUPTI structures (no GPU, no driver): the switchboard of callbacks.cpp and the
// record decoder of activity.cpp, end to end through the recorder and the analyzer's reader.
// Each scenario runs in a forked child because the recorder is a process-wide singleton.
#include "interposer/callbacks.h"

#include <cstring>
#include <string>
#include <sys/wait.h>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "interposer/activity.h"
#include "interposer/capture_state.h"
#include "interposer/clock.h"
#include "interposer/reentry_guard.h"
#include "interposer/state.h"
#include "interposer/writer/recorder.h"
#include "test_support.h"

namespace cuclimb::interposer {
namespace {

using format::Event;
using format::EventType;
using format::MemoryKind;
using testing::ReadTrace;
using testing::Trace;

// Runs body with a started recorder in a child process and reads the trace back. body's gtest
// assertions are reported through the child's exit status.
template <typename Fn>
Trace Capture(const std::string& name, Fn body) {
  const std::string path = testing::TempDir() + "/" + name + ".trace";
  const pid_t pid = fork();
  if (pid == 0) {
    ResetStateForTesting();
    RecorderOptions options;
    options.path = path.c_str();
    options.base_clock_ns = ClockNs();
    SetBaseNs(options.base_clock_ns);
    if (!StartRecorder(options))
      _exit(10);
    InternApiNames();
    g_capture_on.store(true);
    body();
    StopRecorder(nullptr);
    _exit(::testing::Test::HasFailure() ? 11 : 0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "child failed: status " << status << " (10: recorder, 11: assertion in the child)";
  return ReadTrace(path);
}

// Delivers ENTER and EXIT of one driver call, as CUPTI does.
template <typename P>
void Call(CUpti_CallbackId cbid, P* params, CUresult result = CUDA_SUCCESS,
          const char* symbol = nullptr, uint64_t context = 0, uint32_t corr = 7) {
  uint64_t correlation_data = 0;
  CUresult ret = result;
  CUpti_CallbackData cb{};
  cb.callbackSite = CUPTI_API_ENTER;
  cb.functionName = "synthetic";
  cb.functionParams = params;
  cb.functionReturnValue = &ret;
  cb.symbolName = symbol;
  cb.context = reinterpret_cast<CUcontext>(context);
  cb.correlationData = &correlation_data;
  cb.correlationId = corr;
  OnCuptiCallback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cb);
  cb.callbackSite = CUPTI_API_EXIT;
  OnCuptiCallback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, cbid, &cb);
}

void Resource(CUpti_CallbackId cbid, uint64_t context, void* descriptor, uint64_t stream = 0) {
  CUpti_ResourceData data{};
  data.context = reinterpret_cast<CUcontext>(context);
  data.resourceHandle.stream = reinterpret_cast<CUstream>(stream);
  data.resourceDescriptor = descriptor;
  OnCuptiCallback(nullptr, CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

template <typename T>
T* Ptr(uint64_t v) {
  return reinterpret_cast<T*>(v);
}

TEST(CallbacksTest, AllocationsAndFrees) {
  const Trace t = Capture("alloc", [] {
    CUdeviceptr dptr = 0x1000;
    cuMemAlloc_v2_params alloc{&dptr, 4096};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &alloc, CUDA_SUCCESS, nullptr, 0, 11);
    size_t pitch = 512;
    CUdeviceptr pitched = 0x2000;
    cuMemAllocPitch_v2_params alloc_pitch{&pitched, &pitch, 500, 4, 4};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2, &alloc_pitch);
    CUdeviceptr managed = 0x3000;
    cuMemAllocManaged_params alloc_managed{&managed, 100, 1};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, &alloc_managed);
    void* host = Ptr<void>(0x4000);
    cuMemHostAlloc_params host_alloc{&host, 64, 0};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, &host_alloc);
    cuMemHostRegister_v2_params reg{Ptr<void>(0x5000), 8192, 0};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemHostRegister_v2, &reg);
    CUdeviceptr async = 0x6000;
    cuMemAllocAsync_params alloc_async{&async, 256, Ptr<CUstream_st>(0x55)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, &alloc_async);
    CUdeviceptr pooled = 0x7000;
    cuMemAllocFromPoolAsync_ptsz_params from_pool{&pooled, 512, Ptr<CUmemPoolHandle_st>(0x77),
                                                  Ptr<CUstream_st>(0x56)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz, &from_pool);
    EXPECT_EQ(g_pools.size(), 1u);
    EXPECT_EQ(g_pools.PoolAt(0), 0x77u);

    cuMemFree_v2_params free_null{0};  // cudaFree(0): not an event
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &free_null);
    cuMemFree_v2_params free_device{0x1000};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, &free_device);
    cuMemFreeAsync_params free_async{0x6000, Ptr<CUstream_st>(0x55)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync, &free_async);
    cuMemFreeHost_params free_host{Ptr<void>(0x4000)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemFreeHost, &free_host);
    cuMemHostUnregister_params unreg{Ptr<void>(0x5000)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemHostUnregister, &unreg);
    CUdeviceptr failed = 0xdead;
    cuMemAlloc_v2_params oom{&failed, 1ull << 40};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &oom, CUDA_ERROR_OUT_OF_MEMORY);
  });
  const std::vector<Event> allocs = t.Of(EventType::kAlloc);
  ASSERT_EQ(allocs.size(), 7u);
  struct Want {
    const char* api;
    MemoryKind kind;
    uint64_t addr;
    uint64_t size;
    uint64_t stream;
    uint64_t pool;
  };
  const Want want[] = {
      {"cuMemAlloc_v2", MemoryKind::kDevice, 0x1000, 4096, 0, 0},
      {"cuMemAllocPitch_v2", MemoryKind::kDevice, 0x2000, 2048, 0, 0},
      {"cuMemAllocManaged", MemoryKind::kManaged, 0x3000, 100, 0, 0},
      {"cuMemHostAlloc", MemoryKind::kPinned, 0x4000, 64, 0, 0},
      {"cuMemHostRegister_v2", MemoryKind::kHostRegistered, 0x5000, 8192, 0, 0},
      {"cuMemAllocAsync", MemoryKind::kPool, 0x6000, 256, 0x55, 0},
      {"cuMemAllocFromPoolAsync_ptsz", MemoryKind::kPool, 0x7000, 512, 0x56, 0x77},
  };
  for (size_t i = 0; i < allocs.size(); ++i) {
    SCOPED_TRACE(want[i].api);
    EXPECT_EQ(t.Str(allocs[i].api), want[i].api);
    EXPECT_EQ(allocs[i].kind, static_cast<uint8_t>(want[i].kind));
    EXPECT_EQ(allocs[i].addr, want[i].addr);
    EXPECT_EQ(allocs[i].size, want[i].size);
    EXPECT_EQ(allocs[i].stream, want[i].stream);
    EXPECT_EQ(allocs[i].aux, want[i].pool);
    EXPECT_GE(allocs[i].dur, 0);
    EXPECT_GT(allocs[i].tid, 0u);
  }
  EXPECT_EQ(allocs[0].corr, 11u);
  const std::vector<Event> frees = t.Of(EventType::kFree);
  ASSERT_EQ(frees.size(), 4u);
  EXPECT_EQ(frees[0].addr, 0x1000u);
  EXPECT_EQ(t.Str(frees[0].api), "cuMemFree_v2");
  EXPECT_EQ(frees[1].addr, 0x6000u);
  EXPECT_EQ(frees[1].stream, 0x55u);
  EXPECT_EQ(frees[1].kind, static_cast<uint8_t>(MemoryKind::kPool));
  EXPECT_EQ(frees[2].kind, static_cast<uint8_t>(MemoryKind::kPinned));
  EXPECT_EQ(frees[3].kind, static_cast<uint8_t>(MemoryKind::kHostRegistered));
  // The failed allocation: an api event carrying the CUresult, no alloc.
  const std::vector<Event> apis = t.Of(EventType::kApi);
  ASSERT_EQ(apis.size(), 1u);
  EXPECT_EQ(t.Str(apis[0].api), "cuMemAlloc_v2");
  EXPECT_EQ(apis[0].value, CUDA_ERROR_OUT_OF_MEMORY);
}

TEST(CallbacksTest, VirtualMemoryManagementAndPools) {
  const Trace t = Capture("vmm", [] {
    CUdeviceptr va = 0x10000000;
    cuMemAddressReserve_params reserve{&va, 1 << 21, 0, 0, 0};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAddressReserve, &reserve);
    CUmemGenericAllocationHandle handle = 0xabc;
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 2;
    cuMemCreate_params create{&handle, 1 << 21, &prop, 0};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemCreate, &create);
    cuMemMap_params map{0x10000000, 1 << 21, 0, 0xabc, 0};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemMap, &map);
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 2;
    cuMemSetAccess_params set_access{0x10000000, 1 << 21, &access, 1};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemSetAccess, &set_access);
    cuMemUnmap_params unmap{0x10000000, 1 << 21};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemUnmap, &unmap);
    cuMemRelease_params release{0xabc};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemRelease, &release);
    cuMemAddressFree_params free_va{0x10000000, 1 << 21};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAddressFree, &free_va);

    CUmemoryPool pool = Ptr<CUmemPoolHandle_st>(0x900);
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 1;
    cuMemPoolCreate_params pool_create{&pool, &props};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemPoolCreate, &pool_create);
    cuuint64_t threshold = 1ull << 30;
    cuMemPoolSetAttribute_params set_attr{pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemPoolSetAttribute, &set_attr);
    int reuse = 1;
    cuMemPoolSetAttribute_params set_int{pool, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &reuse};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemPoolSetAttribute, &set_int);
    cuMemPoolTrimTo_params trim{pool, 4096};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemPoolTrimTo, &trim);
    EXPECT_EQ(g_pools.size(), 1u);
    EXPECT_EQ(g_pools.DeviceAt(0), 1);
    cuMemPoolDestroy_params destroy{pool};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemPoolDestroy, &destroy);
    EXPECT_FALSE(g_pools.BeginQuery(0)) << "a destroyed pool must not be queried";
  });
  const std::vector<Event> vmm = t.Of(EventType::kVmm);
  ASSERT_EQ(vmm.size(), 7u);
  using format::VmmOp;
  const VmmOp ops[] = {VmmOp::kReserve, VmmOp::kCreate,  VmmOp::kMap,   VmmOp::kSetAccess,
                       VmmOp::kUnmap,   VmmOp::kRelease, VmmOp::kFreeVa};
  for (size_t i = 0; i < vmm.size(); ++i) EXPECT_EQ(vmm[i].kind, static_cast<uint8_t>(ops[i]));
  EXPECT_EQ(vmm[0].addr, 0x10000000u);
  EXPECT_EQ(vmm[0].size, 1u << 21);
  EXPECT_EQ(vmm[1].handle, 0xabcu);
  EXPECT_EQ(vmm[1].device, 2);
  EXPECT_EQ(vmm[2].handle, 0xabcu);
  EXPECT_EQ(vmm[2].addr, 0x10000000u);
  EXPECT_EQ(vmm[3].device, 2);
  EXPECT_EQ(vmm[5].handle, 0xabcu);

  const std::vector<Event> creates = t.Of(EventType::kCreate);
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(creates[0].kind, static_cast<uint8_t>(format::HandleType::kPool));
  EXPECT_EQ(creates[0].handle, 0x900u);
  EXPECT_EQ(creates[0].device, 1);
  const std::vector<Event> attrs = t.Of(EventType::kPoolAttr);
  ASSERT_EQ(attrs.size(), 2u);
  EXPECT_EQ(t.Str(attrs[0].name), "release_threshold");
  EXPECT_EQ(attrs[0].value, 1ll << 30);
  EXPECT_EQ(t.Str(attrs[1].name), "reuse_allow_opportunistic");
  EXPECT_EQ(attrs[1].value, 1);
  ASSERT_EQ(t.Count(EventType::kPoolTrim), 1u);
  EXPECT_EQ(t.Of(EventType::kPoolTrim)[0].size, 4096u);
  ASSERT_EQ(t.Count(EventType::kDestroy), 1u);
}

TEST(CallbacksTest, LaunchesSynchronizationsAndCopies) {
  const Trace t = Capture("launch", [] {
    cuLaunchKernel_params launch{Ptr<CUfunc_st>(0xf00),  2,       3,      4, 32, 1, 1, 128,
                                 Ptr<CUstream_st>(0x55), nullptr, nullptr};
    std::string name = "_Z6kernelPf";
    Call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &launch, CUDA_SUCCESS, name.c_str());
    std::string other = "ignored-second-time";  // cached by CUfunction
    Call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &launch, CUDA_SUCCESS, other.c_str());
    CUlaunchConfig config{};
    config.gridDimX = 8;
    config.gridDimY = 1;
    config.gridDimZ = 1;
    config.blockDimX = 256;
    config.blockDimY = 1;
    config.blockDimZ = 1;
    config.sharedMemBytes = 0;
    config.hStream = Ptr<CUstream_st>(0x66);
    cuLaunchKernelEx_params launch_ex{&config, Ptr<CUfunc_st>(0xf10), nullptr, nullptr};
    Call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, &launch_ex, CUDA_SUCCESS, "exkernel");
    cuGraphLaunch_params graph{Ptr<CUgraphExec_st>(0x123), Ptr<CUstream_st>(0x55)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, &graph);

    cuStreamSynchronize_params sync_stream{Ptr<CUstream_st>(0x55)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, &sync_stream);
    cuEventSynchronize_params sync_event{Ptr<CUevent_st>(0xe1)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuEventSynchronize, &sync_event);
    Call<void>(CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, nullptr);
    cuStreamWaitEvent_params wait{Ptr<CUstream_st>(0x66), Ptr<CUevent_st>(0xe1), 0};
    Call(CUPTI_DRIVER_TRACE_CBID_cuStreamWaitEvent, &wait);

    cuMemcpyHtoDAsync_v2_params htod{0xd000, Ptr<void>(0x4000), 64, Ptr<CUstream_st>(0x55)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, &htod);
    cuMemcpyDtoH_v2_params dtoh{Ptr<void>(0x4000), 0xd000, 32};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, &dtoh);
    cuMemsetD32Async_params memset{0xd000, 0, 10, Ptr<CUstream_st>(0x55)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async, &memset);
    CUDA_MEMCPY2D copy2d{};
    copy2d.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    copy2d.srcDevice = 0xd000;
    copy2d.dstMemoryType = CU_MEMORYTYPE_HOST;
    copy2d.dstHost = Ptr<void>(0x8000);
    copy2d.WidthInBytes = 16;
    copy2d.Height = 8;
    cuMemcpy2D_v2_params copy{&copy2d};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2, &copy);
  });
  const std::vector<Event> launches = t.Of(EventType::kLaunch);
  ASSERT_EQ(launches.size(), 4u);
  EXPECT_EQ(t.Str(launches[0].name), "_Z6kernelPf");
  EXPECT_EQ(t.Str(launches[1].name), "_Z6kernelPf");
  EXPECT_EQ(t.Str(launches[0].api), "cuLaunchKernel");
  EXPECT_EQ(launches[0].grid[0], 2u);
  EXPECT_EQ(launches[0].grid[2], 4u);
  EXPECT_EQ(launches[0].block[0], 32u);
  EXPECT_EQ(launches[0].size, 128u);
  EXPECT_EQ(launches[0].stream, 0x55u);
  EXPECT_EQ(t.Str(launches[2].name), "exkernel");
  EXPECT_EQ(launches[2].grid[0], 8u);
  EXPECT_EQ(launches[2].block[0], 256u);
  EXPECT_EQ(launches[2].stream, 0x66u);
  EXPECT_EQ(t.Str(launches[3].api), "cuGraphLaunch");
  EXPECT_EQ(launches[3].handle, 0x123u);

  const std::vector<Event> syncs = t.Of(EventType::kSync);
  ASSERT_EQ(syncs.size(), 4u);
  using format::SyncKind;
  EXPECT_EQ(syncs[0].kind, static_cast<uint8_t>(SyncKind::kStream));
  EXPECT_EQ(syncs[0].stream, 0x55u);
  EXPECT_EQ(syncs[1].kind, static_cast<uint8_t>(SyncKind::kEvent));
  EXPECT_EQ(syncs[1].handle, 0xe1u);
  EXPECT_EQ(syncs[2].kind, static_cast<uint8_t>(SyncKind::kContext));
  EXPECT_EQ(syncs[3].kind, static_cast<uint8_t>(SyncKind::kStreamWait));

  const std::vector<Event> copies = t.Of(EventType::kCopy);
  ASSERT_EQ(copies.size(), 4u);
  using format::CopyKind;
  EXPECT_EQ(copies[0].kind, static_cast<uint8_t>(CopyKind::kHtoD));
  EXPECT_EQ(copies[0].addr, 0xd000u);
  EXPECT_EQ(copies[0].aux, 0x4000u);
  EXPECT_EQ(copies[0].size, 64u);
  EXPECT_EQ(copies[1].kind, static_cast<uint8_t>(CopyKind::kDtoH));
  EXPECT_EQ(copies[2].kind, static_cast<uint8_t>(CopyKind::kMemset));
  EXPECT_EQ(copies[2].size, 40u);
  EXPECT_EQ(copies[3].kind, static_cast<uint8_t>(CopyKind::kDtoH));
  EXPECT_EQ(copies[3].size, 128u);
}

TEST(CallbacksTest, CaptureMakesGraphAllocationsAndIsTrackedWhilePaused) {
  const Trace t = Capture("capture", [] {
    cuStreamBeginCapture_v2_params begin{Ptr<CUstream_st>(0x99), CU_STREAM_CAPTURE_MODE_GLOBAL};
    Call(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, &begin);
    EXPECT_EQ(Captures().Active(), 1);
    CUdeviceptr a = 0xa000;
    cuMemAllocAsync_params in_capture{&a, 64, Ptr<CUstream_st>(0x99)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, &in_capture);
    CUdeviceptr b = 0xb000;
    cuMemAllocAsync_params elsewhere{&b, 64, Ptr<CUstream_st>(0x98)};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, &elsewhere);
    CUgraph graph = nullptr;
    cuStreamEndCapture_params end{Ptr<CUstream_st>(0x99), &graph};
    // Ends even when the capture was invalidated.
    Call(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, &end, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    EXPECT_EQ(Captures().Active(), 0);
    // A failed begin starts nothing.
    Call(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, &begin, CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(Captures().Active(), 0);

    // Paused: nothing is recorded, but capture state stays right.
    g_capture_on.store(false);
    Call(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, &begin);
    EXPECT_EQ(Captures().Active(), 1);
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync, &in_capture);
    Call(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, &end);
    EXPECT_EQ(Captures().Active(), 0);
    g_capture_on.store(true);
  });
  const std::vector<Event> allocs = t.Of(EventType::kAlloc);
  ASSERT_EQ(allocs.size(), 2u);
  EXPECT_EQ(allocs[0].kind, static_cast<uint8_t>(MemoryKind::kGraph));
  EXPECT_EQ(allocs[1].kind, static_cast<uint8_t>(MemoryKind::kPool));
  const std::vector<Event> apis = t.Of(EventType::kApi);
  ASSERT_EQ(apis.size(), 3u);  // begin, end (failed: value), failed begin
  EXPECT_EQ(t.Str(apis[0].api), "cuStreamBeginCapture_v2");
  EXPECT_EQ(apis[0].stream, 0x99u);
  EXPECT_EQ(t.Str(apis[1].api), "cuStreamEndCapture");
  EXPECT_EQ(apis[1].value, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
}

int32_t FakeDevice(uint64_t context) {
  return context == 0xc0 ? 3 : -1;
}

TEST(CallbacksTest, ResourcesGiveHandlesAndDevices) {
  const Trace t = Capture("resource", [] {
    g_hooks.device_of_context = FakeDevice;
    Resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, 0xc0, nullptr);
    EXPECT_EQ(g_contexts.DeviceOf(0xc0), 3);
    Resource(CUPTI_CBID_RESOURCE_STREAM_CREATED, 0xc0, nullptr, 0x55);
    CUpti_ModuleResourceData module{12, 0, nullptr};
    Resource(CUPTI_CBID_RESOURCE_MODULE_LOADED, 0xc0, &module);
    CUpti_GraphData graph{};
    graph.graph = Ptr<CUgraph_st>(0x610);
    graph.graphExec = Ptr<CUgraphExec_st>(0x620);
    Resource(CUPTI_CBID_RESOURCE_GRAPH_CREATED, 0xc0, &graph);
    Resource(CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, 0xc0, &graph);
    CUevent event = Ptr<CUevent_st>(0xe5);
    cuEventCreate_params create{&event, 0};
    Call(CUPTI_DRIVER_TRACE_CBID_cuEventCreate, &create, CUDA_SUCCESS, nullptr, 0xc0);
    cuEventDestroy_v2_params destroy{event};
    Call(CUPTI_DRIVER_TRACE_CBID_cuEventDestroy_v2, &destroy, CUDA_SUCCESS, nullptr, 0xc0);
    Resource(CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, 0xc0, nullptr, 0x55);
    Resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, 0xc0, nullptr);
    EXPECT_FALSE(g_contexts.Alive(0xc0));
  });
  using format::HandleType;
  const std::vector<Event> creates = t.Of(EventType::kCreate);
  ASSERT_EQ(creates.size(), 6u);
  const HandleType types[] = {HandleType::kContext, HandleType::kStream,    HandleType::kModule,
                              HandleType::kGraph,   HandleType::kGraphExec, HandleType::kEvent};
  const uint64_t handles[] = {0xc0, 0x55, 12, 0x610, 0x620, 0xe5};
  for (size_t i = 0; i < creates.size(); ++i) {
    EXPECT_EQ(creates[i].kind, static_cast<uint8_t>(types[i])) << i;
    EXPECT_EQ(creates[i].handle, handles[i]) << i;
    EXPECT_EQ(creates[i].device, 3) << i;
    EXPECT_GT(creates[i].tid, 0u);
  }
  const std::vector<Event> destroys = t.Of(EventType::kDestroy);
  ASSERT_EQ(destroys.size(), 3u);
  EXPECT_EQ(destroys[0].kind, static_cast<uint8_t>(HandleType::kEvent));
  EXPECT_EQ(destroys[2].kind, static_cast<uint8_t>(HandleType::kContext));
}

TEST(CallbacksTest, NestedCallsRecordNothing) {
  const Trace t = Capture("nested", [] {
    ReentryGuard outer;  // as on the writer thread, or inside our own callback
    CUdeviceptr dptr = 0x1000;
    cuMemAlloc_v2_params alloc{&dptr, 4096};
    Call(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &alloc);
  });
  EXPECT_EQ(t.Count(EventType::kAlloc), 0u);
}

TEST(CallbacksTest, StacksPerAllocation) {
  for (StackMode mode : {StackMode::kFramePointer, StackMode::kUnwind}) {
    const Trace t = Capture(mode == StackMode::kUnwind ? "unwind" : "fp", [mode] {
      g_config.stacks = mode;
      g_config.stack_depth = 16;
      CUdeviceptr dptr = 0x1000;
      cuMemAlloc_v2_params alloc{&dptr, 4096};
      Call(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, &alloc);
    });
    const std::vector<Event> allocs = t.Of(EventType::kAlloc);
    ASSERT_EQ(allocs.size(), 1u);
    ASSERT_NE(allocs[0].stack, format::kNoStack);
    const auto frames = t.reader->stacks().Get(allocs[0].stack);
    EXPECT_GE(frames.size(), 3u) << static_cast<int>(mode);
    EXPECT_LE(frames.size(), 16u);
  }
}

// ---- Activity records ----

TEST(ActivityTest, MemoryPoolAndKernelRecords) {
  const Trace t = Capture("activity", [] {
    ActivityTranslator translator;
    translator.InternNames();
    Event out[ActivityTranslator::kMaxEvents];
    auto emit = [&](const void* record) {
      const size_t n = translator.Translate(static_cast<const CUpti_Activity*>(record), out);
      for (size_t i = 0; i < n; ++i) Record(out[i]);
      return n;
    };
    const uint64_t base = static_cast<uint64_t>(BaseNs());
    CUpti_ActivityMemory4 m{};
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = 42;
    m.address = 0x7000;
    m.bytes = 512;
    m.timestamp = base + 1000;
    m.deviceId = 0;
    m.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    m.memoryPoolConfig.address = 0x70000;
    m.memoryPoolConfig.pool.size = 2 << 20;
    m.memoryPoolConfig.utilizedSize = 512;
    EXPECT_EQ(emit(&m), 3u);  // alloc + reserved + used
    m.address = 0x7200;
    m.timestamp = base + 2000;
    m.memoryPoolConfig.utilizedSize = 1024;
    EXPECT_EQ(emit(&m), 1u);  // reserved unchanged: alloc only (used follows from the events)
    m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    m.memoryPoolConfig.utilizedSize = 0;
    m.memoryPoolConfig.pool.size = 3 << 20;
    m.timestamp = base + 3000;
    EXPECT_EQ(emit(&m), 3u);  // free + reserved + used: the pool grew
    CUpti_ActivityMemory4 plain{};
    plain.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    plain.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    plain.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    plain.address = 0x9000;
    plain.bytes = 64;
    plain.timestamp = base + 3500;
    EXPECT_EQ(emit(&plain), 1u);

    CUpti_ActivityMemoryPool3 p{};
    p.kind = CUPTI_ACTIVITY_KIND_MEMORY_POOL;
    p.memoryPoolOperationType = CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED;
    p.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    p.address = 0x70000;
    p.size = 1 << 20;
    p.utilizedSize = 0;
    p.minBytesToKeep = 4096;
    p.timestamp = base + 4000;
    EXPECT_EQ(emit(&p), 3u);  // trim + reserved + used

    CUpti_ActivityKernel10 k{};
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = base + 5000;
    k.end = base + 7500;
    k.deviceId = 0;
    k.streamId = 13;
    k.gridX = 4;
    k.gridY = 1;
    k.gridZ = 1;
    k.blockX = 128;
    k.blockY = 1;
    k.blockZ = 1;
    k.correlationId = 99;
    k.name = "_Z4axpyPfS_f";
    k.graphId = 5;
    EXPECT_EQ(emit(&k), 1u);
    CUpti_Activity unknown{};
    unknown.kind = CUPTI_ACTIVITY_KIND_MARKER;
    EXPECT_EQ(emit(&unknown), 0u);
    EXPECT_EQ(translator.unknown_records(), 1u);
  });
  const std::vector<Event> allocs = t.Of(EventType::kAlloc);
  ASSERT_EQ(allocs.size(), 3u);
  EXPECT_EQ(t.Str(allocs[0].api), "MEMORY2");
  EXPECT_EQ(allocs[0].kind, static_cast<uint8_t>(MemoryKind::kPool));
  EXPECT_EQ(allocs[0].ts, 1000);
  EXPECT_EQ(allocs[0].corr, 42u);
  EXPECT_EQ(allocs[0].aux, 0x70000u);
  EXPECT_EQ(allocs[2].kind, static_cast<uint8_t>(MemoryKind::kPinned));
  ASSERT_EQ(t.Count(EventType::kFree), 1u);
  const std::vector<Event> gauges = t.Of(EventType::kGauge);
  ASSERT_EQ(gauges.size(), 6u);
  EXPECT_EQ(t.Str(gauges[0].name), "memory2.pool.reserved");
  EXPECT_EQ(gauges[0].value, 2 << 20);
  EXPECT_EQ(gauges[0].handle, 0x70000u);
  EXPECT_EQ(t.Str(gauges[1].name), "memory2.pool.used");
  EXPECT_EQ(gauges[1].value, 512);
  EXPECT_EQ(gauges[2].value, 3 << 20);  // reserved after the release's growth
  EXPECT_EQ(gauges[3].value, 0);        // used then
  EXPECT_EQ(gauges[4].value, 1 << 20);  // reserved after the trim
  ASSERT_EQ(t.Count(EventType::kPoolTrim), 1u);
  const std::vector<Event> kernels = t.Of(EventType::kKernel);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].ts, 5000);
  EXPECT_EQ(kernels[0].dur, 2500);
  EXPECT_EQ(t.Str(kernels[0].name), "_Z4axpyPfS_f");
  EXPECT_EQ(kernels[0].corr, 99u);
  EXPECT_EQ(kernels[0].grid[0], 4u);
  EXPECT_EQ(kernels[0].block[0], 128u);
  EXPECT_EQ(kernels[0].handle, 5u);
}

}  // namespace
}  // namespace cuclimb::interposer
