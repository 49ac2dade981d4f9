// SPDX-License-Identifier: Apache-2.0
// GPU scenarios run under libcuclimb.so by gpu_test.cpp, each in its own process. Every scenario
// prints what it did as EXPECT lines (addresses, sizes, handles, counts) that the checker matches
// event by event against the trace. Static cudart (nvcc's default), so `--probe` runs on
// machines without a driver and answers 77 there.
//
//   gpu_program --probe | families | dlopen | threads | capture | fork | sigkill
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

namespace {

#define CHECK(call)                                                                               \
  do {                                                                                            \
    const cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(3);                                                                               \
    }                                                                                             \
  } while (0)

#define CU_CHECK(call)                                                            \
  do {                                                                            \
    const CUresult r_ = (call);                                                   \
    if (r_ != CUDA_SUCCESS) {                                                     \
      std::fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #call, \
                   static_cast<int>(r_));                                         \
      std::exit(4);                                                               \
    }                                                                             \
  } while (0)

__global__ void fill_kernel(float* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = static_cast<float>(i);
}

__global__ void coop_kernel(float* p, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] += 1.0f;
}

// A hand-written PTX kernel (checked with ptxas -arch=sm_90) for the module/library paths.
const char kPtx[] = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry ptx_fill(.param .u64 ptx_fill_param_0, .param .u32 ptx_fill_param_1)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [ptx_fill_param_0];
	ld.param.u32 %r2, [ptx_fill_param_1];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %tid.x;
	mad.lo.s32 %r1, %r3, %r4, %r5;
	setp.ge.u32 %p1, %r1, %r2;
	@%p1 bra $L__BB0_2;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd2, %rd3;
	st.global.u32 [%rd4], %r1;
$L__BB0_2:
	ret;
}
)";

unsigned long long U(const void* p) {
  return reinterpret_cast<unsigned long long>(p);
}

// Driver functions through the runtime's entry-point query (static cudart; no libcuda link).
template <typename F>
F Driver(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q));
  if (fn == nullptr || q != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "driver entry point %s not found\n", name);
    std::exit(5);
  }
  return reinterpret_cast<F>(fn);
}

void IterationPush(nvtxDomainHandle_t domain, nvtxStringHandle_t name, unsigned long long i) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = name;
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = i;
  nvtxDomainRangePushEx(domain, &a);
}

