// SPDX-License-Identifier: Apache-2.0
// The real MemoryBackends: the CUDA driver API reached through cudaGetDriverEntryPointByVersion
// (what the cubecl model issues) and the runtime API (direct and caching allocators).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "workloads/allocators/memory_backend.h"

namespace cuclimb::workloads {

// Driver calls as cubecl's CUDA runtime makes them through cudarc: resolved at run time, so the
// binary has no libcuda.so.1 dependency (it starts, and GPU tests can skip, on a machine without
// a driver) and LD_PRELOAD wrappers never see the calls. cuMemAllocAsync/cuMemFreeAsync where
// the device supports memory pools, else cuMemAlloc_v2/cuMemFree_v2 (storage/gpu.rs
// L169-201). Needs the runtime's primary context current on the calling thread. Every failure
// ends the program with the file, line, call and driver error name and string.
class DriverBackend final : public MemoryBackend {
 public:
  DriverBackend();
  ~DriverBackend() override;

  uint64_t DeviceAlloc(std::size_t size_bytes, StreamHandle stream) override;
  void DeviceFree(uint64_t address, StreamHandle stream) override;
  void* HostAlloc(std::size_t size_bytes) override;
  void HostFree(void* pointer) override;
  void CopyHostToDeviceAsync(uint64_t dst, const void* src, std::size_t size_bytes,
                             StreamHandle stream) override;
  EventHandle EventCreate() override;
  void EventRecord(EventHandle event, StreamHandle stream) override;
  void EventSynchronize(EventHandle event) override;
  void EventDestroy(EventHandle event) override;
  std::size_t TotalDeviceMemory() override;

  bool uses_async_allocation() const { return use_async_; }

 private:
  struct Api;
  std::unique_ptr<Api> api_;
  bool use_async_ = true;
};

// The runtime API: cudaMalloc/cudaFree (cudaFree synchronises the device), cudaMallocHost,
// cudaMemcpyAsync and runtime events. Exits through CUCLIMB_CUDA_CHECK on failure.
class RuntimeBackend final : public MemoryBackend {
 public:
  uint64_t DeviceAlloc(std::size_t size_bytes, StreamHandle stream) override;
  void DeviceFree(uint64_t address, StreamHandle stream) override;
  void* HostAlloc(std::size_t size_bytes) override;
  void HostFree(void* pointer) override;
  void CopyHostToDeviceAsync(uint64_t dst, const void* src, std::size_t size_bytes,
                             StreamHandle stream) override;
  EventHandle EventCreate() override;
  void EventRecord(EventHandle event, StreamHandle stream) override;
  void EventSynchronize(EventHandle event) override;
  void EventDestroy(EventHandle event) override;
  std::size_t TotalDeviceMemory() override;
};

}  // namespace cuclimb::workloads
