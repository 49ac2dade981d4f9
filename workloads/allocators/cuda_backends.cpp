// SPDX-License-Identifier: Apache-2.0
// DriverBackend (entry-point-resolved driver calls) and RuntimeBackend.
#include "workloads/allocators/cuda_backends.h"

#include <cstdio>
#include <cstdlib>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "kernels/cuda_check.h"

namespace cuclimb::workloads {

// Prototypes from cuda.h are used for their types only (decltype is unevaluated), so nothing
// links against libcuda. The macros in cuda.h map cuMemAlloc to cuMemAlloc_v2 and so on, so
// these are the current ABI variants, matching the versioned lookups below.
struct DriverBackend::Api {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceTotalMem) device_total_mem = nullptr;
  decltype(&::cuMemAllocAsync) mem_alloc_async = nullptr;
  decltype(&::cuMemFreeAsync) mem_free_async = nullptr;
  decltype(&::cuMemAlloc) mem_alloc = nullptr;
  decltype(&::cuMemFree) mem_free = nullptr;
  decltype(&::cuMemAllocHost) mem_alloc_host = nullptr;
  decltype(&::cuMemFreeHost) mem_free_host = nullptr;
  decltype(&::cuMemcpyHtoDAsync) memcpy_htod_async = nullptr;
  decltype(&::cuEventCreate) event_create = nullptr;
  decltype(&::cuEventRecord) event_record = nullptr;
  decltype(&::cuEventSynchronize) event_synchronize = nullptr;
  decltype(&::cuEventDestroy) event_destroy = nullptr;

  // Prints "file:line: call failed: CUDA_ERROR_X (message)" and exits.
  void Check(CUresult result, const char* call, const char* file, int line) const {
    if (result == CUDA_SUCCESS)
      return;
    const char* name = "unknown CUresult";
    const char* message = "no message";
    if (get_error_name != nullptr)
      get_error_name(result, &name);
    if (get_error_string != nullptr)
      get_error_string(result, &message);
    std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call, name, message);
    std::exit(kernels::kExitCudaError);
  }
};

namespace {

// CUDA 12.0 ABI: every function used here exists in that form in the CUDA 12 and 13 drivers.
constexpr unsigned int kDriverAbiVersion = 12000;

template <typename Fn>
void Resolve(const char* symbol, Fn* out) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  CUCLIMB_CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, &function, kDriverAbiVersion,
                                                      cudaEnableDefault, &query));
  if (query != cudaDriverEntryPointSuccess || function == nullptr) {
    std::fprintf(stderr, "%s:%d: driver entry point %s not found (query result %d)\n", __FILE__,
                 __LINE__, symbol, static_cast<int>(query));
    std::exit(kernels::kExitCudaError);
  }
  *out = reinterpret_cast<Fn>(function);
}

CUstream AsStream(StreamHandle stream) {
  return static_cast<CUstream>(stream);
}

}  // namespace

#define CUCLIMB_CU_CHECK(call) api_->Check((call), #call, __FILE__, __LINE__)

DriverBackend::DriverBackend() : api_(std::make_unique<Api>()) {
  Resolve("cuGetErrorName", &api_->get_error_name);
  Resolve("cuGetErrorString", &api_->get_error_string);
  Resolve("cuDeviceGet", &api_->device_get);
  Resolve("cuDeviceTotalMem", &api_->device_total_mem);
  Resolve("cuMemAllocAsync", &api_->mem_alloc_async);
  Resolve("cuMemFreeAsync", &api_->mem_free_async);
  Resolve("cuMemAlloc", &api_->mem_alloc);
  Resolve("cuMemFree", &api_->mem_free);
  Resolve("cuMemAllocHost", &api_->mem_alloc_host);
  Resolve("cuMemFreeHost", &api_->mem_free_host);
  Resolve("cuMemcpyHtoDAsync", &api_->memcpy_htod_async);
  Resolve("cuEventCreate", &api_->event_create);
  Resolve("cuEventRecord", &api_->event_record);
  Resolve("cuEventSynchronize", &api_->event_synchronize);
  Resolve("cuEventDestroy", &api_->event_destroy);
  int device = 0;
  CUCLIMB_CUDA_CHECK(cudaGetDevice(&device));
  int pools_supported = 0;
  CUCLIMB_CUDA_CHECK(
      cudaDeviceGetAttribute(&pools_supported, cudaDevAttrMemoryPoolsSupported, device));
  use_async_ = pools_supported != 0;
}

DriverBackend::~DriverBackend() = default;

