// SPDX-License-Identifier: Apache-2.0
// The driver calls an allocator may issue, behind an interface so the bookkeeping runs on the
// CPU against a fake (tests/workloads) and on the GPU against the real driver.
#pragma once

#include <cstddef>
#include <cstdint>

#include "workloads/allocators/device_allocator.h"

namespace cuclimb::workloads {

using EventHandle = void*;

// Every call either succeeds or ends the program with the file, line, call and message of the
// failure (the real backend), or records the call (the fake).
class MemoryBackend {
 public:
  virtual ~MemoryBackend() = default;

  // Stream-ordered device allocation (cuMemAllocAsync, falling back to cuMemAlloc_v2 where the
  // device has no memory pools) and its release (cuMemFreeAsync / cuMemFree_v2).
  virtual uint64_t DeviceAlloc(std::size_t size_bytes, StreamHandle stream) = 0;
  virtual void DeviceFree(uint64_t address, StreamHandle stream) = 0;

  // Page-locked host memory (cuMemAllocHost_v2 / cuMemFreeHost).
  virtual void* HostAlloc(std::size_t size_bytes) = 0;
  virtual void HostFree(void* pointer) = 0;

  // cuMemcpyHtoDAsync_v2.
  virtual void CopyHostToDeviceAsync(uint64_t dst, const void* src, std::size_t size_bytes,
                                     StreamHandle stream) = 0;

  // cuEventCreate / cuEventRecord / cuEventSynchronize / cuEventDestroy_v2.
  virtual EventHandle EventCreate() = 0;
  virtual void EventRecord(EventHandle event, StreamHandle stream) = 0;
  virtual void EventSynchronize(EventHandle event) = 0;
  virtual void EventDestroy(EventHandle event) = 0;

  // cuDeviceTotalMem_v2 of the current device.
  virtual std::size_t TotalDeviceMemory() = 0;
};

}  // namespace cuclimb::workloads