// ---- families: every API family of the issue, once or a few times each ----
int Families() {
  nvtxDomainHandle_t domain = nvtxDomainCreateA("gpu-test");
  nvtxStringHandle_t iter = nvtxDomainRegisterStringA(domain, "iteration");
  CHECK(cudaFree(nullptr));  // runtime init; a null free is not an event
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreate(&s));
  std::printf("EXPECT create stream %llx\n", U(s));
  cudaEvent_t ev = nullptr;
  CHECK(cudaEventCreate(&ev));
  std::printf("EXPECT create event %llx\n", U(ev));

  IterationPush(domain, iter, 1);
  // Synchronous allocations.
  float* d = nullptr;
  const size_t kMalloc = (1u << 20) + 4096;
  CHECK(cudaMalloc(&d, kMalloc));
  std::printf("EXPECT alloc cuMemAlloc_v2 %llx %zu device\n", U(d), kMalloc);
  void* pitched = nullptr;
  size_t pitch = 0;
  CHECK(cudaMallocPitch(&pitched, &pitch, 1000, 16));
  std::printf("EXPECT alloc cuMemAllocPitch_v2 %llx %zu device\n", U(pitched), pitch * 16);
  float* managed = nullptr;
  CHECK(cudaMallocManaged(&managed, 65536));
  std::printf("EXPECT alloc cuMemAllocManaged %llx %d managed\n", U(managed), 65536);
  void* pinned = nullptr;
  CHECK(cudaMallocHost(&pinned, 8192));
  std::printf("EXPECT alloc cuMemHostAlloc %llx %d pinned\n", U(pinned), 8192);
  void* host_alloc = nullptr;
  CHECK(cudaHostAlloc(&host_alloc, 12288, cudaHostAllocDefault));
  std::printf("EXPECT alloc cuMemHostAlloc %llx %d pinned\n", U(host_alloc), 12288);
  void* plain = std::aligned_alloc(4096, 16384);
  CHECK(cudaHostRegister(plain, 16384, cudaHostRegisterDefault));
  std::printf("EXPECT alloc cuMemHostRegister_v2 %llx %d host_registered\n", U(plain), 16384);

  // Stream-ordered allocations and pools.
  float* async = nullptr;
  CHECK(cudaMallocAsync(&async, 300000, s));
  std::printf("EXPECT alloc cuMemAllocAsync %llx %d pool\n", U(async), 300000);
  cudaMemPool_t pool = nullptr;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  CHECK(cudaMemPoolCreate(&pool, &props));
  std::printf("EXPECT create pool %llx\n", U(pool));
  unsigned long long threshold = 64ull << 20;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  std::printf("EXPECT pool_attr release_threshold %llx %llu\n", U(pool), threshold);
  float* from_pool = nullptr;
  CHECK(cudaMallocFromPoolAsync(&from_pool, 400000, pool, s));
  std::printf("EXPECT alloc cuMemAllocFromPoolAsync %llx %d pool\n", U(from_pool), 400000);

  // Launches of every kind.
  const int n = 1 << 18;
  for (int i = 0; i < 5; ++i) fill_kernel<<<(n + 255) / 256, 256, 0, s>>>(d, n);
  std::printf("EXPECT launches fill_kernel 5\n");
  {
    int nn = n;
    void* args[] = {&d, &nn};
    CHECK(cudaLaunchKernel(reinterpret_cast<void*>(&coop_kernel), dim3(n / 256), dim3(256), args, 0,
                           s));
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(n / 256);
    config.blockDim = dim3(256);
    config.stream = s;
    CHECK(cudaLaunchKernelEx(&config, coop_kernel, d, nn));
    int blocks = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, coop_kernel, 256, 0));
    CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(&coop_kernel), dim3(4), dim3(256),
                                      args, 0, s));
  }
  std::printf("EXPECT launches coop_kernel 3\n");

  // Copies, memsets, events, synchronizations.
  std::vector<float> h(n);
  CHECK(cudaMemcpy(d, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpyAsync(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost, s));
  CHECK(cudaMemcpy(async, d, 1024, cudaMemcpyDeviceToDevice));
  CHECK(cudaMemset(d, 0, 4096));
  CHECK(cudaMemsetAsync(d, 0, 4096, s));
  std::printf("EXPECT copies 5\n");
  CHECK(cudaEventRecord(ev, s));
  CHECK(cudaStreamWaitEvent(nullptr, ev, 0));
  CHECK(cudaEventSynchronize(ev));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaDeviceSynchronize());
  std::printf("EXPECT syncs 4\n");
  nvtxDomainRangePop(domain);

  IterationPush(domain, iter, 2);
  // Graph capture (global mode) with a stream-ordered allocation inside, then replay.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  float* in_graph = nullptr;
  CHECK(cudaMallocAsync(&in_graph, 1 << 20, s));
  fill_kernel<<<4, 256, 0, s>>>(in_graph, 1024);
  CHECK(cudaFreeAsync(in_graph, s));
  CHECK(cudaStreamEndCapture(s, &graph));
  std::printf("EXPECT alloc cuMemAllocAsync %llx %d graph\n", U(in_graph), 1 << 20);
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  std::printf("EXPECT graph_launches %llx 3\n", U(exec));
  std::printf("EXPECT create graph_exec %llx\n", U(exec));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  nvtxDomainRangePop(domain);

  IterationPush(domain, iter, 3);
  // Driver API: module and library handles, a driver launch, VMM, pinned host via the driver.
  auto cuModuleLoadData_ = Driver<decltype(&cuModuleLoadData)>("cuModuleLoadData");
  auto cuModuleGetFunction_ = Driver<decltype(&cuModuleGetFunction)>("cuModuleGetFunction");
  auto cuModuleUnload_ = Driver<decltype(&cuModuleUnload)>("cuModuleUnload");
  auto cuLaunchKernel_ = Driver<decltype(&cuLaunchKernel)>("cuLaunchKernel");
  auto cuLibraryLoadData_ = Driver<decltype(&cuLibraryLoadData)>("cuLibraryLoadData");
  auto cuLibraryUnload_ = Driver<decltype(&cuLibraryUnload)>("cuLibraryUnload");
  CUmodule module = nullptr;
  CU_CHECK(cuModuleLoadData_(&module, kPtx));
  CUfunction f = nullptr;
  CU_CHECK(cuModuleGetFunction_(&f, module, "ptx_fill"));
  {
    unsigned int nn = 1024;
    CUdeviceptr p = reinterpret_cast<CUdeviceptr>(d);
    void* args[] = {&p, &nn};
    CU_CHECK(cuLaunchKernel_(f, 4, 1, 1, 256, 1, 1, 0, s, args, nullptr));
  }
  std::printf("EXPECT launches ptx_fill 1\n");
  CUlibrary library = nullptr;
  CU_CHECK(cuLibraryLoadData_(&library, kPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
  std::printf("EXPECT create library %llx\n", U(library));
  CU_CHECK(cuLibraryUnload_(library));
  std::printf("EXPECT destroy library %llx\n", U(library));

  auto cuMemGetAllocationGranularity_ =
      Driver<decltype(&cuMemGetAllocationGranularity)>("cuMemGetAllocationGranularity");
  auto cuMemAddressReserve_ = Driver<decltype(&cuMemAddressReserve)>("cuMemAddressReserve");
  auto cuMemCreate_ = Driver<decltype(&cuMemCreate)>("cuMemCreate");
  auto cuMemMap_ = Driver<decltype(&cuMemMap)>("cuMemMap");
  auto cuMemSetAccess_ = Driver<decltype(&cuMemSetAccess)>("cuMemSetAccess");
  auto cuMemUnmap_ = Driver<decltype(&cuMemUnmap)>("cuMemUnmap");
  auto cuMemRelease_ = Driver<decltype(&cuMemRelease)>("cuMemRelease");
  auto cuMemAddressFree_ = Driver<decltype(&cuMemAddressFree)>("cuMemAddressFree");
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  size_t granularity = 0;
  CU_CHECK(cuMemGetAllocationGranularity_(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  const size_t vmm_size = 2 * granularity;
  CUdeviceptr va = 0;
  CU_CHECK(cuMemAddressReserve_(&va, vmm_size, 0, 0, 0));
  CUmemGenericAllocationHandle handle = 0;
  CU_CHECK(cuMemCreate_(&handle, vmm_size, &prop, 0));
  CU_CHECK(cuMemMap_(va, vmm_size, 0, handle, 0));
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CU_CHECK(cuMemSetAccess_(va, vmm_size, &access, 1));
  std::printf("EXPECT vmm reserve %llx %zu 0\n", static_cast<unsigned long long>(va), vmm_size);
  std::printf("EXPECT vmm create 0 %zu %llx\n", vmm_size, static_cast<unsigned long long>(handle));
  std::printf("EXPECT vmm map %llx %zu %llx\n", static_cast<unsigned long long>(va), vmm_size,
              static_cast<unsigned long long>(handle));
  std::printf("EXPECT vmm set_access %llx %zu 0\n", static_cast<unsigned long long>(va), vmm_size);
  CHECK(cudaMemsetAsync(reinterpret_cast<void*>(va), 0, vmm_size, s));
  CHECK(cudaStreamSynchronize(s));
  CU_CHECK(cuMemUnmap_(va, vmm_size));
  CU_CHECK(cuMemRelease_(handle));
  CU_CHECK(cuMemAddressFree_(va, vmm_size));
  std::printf("EXPECT vmm unmap %llx %zu 0\n", static_cast<unsigned long long>(va), vmm_size);
  std::printf("EXPECT vmm release 0 0 %llx\n", static_cast<unsigned long long>(handle));
  std::printf("EXPECT vmm free_va %llx %zu 0\n", static_cast<unsigned long long>(va), vmm_size);
  auto cuMemAllocHost_ = Driver<decltype(&cuMemAllocHost)>("cuMemAllocHost");
  auto cuMemFreeHost_ = Driver<decltype(&cuMemFreeHost)>("cuMemFreeHost");
  void* driver_pinned = nullptr;
  CU_CHECK(cuMemAllocHost_(&driver_pinned, 20480));
  std::printf("EXPECT alloc cuMemAllocHost_v2 %llx %d pinned\n", U(driver_pinned), 20480);
  CU_CHECK(cuMemFreeHost_(driver_pinned));
  std::printf("EXPECT free %llx\n", U(driver_pinned));
  CU_CHECK(cuModuleUnload_(module));

  // NVTX memory API: a heap over the cudaMalloc buffer with two regions.
  nvtxMemVirtualRangeDesc_t heap_range{kMalloc, d};
  nvtxMemHeapDesc_t heap{};
  heap.extCompatID = NVTX_EXT_COMPATID_MEM;
  heap.structSize = sizeof(heap);
  heap.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  heap.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  heap.typeSpecificDescSize = sizeof(heap_range);
  heap.typeSpecificDesc = &heap_range;
  nvtxMemHeapHandle_t h_heap = nvtxMemHeapRegister(domain, &heap);
  nvtxMemVirtualRangeDesc_t regions[2] = {{4096, d}, {8192, d + 4096}};
  nvtxMemRegionsRegisterBatch_t reg{};
  reg.extCompatID = NVTX_EXT_COMPATID_MEM;
  reg.structSize = sizeof(reg);
  reg.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  reg.heap = h_heap;
  reg.regionCount = 2;
  reg.regionDescElementSize = sizeof(regions[0]);
  reg.regionDescElements = regions;
  nvtxMemRegionsRegister(domain, &reg);
  std::printf("EXPECT heap %llx %zu\n", U(d), kMalloc);
  std::printf("EXPECT region %llx 4096\n", U(d));
  std::printf("EXPECT region %llx 8192\n", U(d + 4096));
  nvtxMemHeapUnregister(domain, h_heap);
  nvtxDomainRangePop(domain);

  // Frees of everything, a trim and the pool's destruction.
  CHECK(cudaFreeAsync(async, s));
  CHECK(cudaFreeAsync(from_pool, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemPoolTrimTo(pool, 0));
  std::printf("EXPECT pool_trim %llx\n", U(pool));
  CHECK(cudaMemPoolDestroy(pool));
  std::printf("EXPECT destroy pool %llx\n", U(pool));
  CHECK(cudaFree(d));
  CHECK(cudaFree(pitched));
  CHECK(cudaFree(managed));
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFreeHost(host_alloc));
  CHECK(cudaHostUnregister(plain));
  std::free(plain);
  const void* freed[] = {async, from_pool, d, pitched, managed, pinned, host_alloc, plain};
  for (const void* p : freed) std::printf("EXPECT free %llx\n", U(p));
  CHECK(cudaEventDestroy(ev));
  std::printf("EXPECT destroy event %llx\n", U(ev));
  CHECK(cudaStreamDestroy(s));
  std::printf("EXPECT destroy stream %llx\n", U(s));
  std::printf("EXPECT iterations 3\n");
  return 0;
}

// ---- dlopen: the driver through dlopen + dlsym(handle), as Rust's cudarc does ----
int DlopenDriver() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
    return 6;
  }
#define SYM(name) auto name##_ = reinterpret_cast<decltype(&name)>(dlsym(lib, #name))
  SYM(cuInit);
  SYM(cuDeviceGet);
  SYM(cuDevicePrimaryCtxRetain);
  SYM(cuDevicePrimaryCtxRelease_v2);
  SYM(cuCtxSetCurrent);
  SYM(cuMemAlloc_v2);
  SYM(cuMemFree_v2);
  SYM(cuModuleLoadData);
  SYM(cuModuleGetFunction);
  SYM(cuLaunchKernel);
  SYM(cuCtxSynchronize);
  SYM(cuStreamCreate);
  SYM(cuStreamDestroy_v2);
  SYM(cuMemAllocAsync);
  SYM(cuMemFreeAsync);
  SYM(cuStreamSynchronize);
#undef SYM
  CU_CHECK(cuInit_(0));
  CUdevice dev = 0;
  CU_CHECK(cuDeviceGet_(&dev, 0));
  CUcontext ctx = nullptr;
  CU_CHECK(cuDevicePrimaryCtxRetain_(&ctx, dev));
  CU_CHECK(cuCtxSetCurrent_(ctx));
  CUstream stream = nullptr;
  CU_CHECK(cuStreamCreate_(&stream, 0));
  std::printf("EXPECT create stream %llx\n", U(stream));
  CUdeviceptr p = 0;
  CU_CHECK(cuMemAlloc_v2_(&p, 777216));
  std::printf("EXPECT alloc cuMemAlloc_v2 %llx 777216 device\n",
              static_cast<unsigned long long>(p));
  CUdeviceptr q = 0;
  CU_CHECK(cuMemAllocAsync_(&q, 123456, stream));
  std::printf("EXPECT alloc cuMemAllocAsync %llx 123456 pool\n",
              static_cast<unsigned long long>(q));
  CUmodule module = nullptr;
  CU_CHECK(cuModuleLoadData_(&module, kPtx));
  CUfunction f = nullptr;
  CU_CHECK(cuModuleGetFunction_(&f, module, "ptx_fill"));
  unsigned int n = 1024;
  void* args[] = {&p, &n};
  for (int i = 0; i < 7; ++i)
    CU_CHECK(cuLaunchKernel_(f, 4, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
  std::printf("EXPECT launches ptx_fill 7\n");
  CU_CHECK(cuMemFreeAsync_(q, stream));
  CU_CHECK(cuStreamSynchronize_(stream));
  CU_CHECK(cuCtxSynchronize_());
  CU_CHECK(cuMemFree_v2_(p));
  std::printf("EXPECT free %llx\n", static_cast<unsigned long long>(p));
  std::printf("EXPECT free %llx\n", static_cast<unsigned long long>(q));
  CU_CHECK(cuStreamDestroy_v2_(stream));
  CU_CHECK(cuDevicePrimaryCtxRelease_v2_(dev));
  return 0;
}

// ---- threads: 8 threads allocating and launching at once ----
int Threads() {
  constexpr int kThreads = 8;
  constexpr int kRounds = 1000;
  CHECK(cudaFree(nullptr));
  std::vector<std::thread> pool;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&failures] {
      cudaStream_t s = nullptr;
      if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        ++failures;
        return;
      }
      for (int i = 0; i < kRounds; ++i) {
        float* p = nullptr;
        if (cudaMallocAsync(&p, 4096 + 256 * (i % 7), s) != cudaSuccess)
          ++failures;
        fill_kernel<<<4, 256, 0, s>>>(p, 1024);
        if (cudaFreeAsync(p, s) != cudaSuccess)
          ++failures;
      }
      cudaStreamSynchronize(s);
      cudaStreamDestroy(s);
    });
  }
  for (auto& t : pool) t.join();
  std::printf("EXPECT count alloc cuMemAllocAsync %d\n", kThreads * kRounds);
  std::printf("EXPECT count free cuMemFreeAsync %d\n", kThreads * kRounds);
  std::printf("EXPECT launches fill_kernel %d\n", kThreads * kRounds);
  std::printf("EXPECT threads %d\n", kThreads);
  return failures.load() == 0 ? 0 : 7;
}

