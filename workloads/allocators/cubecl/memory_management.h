// SPDX-License-Identifier: Apache-2.0
// cubecl 0.10's MemoryManagement for one stream: the persistent pool, the sliced-pool ladder and
// the reserve order between them (memory_manage.rs L202-259, L451-522).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "workloads/allocators/cubecl/persistent_pool.h"
#include "workloads/allocators/cubecl/sliced_pool.h"
#include "workloads/allocators/cubecl/storage.h"

namespace cuclimb::workloads::cubecl {

enum class AllocationMode { kAuto, kPersistent };

struct MemoryConfig {
  uint64_t max_page = 0;        // total device memory / 4 on CUDA (runtime.rs L97-105)
  uint64_t alignment = 512;     // runtime.rs L76; 16 for the pinned manager
  bool persistent_pool = true;  // false: persistent_memory = "disabled"
  bool size_match = true;       // false: HEAD's opt-in SizeMatch (upstream 0a62060a2)
};

struct PoolShape {
  uint64_t page_size = 0;
  uint64_t max_slice = 0;
};

// The sliced pools after pool 0, smallest page first, ending with the tail pool whose page and
// max slice are max_page. From cur = max_page, while cur >= 32 MiB: cur /= 4, rounded up to the
// alignment, max slice cur / 2^k for k = 1, 2, ...
std::vector<PoolShape> Ladder(uint64_t max_page, uint64_t alignment);

class MemoryManagement {
 public:
  // `storage` and `stats` must outlive the manager.
  MemoryManagement(ComputeStorage* storage, const MemoryConfig& config, AllocatorStats* stats);

  // The reserve path, in order: (1) a free slot of the same effective size in the persistent
  // pool; (2) a new persistent slot if the mode is Persistent or the pool has that size;
  // (3) the first sliced pool that accepts the size: its pages walked, else (4) a new page.
  Reservation Reserve(uint64_t size);

  void SetMode(AllocationMode mode) { mode_ = mode; }
  AllocationMode mode() const { return mode_; }

  // Explicit cleanup (cleanup(true)): free persistent slots and wholly free pages go back.
  void Cleanup();

  // Fills the gauges of `stats` (slots, pages, slices, dead bytes).
  void AddGauges(AllocatorStats* stats) const;

  const PersistentPool& persistent() const { return persistent_; }
  const std::vector<SlicedPool>& pools() const { return pools_; }

 private:
  ComputeStorage* storage_;
  MemoryConfig config_;
  AllocatorStats* stats_;
  AllocationMode mode_ = AllocationMode::kAuto;
  PersistentPool persistent_;
  std::vector<SlicedPool> pools_;  // pools_[0] is the size-0 exclusive pool
};

}  // namespace cuclimb::workloads::cubecl
