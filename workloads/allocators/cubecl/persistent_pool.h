// SPDX-License-Identifier: Apache-2.0
// The persistent pool (cubecl persistent_pool.rs): one exact-size allocation per slot, slots kept
// per effective size in creation order and scanned linearly for a free one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "workloads/allocators/cubecl/slice.h"
#include "workloads/allocators/cubecl/storage.h"

namespace cuclimb::workloads::cubecl {

class PersistentPool {
 public:
  explicit PersistentPool(uint64_t alignment);

  // Bucket lookup by effective size, then the first free slot in creation order. Each slot
  // visited costs a hash lookup of its id plus a read of its reference count (slots_scanned).
  std::optional<Reservation> TryReserve(uint64_t size, AllocatorStats* stats);

  // Whether a bucket of this effective size exists (has_size, L60-64): what routes any later
  // tensor of a parameter's size here, outside the persistent window too.
  bool HasSize(uint64_t size) const;

  // A new slot: one storage allocation of exactly the effective size, appended to its bucket.
  Reservation Alloc(uint64_t size, ComputeStorage& storage, AllocatorStats* stats);

  // Explicit cleanup: every free slot is released and removed from its bucket.
  void Cleanup(ComputeStorage& storage);

  std::size_t slot_count() const { return slots_.size(); }
  std::size_t bucket_count() const { return buckets_.size(); }
  std::size_t largest_bucket() const;
  // Slots in the bucket of this effective size (0 if none).
  std::size_t BucketSize(uint64_t effective_size) const;

 private:
  struct Slot {
    SliceHandle handle;
    StorageId storage = 0;
    uint64_t effective_size = 0;
  };
  uint64_t alignment_;
  // hashbrown maps in Rust; unordered_map keeps the per-slot lookup a pointer chase here too.
  std::unordered_map<uint64_t, Slot> slots_;                     // slice id -> slot
  std::unordered_map<uint64_t, std::vector<uint64_t>> buckets_;  // effective size -> ids
};

}  // namespace cuclimb::workloads::cubecl