// ---- capture: a long global-mode capture on one thread while the writer samples ----
int Capture() {
  CHECK(cudaFree(nullptr));
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float* warm = nullptr;
  CHECK(cudaMallocAsync(&warm, 1 << 20, s));  // the default pool exists and has memory
  CHECK(cudaFreeAsync(warm, s));
  CHECK(cudaStreamSynchronize(s));
  nvtxDomainHandle_t domain = nvtxDomainCreateA("gpu-test");
  nvtxStringHandle_t iter = nvtxDomainRegisterStringA(domain, "iteration");
  int bad = 0;
  for (int round = 1; round <= 3; ++round) {
    IterationPush(domain, iter, static_cast<unsigned long long>(round));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    // ~400 ms inside the capture: the writer ticks (and, with
    // CUCLIMB_DEBUG_CAPTURE_QUERIES=1, queries the pool) several times meanwhile.
    cudaError_t status = cudaSuccess;
    for (int i = 0; i < 40 && status == cudaSuccess; ++i) {
      float* p = nullptr;
      status = cudaMallocAsync(&p, 65536, s);
      if (status == cudaSuccess) {
        fill_kernel<<<1, 256, 0, s>>>(p, 256);
        status = cudaFreeAsync(p, s);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(s, &graph);
    cudaGraphExec_t exec = nullptr;
    const cudaError_t inst =
        end == cudaSuccess ? cudaGraphInstantiate(&exec, graph, 0) : cudaErrorUnknown;
    const cudaError_t launch = inst == cudaSuccess ? cudaGraphLaunch(exec, s) : cudaErrorUnknown;
    cudaStreamSynchronize(s);
    std::printf("CAPTURE round %d body %d end %d instantiate %d launch %d\n", round,
                static_cast<int>(status), static_cast<int>(end), static_cast<int>(inst),
                static_cast<int>(launch));
    if (status != cudaSuccess || end != cudaSuccess || inst != cudaSuccess ||
        launch != cudaSuccess) {
      ++bad;
      cudaGetLastError();
    }
    if (exec != nullptr)
      cudaGraphExecDestroy(exec);
    if (graph != nullptr)
      cudaGraphDestroy(graph);
    nvtxDomainRangePop(domain);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));  // gauges between captures
  }
  CHECK(cudaStreamDestroy(s));
  std::printf("EXPECT captures_ok %d\n", 3 - bad);
  return bad == 0 ? 0 : 8;
}

