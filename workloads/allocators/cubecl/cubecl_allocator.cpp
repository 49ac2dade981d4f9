// SPDX-License-Identifier: Apache-2.0
// CubeclAllocator: client rounding, persistent windows and the per-launch metadata path.
#include "workloads/allocators/cubecl/cubecl_allocator.h"

#include <cstring>
#include <utility>

namespace cuclimb::workloads::cubecl {
namespace {

MemoryConfig GpuConfig(MemoryBackend* backend, const CubeclOptions& options) {
  MemoryConfig config;
  config.max_page = RoundUp(backend->TotalDeviceMemory() / 4, options.alignment);
  config.alignment = options.alignment;
  config.persistent_pool = options.persistent_pool;
  config.size_match = options.size_match;
  return config;
}

// The pinned manager uses the same ladder with 16-byte alignment and never sees a persistent
// window (Burn's window sets the GPU stream's mode only).
MemoryConfig PinnedConfig(MemoryBackend* backend, const CubeclOptions& options) {
  MemoryConfig config;
  config.max_page = RoundUp(backend->TotalDeviceMemory() / 4, options.pinned_alignment);
  config.alignment = options.pinned_alignment;
  config.persistent_pool = false;
  return config;
}

std::unique_ptr<NvtxMemTracker> MakeTracker(const CubeclOptions& options) {
  if (!options.nvtx_mem)
    return nullptr;
  return std::make_unique<NvtxMemTracker>("cuclimb-adam/" + options.label);
}

}  // namespace

CubeclAllocator::CubeclAllocator(MemoryBackend* backend, StreamHandle stream,
                                 const CubeclOptions& options)
    : backend_(backend),
      stream_(stream),
      options_(options),
      nvtx_(MakeTracker(options)),
      gpu_storage_(backend, stream, &stats_, nvtx_.get()),
      pinned_storage_(backend, &stats_),
      meta_storage_(options.separate_meta_pool
                        ? std::make_unique<GpuStorage>(backend, stream, &stats_, nullptr)
                        : nullptr),
      gpu_(&gpu_storage_, GpuConfig(backend, options), &stats_),
      pinned_(&pinned_storage_, PinnedConfig(backend, options), &stats_),
      meta_(meta_storage_ ? std::make_unique<MemoryManagement>(meta_storage_.get(),
                                                               GpuConfig(backend, options), &stats_)
                          : nullptr),
      drop_queue_(backend, stream, &stats_, options.drop_queue_entries) {}

// Members go in reverse order: the drop queue waits for the stream first, then the managers drop
// their handles, then the storages free the buffers.
CubeclAllocator::~CubeclAllocator() = default;

Allocation CubeclAllocator::Allocate(std::size_t size_bytes) {
  Reservation reservation = gpu_.Reserve(RoundUp(size_bytes, options_.alignment));
  if (nvtx_) {
    nvtx_->RegisterRegion(gpu_storage_.Address(reservation.storage), reservation.address,
                          size_bytes);
  }
  ++live_handles_;
  Allocation allocation;
  allocation.address = reservation.address;
  allocation.size_bytes = size_bytes;
  allocation.handle = std::move(reservation.handle);
  allocation.tag = reservation.storage;
  return allocation;
}

void CubeclAllocator::Free(Allocation allocation) {
  if (!allocation)
    return;
  if (nvtx_)
    nvtx_->UnregisterRegion(allocation.address);
  --live_handles_;
  // `allocation` goes out of scope here: the Arc-like decrement is the whole free.
}

void CubeclAllocator::OnLaunch(const void* metadata, std::size_t size_bytes) {
  ++stats_.metadata_launches;
  Reservation staging = pinned_.Reserve(size_bytes);
  std::memcpy(reinterpret_cast<void*>(staging.address), metadata, size_bytes);
  const uint64_t request =
      options_.round_metadata ? RoundUp(size_bytes, options_.alignment) : size_bytes;
  MemoryManagement& manager = meta_ ? *meta_ : gpu_;
  Reservation device = manager.Reserve(request);
  if (nvtx_ && !meta_) {
    nvtx_->RegisterRegion(gpu_storage_.Address(device.storage), device.address, size_bytes);
  }
  backend_->CopyHostToDeviceAsync(device.address, reinterpret_cast<const void*>(staging.address),
                                  size_bytes, stream_);
  // The server drops the GPU handle as soon as it has the pointer (server.rs L864-868): the
  // slot is free for the next reserve while the copy and the kernel are still queued, which is
  // safe only because everything runs on one stream.
  if (nvtx_ && !meta_)
    nvtx_->UnregisterRegion(device.address);
  device.handle.reset();
  drop_queue_.Push(std::move(staging.handle), size_bytes);
}

void CubeclAllocator::BeginPersistent() {
  if (options_.persistent_window)
    gpu_.SetMode(AllocationMode::kPersistent);
}

void CubeclAllocator::EndPersistent() {
  gpu_.SetMode(AllocationMode::kAuto);
}

void CubeclAllocator::Cleanup() {
  gpu_.Cleanup();
  if (meta_)
    meta_->Cleanup();
}

AllocatorStats CubeclAllocator::Stats() const {
  AllocatorStats stats = stats_;
  stats.persistent_slots = 0;
  stats.largest_bucket_slots = 0;
  stats.pages = 0;
  stats.slices = 0;
  stats.dead_bytes = 0;
  gpu_.AddGauges(&stats);
  if (meta_)
    meta_->AddGauges(&stats);
  stats.live_handles = live_handles_;
  return stats;
}

}  // namespace cuclimb::workloads::cubecl
