// SPDX-License-Identifier: Apache-2.0
// MemoryManagement: ladder construction and the reserve order of cubecl 0.10.
#include "workloads/allocators/cubecl/memory_management.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace cuclimb::workloads::cubecl {
namespace {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kLadderStop = 32 * kMiB;

}  // namespace

std::vector<PoolShape> Ladder(uint64_t max_page, uint64_t alignment) {
  std::vector<PoolShape> shapes;
  uint64_t current = max_page;
  uint64_t divisor = 2;
  while (current >= kLadderStop) {
    current = RoundUp(current / 4, alignment);
    shapes.push_back({current, current / divisor});
    divisor *= 2;
  }
  std::reverse(shapes.begin(), shapes.end());
  shapes.push_back({max_page, max_page});
  return shapes;
}

MemoryManagement::MemoryManagement(ComputeStorage* storage, const MemoryConfig& config,
                                   AllocatorStats* stats)
    : storage_(storage), config_(config), stats_(stats), persistent_(config.alignment) {
  pools_.emplace_back(config.alignment, 0, config.alignment, /*zero_only=*/true);
  for (const PoolShape& shape : Ladder(config.max_page, config.alignment)) {
    pools_.emplace_back(shape.page_size, shape.max_slice, config.alignment);
  }
}

Reservation MemoryManagement::Reserve(uint64_t size) {
  ++stats_->reserves;
  if (config_.persistent_pool) {
    if (auto hit = persistent_.TryReserve(size, stats_)) {
      hit->address = storage_->Address(hit->storage);
      return std::move(*hit);
    }
    const bool routed =
        mode_ == AllocationMode::kPersistent || (config_.size_match && persistent_.HasSize(size));
    if (routed)
      return persistent_.Alloc(size, *storage_, stats_);
  }
  for (SlicedPool& pool : pools_) {
    if (!pool.Accepts(size))
      continue;
    if (auto hit = pool.TryReserve(size, *storage_, stats_))
      return std::move(*hit);
    return pool.Alloc(size, *storage_, stats_);
  }
  std::fprintf(stderr, "cubecl model: no pool accepts %llu bytes (max page %llu)\n",
               static_cast<unsigned long long>(size),
               static_cast<unsigned long long>(config_.max_page));
  std::exit(3);
}

void MemoryManagement::Cleanup() {
  if (config_.persistent_pool)
    persistent_.Cleanup(*storage_);
  for (SlicedPool& pool : pools_) pool.Cleanup(*storage_);
  storage_->Flush();
}

void MemoryManagement::AddGauges(AllocatorStats* stats) const {
  stats->persistent_slots += persistent_.slot_count();
  stats->largest_bucket_slots =
      std::max<uint64_t>(stats->largest_bucket_slots, persistent_.largest_bucket());
  for (const SlicedPool& pool : pools_) {
    stats->pages += pool.pages().size();
    for (const MemoryPage& page : pool.pages()) {
      stats->slices += page.slices().size();
      stats->dead_bytes += page.DeadBytes();
    }
  }
}

}  // namespace cuclimb::workloads::cubecl