// ---- fork: a CUDA process forks; the child exits without CUDA, another tries CUDA ----
int Fork() {
  float* d = nullptr;
  CHECK(cudaMalloc(&d, 1 << 20));
  std::printf("EXPECT alloc cuMemAlloc_v2 %llx %d device\n", U(d), 1 << 20);
  std::fflush(stdout);
  int worst = 0;
  for (int variant = 0; variant < 2; ++variant) {
    const pid_t child = fork();
    if (child == 0) {
      if (variant == 1) {
        float* c = nullptr;
        // CUDA is unusable in a fork child: an error, not a hang, and nothing recorded.
        const cudaError_t e = cudaMalloc(&c, 4096);
        std::fprintf(stderr, "child cudaMalloc: %s\n", cudaGetErrorString(e));
      }
      std::exit(0);  // runs the atexit handlers (cuclimb's must do nothing here)
    }
    int status = 0;
    bool done = false;
    for (int i = 0; i < 300 && !done; ++i) {
      done = waitpid(child, &status, WNOHANG) == child;
      if (!done)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!done) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      std::printf("CHILD variant %d hung\n", variant);
      worst = 9;
    } else {
      std::printf("CHILD variant %d status %d\n", variant, status);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        worst = 9;
    }
  }
  CHECK(cudaFree(d));
  std::printf("EXPECT free %llx\n", U(d));
  return worst;
}

