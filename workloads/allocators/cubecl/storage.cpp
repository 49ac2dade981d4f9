// SPDX-License-Identifier: Apache-2.0
// GPU and pinned storage of the cubecl model: the only place its driver allocations happen.
#include "workloads/allocators/cubecl/storage.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "workloads/allocators/nvtx_mem.h"

namespace cuclimb::workloads::cubecl {

SliceHandle NewSliceHandle() {
  static std::atomic<uint64_t> next_id{1};
  auto handle = std::make_shared<SliceState>();
  handle->id = next_id.fetch_add(1, std::memory_order_relaxed);
  return handle;
}

GpuStorage::GpuStorage(MemoryBackend* backend, StreamHandle stream, AllocatorStats* stats,
                       NvtxMemTracker* nvtx)
    : backend_(backend), stream_(stream), stats_(stats), nvtx_(nvtx) {}

GpuStorage::~GpuStorage() {
  for (const auto& [id, buffer] : buffers_) pending_frees_.push_back(buffer);
  buffers_.clear();
  Flush();
}

StorageId GpuStorage::Alloc(uint64_t size_bytes) {
  const uint64_t address = backend_->DeviceAlloc(size_bytes, stream_);
  ++stats_->device_allocs;
  stats_->reserved_bytes += size_bytes;
  if (nvtx_ != nullptr)
    nvtx_->RegisterHeap(address, size_bytes);
  const StorageId id = next_id_++;
  buffers_.emplace(id, Buffer{address, size_bytes});
  return id;
}

uint64_t GpuStorage::Address(StorageId id) const {
  const auto it = buffers_.find(id);
  if (it == buffers_.end()) {
    std::fprintf(stderr, "cubecl model: unknown GPU storage id %llu\n",
                 static_cast<unsigned long long>(id));
    std::abort();
  }
  return it->second.address;
}

void GpuStorage::Dealloc(StorageId id) {
  const auto it = buffers_.find(id);
  if (it == buffers_.end())
    return;
  pending_frees_.push_back(it->second);
  buffers_.erase(it);
}

void GpuStorage::Flush() {
  for (const Buffer& buffer : pending_frees_) {
    if (nvtx_ != nullptr)
      nvtx_->UnregisterHeap(buffer.address);
    stats_->reserved_bytes -= buffer.size_bytes;
    backend_->DeviceFree(buffer.address, stream_);
    ++stats_->device_frees;
  }
  pending_frees_.clear();
}

PinnedStorage::PinnedStorage(MemoryBackend* backend, AllocatorStats* stats)
    : backend_(backend), stats_(stats) {}

PinnedStorage::~PinnedStorage() {
  for (const auto& [id, pointer] : buffers_) pending_frees_.push_back(pointer);
  buffers_.clear();
  Flush();
}

StorageId PinnedStorage::Alloc(uint64_t size_bytes) {
  void* pointer = backend_->HostAlloc(size_bytes);
  ++stats_->host_allocs;
  const StorageId id = next_id_++;
  buffers_.emplace(id, pointer);
  return id;
}

uint64_t PinnedStorage::Address(StorageId id) const {
  const auto it = buffers_.find(id);
  if (it == buffers_.end()) {
    std::fprintf(stderr, "cubecl model: unknown pinned storage id %llu\n",
                 static_cast<unsigned long long>(id));
    std::abort();
  }
  return reinterpret_cast<uint64_t>(it->second);
}

void PinnedStorage::Dealloc(StorageId id) {
  const auto it = buffers_.find(id);
  if (it == buffers_.end())
    return;
  pending_frees_.push_back(it->second);
  buffers_.erase(it);
}

void PinnedStorage::Flush() {
  for (void* pointer : pending_frees_) {
    backend_->HostFree(pointer);
    ++stats_->host_frees;
  }
  pending_frees_.clear();
}

}  // namespace cuclimb::workloads::cubecl
