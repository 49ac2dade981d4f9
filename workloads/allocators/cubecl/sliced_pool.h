// SPDX-License-Identifier: Apache-2.0
// A sliced pool (cubecl sliced_pool.rs): fixed-size pages walked in creation order, each
// coalesced whole before a first-fit attempt; pages are never returned while any byte is dead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "workloads/allocators/cubecl/memory_page.h"
#include "workloads/allocators/cubecl/storage.h"

namespace cuclimb::workloads::cubecl {

class SlicedPool {
 public:
  // `zero_only` models pool 0 of the ladder, an exclusive pool for size-0 requests.
  SlicedPool(uint64_t page_size, uint64_t max_slice, uint64_t alignment, bool zero_only = false);

  // size <= max slice, or a request within 20 % of the page size (sliced_pool.rs L35-44).
  bool Accepts(uint64_t size) const;

  // Walks every page in creation order; each visited page is coalesced, then first-fit.
  std::optional<Reservation> TryReserve(uint64_t size, const ComputeStorage& storage,
                                        AllocatorStats* stats);

  // One new page from the storage (a cuMemAllocAsync of the page size), reserved from.
  Reservation Alloc(uint64_t size, ComputeStorage& storage, AllocatorStats* stats);

  // Explicit cleanup: releases a page only if its free slices sum to exactly the page size, so a
  // page holding padding-bug dead bytes is never released (sliced_pool.rs L110-127).
  void Cleanup(ComputeStorage& storage);

  uint64_t page_size() const { return page_size_; }
  uint64_t max_slice() const { return max_slice_; }
  const std::vector<MemoryPage>& pages() const { return pages_; }

 private:
  uint64_t page_size_;
  uint64_t max_slice_;
  uint64_t alignment_;
  bool zero_only_;
  std::vector<MemoryPage> pages_;
};

}  // namespace cuclimb::workloads::cubecl
