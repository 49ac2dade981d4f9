// SPDX-License-Identifier: Apache-2.0
// cubecl's ComputeStorage for the model: GPU buffers through cuMemAllocAsync with deferred frees,
// and page-locked host buffers for the staging pool.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "workloads/allocators/cubecl/slice.h"
#include "workloads/allocators/device_allocator.h"
#include "workloads/allocators/memory_backend.h"

namespace cuclimb::workloads {
class NvtxMemTracker;
}

namespace cuclimb::workloads::cubecl {

class ComputeStorage {
 public:
  virtual ~ComputeStorage() = default;
  // Allocates exactly size_bytes; the returned id is never reused.
  virtual StorageId Alloc(uint64_t size_bytes) = 0;
  // Base address of a live storage buffer.
  virtual uint64_t Address(StorageId id) const = 0;
  // Queues the buffer for release; memory goes back only at Flush().
  virtual void Dealloc(StorageId id) = 0;
  virtual void Flush() = 0;
  virtual std::size_t live_buffers() const = 0;
};

// compute/storage/gpu.rs: allocation on the stream, dealloc only queued, a flush issues the
// frees. With an NVTX tracker, every buffer is described as an NVTX memory heap.
class GpuStorage final : public ComputeStorage {
 public:
  GpuStorage(MemoryBackend* backend, StreamHandle stream, AllocatorStats* stats,
             NvtxMemTracker* nvtx);
  ~GpuStorage() override;
  StorageId Alloc(uint64_t size_bytes) override;
  uint64_t Address(StorageId id) const override;
  void Dealloc(StorageId id) override;
  void Flush() override;
  std::size_t live_buffers() const override { return buffers_.size(); }

 private:
  MemoryBackend* backend_;
  StreamHandle stream_;
  AllocatorStats* stats_;
  NvtxMemTracker* nvtx_;
  struct Buffer {
    uint64_t address = 0;
    uint64_t size_bytes = 0;
  };
  StorageId next_id_ = 1;
  std::unordered_map<StorageId, Buffer> buffers_;
  std::vector<Buffer> pending_frees_;
};

// compute/storage/cpu.rs: cuMemAllocHost_v2 / cuMemFreeHost for the staging pool.
class PinnedStorage final : public ComputeStorage {
 public:
  PinnedStorage(MemoryBackend* backend, AllocatorStats* stats);
  ~PinnedStorage() override;
  StorageId Alloc(uint64_t size_bytes) override;
  uint64_t Address(StorageId id) const override;
  void Dealloc(StorageId id) override;
  void Flush() override;
  std::size_t live_buffers() const override { return buffers_.size(); }

 private:
  MemoryBackend* backend_;
  AllocatorStats* stats_;
  StorageId next_id_ = 1;
  std::unordered_map<StorageId, void*> buffers_;
  std::vector<void*> pending_frees_;
};

}  // namespace cuclimb::workloads::cubecl
