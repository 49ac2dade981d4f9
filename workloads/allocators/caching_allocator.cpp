// SPDX-License-Identifier: Apache-2.0
// CachingAllocator: bin rounding, per-stream free lists and empty_cache.
#include "workloads/allocators/caching_allocator.h"

namespace cuclimb::workloads {

CachingAllocator::CachingAllocator(MemoryBackend* backend, StreamHandle stream, bool nvtx_mem)
    : backend_(backend),
      stream_(stream),
      nvtx_(nvtx_mem ? std::make_unique<NvtxMemTracker>("cuclimb-adam/caching") : nullptr) {}

CachingAllocator::~CachingAllocator() {
  for (const auto& [address, size] : block_sizes_) {
    if (nvtx_)
      nvtx_->UnregisterHeap(address);
    backend_->DeviceFree(address, stream_);
  }
}

std::size_t CachingAllocator::BinSize(std::size_t size_bytes) {
  const std::size_t round = size_bytes <= kSmallLimit ? kSmallRound : kLargeRound;
  const std::size_t bin = (size_bytes + round - 1) / round * round;
  return bin == 0 ? round : bin;
}

Allocation CachingAllocator::Allocate(std::size_t size_bytes) {
  ++stats_.reserves;
  const std::size_t bin = BinSize(size_bytes);
  auto& free_list = free_lists_[{stream_, bin}];
  uint64_t address = 0;
  if (!free_list.empty()) {
    address = free_list.back();  // LIFO: the most recently freed block is the warmest
    free_list.pop_back();
  } else {
    address = backend_->DeviceAlloc(bin, stream_);
    ++stats_.device_allocs;
    stats_.reserved_bytes += bin;
    block_sizes_.emplace(address, bin);
    if (nvtx_)
      nvtx_->RegisterHeap(address, bin);
  }
  if (nvtx_)
    nvtx_->RegisterRegion(address, address, size_bytes);
  ++stats_.live_handles;
  Allocation allocation;
  allocation.address = address;
  allocation.size_bytes = size_bytes;
  allocation.tag = bin;
  return allocation;
}

void CachingAllocator::Free(Allocation allocation) {
  if (!allocation)
    return;
  if (nvtx_)
    nvtx_->UnregisterRegion(allocation.address);
  free_lists_[{stream_, allocation.tag}].push_back(allocation.address);
  --stats_.live_handles;
}

void CachingAllocator::Cleanup() {
  for (auto& [key, addresses] : free_lists_) {
    for (const uint64_t address : addresses) {
      if (nvtx_)
        nvtx_->UnregisterHeap(address);
      backend_->DeviceFree(address, stream_);
      ++stats_.device_frees;
      stats_.reserved_bytes -= block_sizes_.at(address);
      block_sizes_.erase(address);
    }
    addresses.clear();
  }
}

AllocatorStats CachingAllocator::Stats() const {
  AllocatorStats stats = stats_;
  stats.slices = cached_blocks();
  return stats;
}

std::size_t CachingAllocator::cached_blocks() const {
  std::size_t cached = 0;
  for (const auto& [key, addresses] : free_lists_) cached += addresses.size();
  return cached;
}

}  // namespace cuclimb::workloads
