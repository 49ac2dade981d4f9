// SPDX-License-Identifier: Apache-2.0
// SlicedPool: the page walk, page creation and cleanup rule of cubecl 0.10.
#include "workloads/allocators/cubecl/sliced_pool.h"

#include <cstdio>
#include <cstdlib>

namespace cuclimb::workloads::cubecl {

SlicedPool::SlicedPool(uint64_t page_size, uint64_t max_slice, uint64_t alignment, bool zero_only)
    : page_size_(page_size), max_slice_(max_slice), alignment_(alignment), zero_only_(zero_only) {}

bool SlicedPool::Accepts(uint64_t size) const {
  if (zero_only_)
    return size == 0;
  if (size <= max_slice_)
    return true;
  return size <= page_size_ && page_size_ - size <= page_size_ / 5;
}

std::optional<Reservation> SlicedPool::TryReserve(uint64_t size, const ComputeStorage& storage,
                                                  AllocatorStats* stats) {
  for (MemoryPage& page : pages_) {
    ++stats->pages_visited;
    page.Coalesce(stats);
    if (auto hit = page.TryReserve(size, stats)) {
      const uint64_t base = storage.Address(page.storage());
      return Reservation{std::move(hit->handle), page.storage(), base + hit->offset, hit->offset};
    }
  }
  return std::nullopt;
}

Reservation SlicedPool::Alloc(uint64_t size, ComputeStorage& storage, AllocatorStats* stats) {
  const StorageId id = storage.Alloc(page_size_);
  pages_.emplace_back(id, page_size_, alignment_);
  auto hit = pages_.back().TryReserve(size, stats);
  if (!hit) {
    std::fprintf(stderr, "cubecl model: %llu bytes do not fit a fresh %llu-byte page\n",
                 static_cast<unsigned long long>(size),
                 static_cast<unsigned long long>(page_size_));
    std::abort();
  }
  return Reservation{std::move(hit->handle), id, storage.Address(id) + hit->offset, hit->offset};
}

void SlicedPool::Cleanup(ComputeStorage& storage) {
  std::vector<MemoryPage> kept;
  kept.reserve(pages_.size());
  for (MemoryPage& page : pages_) {
    if (page.FreeBytes() == page_size_) {
      storage.Dealloc(page.storage());
    } else {
      kept.push_back(std::move(page));
    }
  }
  pages_.swap(kept);
}

}  // namespace cuclimb::workloads::cubecl