// ---- sigkill: runs until killed; the trace must be readable up to its last chunk ----
int SigkillLoop() {
  nvtxDomainHandle_t domain = nvtxDomainCreateA("gpu-test");
  nvtxStringHandle_t iter = nvtxDomainRegisterStringA(domain, "iteration");
  cudaStream_t s = nullptr;
  CHECK(cudaStreamCreate(&s));
  for (unsigned long long i = 1;; ++i) {
    IterationPush(domain, iter, i);
    float* p = nullptr;
    CHECK(cudaMallocAsync(&p, 1 << 16, s));
    fill_kernel<<<64, 256, 0, s>>>(p, 1 << 14);
    CHECK(cudaFreeAsync(p, s));
    CHECK(cudaStreamSynchronize(s));
    nvtxDomainRangePop(domain);
    if (i == 100) {
      std::printf("READY\n");
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "--probe";
  if (mode == "--probe") {
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    std::printf("devices %d (%s)\n", count, cudaGetErrorString(e));
    return (e == cudaSuccess && count > 0) ? 0 : 77;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (mode == "families")
    return Families();
  if (mode == "dlopen")
    return DlopenDriver();
  if (mode == "threads")
    return Threads();
  if (mode == "capture")
    return Capture();
  if (mode == "fork")
    return Fork();
  if (mode == "sigkill")
    return SigkillLoop();
  std::fprintf(stderr, "unknown scenario %s\n", mode.c_str());
  return 2;
}
