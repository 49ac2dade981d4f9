// SPDX-License-Identifier: Apache-2.0
// PersistentPool: exact-size buckets, linear scans, explicit-only release.
#include "workloads/allocators/cubecl/persistent_pool.h"

#include <algorithm>
#include <utility>

namespace cuclimb::workloads::cubecl {

PersistentPool::PersistentPool(uint64_t alignment) : alignment_(alignment) {}

std::optional<Reservation> PersistentPool::TryReserve(uint64_t size, AllocatorStats* stats) {
  const auto bucket = buckets_.find(RoundUp(size, alignment_));
  if (bucket == buckets_.end())
    return std::nullopt;
  for (const uint64_t id : bucket->second) {
    ++stats->slots_scanned;
    const Slot& slot = slots_.at(id);
    if (IsFree(slot.handle)) {
      return Reservation{slot.handle, slot.storage, 0, 0};  // address filled by the caller
    }
  }
  return std::nullopt;
}

bool PersistentPool::HasSize(uint64_t size) const {
  return buckets_.count(RoundUp(size, alignment_)) != 0;
}

Reservation PersistentPool::Alloc(uint64_t size, ComputeStorage& storage, AllocatorStats* stats) {
  (void)stats;
  const uint64_t effective_size = RoundUp(size, alignment_);
  const StorageId id = storage.Alloc(effective_size);
  SliceHandle handle = NewSliceHandle();
  const uint64_t slice_id = handle->id;
  slots_.emplace(slice_id, Slot{handle, id, effective_size});
  buckets_[effective_size].push_back(slice_id);
  return Reservation{std::move(handle), id, storage.Address(id), 0};
}

void PersistentPool::Cleanup(ComputeStorage& storage) {
  for (auto it = slots_.begin(); it != slots_.end();) {
    if (!IsFree(it->second.handle)) {
      ++it;
      continue;
    }
    storage.Dealloc(it->second.storage);
    // The bucket stays even when emptied, as in Rust: has_size keeps routing its size here.
    auto& ids = buckets_[it->second.effective_size];
    ids.erase(std::remove(ids.begin(), ids.end(), it->first), ids.end());
    it = slots_.erase(it);
  }
  storage.Flush();
}

std::size_t PersistentPool::largest_bucket() const {
  std::size_t largest = 0;
  for (const auto& [size, ids] : buckets_) largest = std::max(largest, ids.size());
  return largest;
}

std::size_t PersistentPool::BucketSize(uint64_t effective_size) const {
  const auto it = buckets_.find(effective_size);
  return it == buckets_.end() ? 0 : it->second.size();
}

}  // namespace cuclimb::workloads::cubecl
