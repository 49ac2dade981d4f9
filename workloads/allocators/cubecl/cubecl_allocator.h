// SPDX-License-Identifier: Apache-2.0
// --allocator=cubecl: a model of cubecl 0.10's CUDA memory manager for one stream (GPU manager,
// pinned staging manager, drop queue) behind the DeviceAllocator interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "workloads/allocators/allocator_config.h"
#include "workloads/allocators/cubecl/drop_queue.h"
#include "workloads/allocators/cubecl/memory_management.h"
#include "workloads/allocators/cubecl/storage.h"
#include "workloads/allocators/device_allocator.h"
#include "workloads/allocators/memory_backend.h"
#include "workloads/allocators/nvtx_mem.h"

namespace cuclimb::workloads::cubecl {

class CubeclAllocator final : public DeviceAllocator {
 public:
  // `backend` must outlive the allocator. Asks the backend for the device's total memory once,
  // to build the ladder (max page = total / 4).
  CubeclAllocator(MemoryBackend* backend, StreamHandle stream, const CubeclOptions& options);
  ~CubeclAllocator() override;

  // Client rounding to the alignment (allocator.rs L58), then the full reserve path.
  Allocation Allocate(std::size_t size_bytes) override;
  // A reference-count decrement; nothing else (handle.rs L170-172).
  void Free(Allocation allocation) override;
  // The per-launch metadata path (server.rs L678-694, command.rs L402-425): pinned staging
  // reserve and copy-in, a GPU buffer of the *unaligned* length through the full reserve path,
  // cuMemcpyHtoDAsync, the GPU handle dropped at once, the staging handle onto the drop queue.
  void OnLaunch(const void* metadata, std::size_t size_bytes) override;
  void BeginPersistent() override;
  void EndPersistent() override;
  // cleanup(true) on the GPU manager(s); the pinned manager is never cleaned.
  void Cleanup() override;
  AllocatorStats Stats() const override;
  std::string Name() const override { return "cubecl"; }

  const MemoryManagement& gpu() const { return gpu_; }
  const MemoryManagement& pinned() const { return pinned_; }

 private:
  MemoryBackend* backend_;
  StreamHandle stream_;
  CubeclOptions options_;
  AllocatorStats stats_;
  std::unique_ptr<NvtxMemTracker> nvtx_;
  GpuStorage gpu_storage_;
  PinnedStorage pinned_storage_;
  std::unique_ptr<GpuStorage> meta_storage_;
  MemoryManagement gpu_;
  MemoryManagement pinned_;
  std::unique_ptr<MemoryManagement> meta_;
  DropQueue drop_queue_;
  uint64_t live_handles_ = 0;
};

}  // namespace cuclimb::workloads::cubecl