uint64_t DriverBackend::DeviceAlloc(std::size_t size_bytes, StreamHandle stream) {
  CUdeviceptr address = 0;
  if (use_async_) {
    CUCLIMB_CU_CHECK(api_->mem_alloc_async(&address, size_bytes, AsStream(stream)));
  } else {
    CUCLIMB_CU_CHECK(api_->mem_alloc(&address, size_bytes));
  }
  return address;
}

void DriverBackend::DeviceFree(uint64_t address, StreamHandle stream) {
  if (use_async_) {
    CUCLIMB_CU_CHECK(api_->mem_free_async(address, AsStream(stream)));
  } else {
    CUCLIMB_CU_CHECK(api_->mem_free(address));
  }
}

void* DriverBackend::HostAlloc(std::size_t size_bytes) {
  void* pointer = nullptr;
  CUCLIMB_CU_CHECK(api_->mem_alloc_host(&pointer, size_bytes));
  return pointer;
}

void DriverBackend::HostFree(void* pointer) {
  CUCLIMB_CU_CHECK(api_->mem_free_host(pointer));
}

void DriverBackend::CopyHostToDeviceAsync(uint64_t dst, const void* src, std::size_t size_bytes,
                                          StreamHandle stream) {
  CUCLIMB_CU_CHECK(api_->memcpy_htod_async(dst, src, size_bytes, AsStream(stream)));
}

EventHandle DriverBackend::EventCreate() {
  CUevent event = nullptr;
  CUCLIMB_CU_CHECK(api_->event_create(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

void DriverBackend::EventRecord(EventHandle event, StreamHandle stream) {
  CUCLIMB_CU_CHECK(api_->event_record(static_cast<CUevent>(event), AsStream(stream)));
}

void DriverBackend::EventSynchronize(EventHandle event) {
  CUCLIMB_CU_CHECK(api_->event_synchronize(static_cast<CUevent>(event)));
}

void DriverBackend::EventDestroy(EventHandle event) {
  CUCLIMB_CU_CHECK(api_->event_destroy(static_cast<CUevent>(event)));
}

std::size_t DriverBackend::TotalDeviceMemory() {
  int ordinal = 0;
  CUCLIMB_CUDA_CHECK(cudaGetDevice(&ordinal));
  CUdevice device = 0;
  CUCLIMB_CU_CHECK(api_->device_get(&device, ordinal));
  std::size_t total = 0;
  CUCLIMB_CU_CHECK(api_->device_total_mem(&total, device));
  return total;
}

#undef CUCLIMB_CU_CHECK

uint64_t RuntimeBackend::DeviceAlloc(std::size_t size_bytes, StreamHandle /*stream*/) {
  void* pointer = nullptr;
  CUCLIMB_CUDA_CHECK(cudaMalloc(&pointer, size_bytes));
  return reinterpret_cast<uint64_t>(pointer);
}

void RuntimeBackend::DeviceFree(uint64_t address, StreamHandle /*stream*/) {
  CUCLIMB_CUDA_CHECK(cudaFree(reinterpret_cast<void*>(address)));
}

void* RuntimeBackend::HostAlloc(std::size_t size_bytes) {
  void* pointer = nullptr;
  CUCLIMB_CUDA_CHECK(cudaMallocHost(&pointer, size_bytes));
  return pointer;
}

void RuntimeBackend::HostFree(void* pointer) {
  CUCLIMB_CUDA_CHECK(cudaFreeHost(pointer));
}

void RuntimeBackend::CopyHostToDeviceAsync(uint64_t dst, const void* src, std::size_t size_bytes,
                                           StreamHandle stream) {
  CUCLIMB_CUDA_CHECK(cudaMemcpyAsync(reinterpret_cast<void*>(dst), src, size_bytes,
                                     cudaMemcpyHostToDevice, static_cast<cudaStream_t>(stream)));
}

EventHandle RuntimeBackend::EventCreate() {
  cudaEvent_t event = nullptr;
  CUCLIMB_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return event;
}

void RuntimeBackend::EventRecord(EventHandle event, StreamHandle stream) {
  CUCLIMB_CUDA_CHECK(
      cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
}

void RuntimeBackend::EventSynchronize(EventHandle event) {
  CUCLIMB_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
}

void RuntimeBackend::EventDestroy(EventHandle event) {
  CUCLIMB_CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
}

std::size_t RuntimeBackend::TotalDeviceMemory() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  CUCLIMB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return total_bytes;
}

}  // namespace cuclimb::workloads
