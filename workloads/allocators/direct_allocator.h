// SPDX-License-Identifier: Apache-2.0
// --allocator=direct: one cudaMalloc per tensor and one cudaFree when it dies.
#pragma once

#include <cstddef>

#include "workloads/allocators/device_allocator.h"
#include "workloads/allocators/memory_backend.h"

namespace cuclimb::workloads {

// The baseline with no pooling at all. On the GPU the backend is the runtime, so each Free is a
// cudaFree, which synchronises the device: slow, but flat by construction.
class DirectAllocator final : public DeviceAllocator {
 public:
  DirectAllocator(MemoryBackend* backend, StreamHandle stream)
      : backend_(backend), stream_(stream) {}

  Allocation Allocate(std::size_t size_bytes) override {
    ++stats_.reserves;
    ++stats_.device_allocs;
    ++stats_.live_handles;
    Allocation allocation;
    allocation.address = backend_->DeviceAlloc(size_bytes, stream_);
    allocation.size_bytes = size_bytes;
    return allocation;
  }

  void Free(Allocation allocation) override {
    if (!allocation)
      return;
    backend_->DeviceFree(allocation.address, stream_);
    ++stats_.device_frees;
    --stats_.live_handles;
  }

  AllocatorStats Stats() const override { return stats_; }
  std::string Name() const override { return "direct"; }

 private:
  MemoryBackend* backend_;
  StreamHandle stream_;
  AllocatorStats stats_;
};

}  // namespace cuclimb::workloads
