// SPDX-License-Identifier: Apache-2.0
// One page of a sliced pool (cubecl memory_page.rs): first-fit slices, whole-page coalesce, and
// the padding bookkeeping bug, reproduced on purpose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "workloads/allocators/cubecl/slice.h"
#include "workloads/allocators/device_allocator.h"

namespace cuclimb::workloads::cubecl {

struct Slice {
  SliceHandle handle;
  uint64_t offset = 0;
  uint64_t size = 0;     // "utilization size": what the last reserve asked for
  uint64_t padding = 0;  // rounds size up to the alignment
  uint64_t effective_size() const { return size + padding; }
};

struct PageReservation {
  SliceHandle handle;
  uint64_t offset = 0;
};

class MemoryPage {
 public:
  // A fresh page is one free slice covering it.
  MemoryPage(StorageId storage, uint64_t page_size, uint64_t alignment);

  // First fit in slice order. The fit test compares the slice's *utilization* size with the
  // aligned request and ignores the stored padding (memory_page.rs L129-130): a freed slice whose
  // last user asked for 100 bytes of a 512-byte slot no longer fits a 512-byte request, and a
  // split of a padded slice drops the padding from the books. Those dead bytes come back only
  // when a coalesce merges the slice with a free neighbour. Counts slices_scanned.
  std::optional<PageReservation> TryReserve(uint64_t size, AllocatorStats* stats);

  // Merges every run of >= 2 adjacent free slices into one (summed effective size, padding 0)
  // and, if anything merged, rebuilds the slice vector and rewrites every slice's location in
  // the id -> index map, as memory_page.rs L183-235 does. Counts slices_scanned for the job scan
  // and coalesce_touched for each slice moved by a rebuild.
  void Coalesce(AllocatorStats* stats);

  StorageId storage() const { return storage_; }
  uint64_t page_size() const { return page_size_; }
  const std::vector<Slice>& slices() const { return slices_; }
  // Sum of the effective sizes of free slices.
  uint64_t FreeBytes() const;
  // Bytes lost to the padding bug: page size minus the sum of all effective sizes.
  uint64_t DeadBytes() const;
  // The slice index recorded for a handle id (the descriptor the rebuilds rewrite).
  std::optional<std::size_t> IndexOf(uint64_t slice_id) const;

 private:
  void AddNewSlice(std::size_t index_previous, uint64_t reserved_size_previous, Slice new_slice,
                   AllocatorStats* stats);

  StorageId storage_;
  uint64_t page_size_;
  uint64_t alignment_;
  std::vector<Slice> slices_;
  std::vector<Slice> slices_tmp_;  // reused by the rebuilds, like slices_tmp in Rust
  std::unordered_map<uint64_t, std::size_t> slices_map_;
};

}  // namespace cuclimb::workloads::cubecl
