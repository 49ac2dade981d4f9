// SPDX-License-Identifier: Apache-2.0
// MemoryPage: reserve, split and coalesce with cubecl 0.10's exact bookkeeping.
#include "workloads/allocators/cubecl/memory_page.h"

#include <utility>

namespace cuclimb::workloads::cubecl {

MemoryPage::MemoryPage(StorageId storage, uint64_t page_size, uint64_t alignment)
    : storage_(storage), page_size_(page_size), alignment_(alignment) {
  Slice whole{NewSliceHandle(), 0, page_size, 0};
  slices_map_.emplace(whole.handle->id, 0);
  slices_.push_back(std::move(whole));
}

std::optional<PageReservation> MemoryPage::TryReserve(uint64_t size, AllocatorStats* stats) {
  const uint64_t padding = Padding(size, alignment_);
  const uint64_t effective_size = size + padding;
  for (std::size_t index = 0; index < slices_.size(); ++index) {
    ++stats->slices_scanned;
    Slice& slice = slices_[index];
    // The padding bug: `slice.size`, not `slice.effective_size()`.
    if (slice.size < effective_size || !IsFree(slice.handle))
      continue;
    const bool can_be_split = slice.size > effective_size;
    const uint64_t old_offset = slice.offset;
    const uint64_t old_size = slice.size;
    slice.size = size;
    slice.padding = padding;
    PageReservation reservation{slice.handle, old_offset};
    if (can_be_split) {
      // The remainder starts after the new effective size and keeps the *old utilization* size
      // minus it: the old padding is lost here.
      Slice rest{NewSliceHandle(), old_offset + effective_size, old_size - effective_size, 0};
      AddNewSlice(index, size, std::move(rest), stats);
    }
    return reservation;
  }
  return std::nullopt;
}

void MemoryPage::AddNewSlice(std::size_t index_previous, uint64_t reserved_size_previous,
                             Slice new_slice, AllocatorStats* stats) {
  // Rebuilt from scratch, every descriptor rewritten: O(slices) per split, as in Rust.
  slices_map_.clear();
  slices_tmp_.clear();
  slices_tmp_.reserve(slices_.size() + 1);
  for (std::size_t index = 0; index < slices_.size(); ++index) {
    ++stats->coalesce_touched;
    Slice& slice = slices_[index];
    if (index == index_previous) {
      slice.size = reserved_size_previous;
      slices_map_[slice.handle->id] = slices_tmp_.size();
      slices_tmp_.push_back(std::move(slice));
      slices_map_[new_slice.handle->id] = slices_tmp_.size();
      slices_tmp_.push_back(std::move(new_slice));
    } else {
      slices_map_[slice.handle->id] = slices_tmp_.size();
      slices_tmp_.push_back(std::move(slice));
    }
  }
  slices_.swap(slices_tmp_);
  slices_tmp_.clear();
}

void MemoryPage::Coalesce(AllocatorStats* stats) {
  // The memory job: runs of adjacent free slices; a run of one merges with nothing.
  struct Run {
    std::size_t start;
    std::size_t count;
  };
  std::vector<Run> runs;
  std::size_t run_start = 0;
  std::size_t run_count = 0;
  for (std::size_t index = 0; index < slices_.size(); ++index) {
    ++stats->slices_scanned;
    if (IsFree(slices_[index].handle)) {
      if (run_count == 0)
        run_start = index;
      ++run_count;
    } else {
      if (run_count >= 2)
        runs.push_back({run_start, run_count});
      run_count = 0;
    }
  }
  if (run_count >= 2)
    runs.push_back({run_start, run_count});
  if (runs.empty())
    return;

  slices_map_.clear();
  slices_tmp_.clear();
  std::size_t next_run = 0;
  for (std::size_t index = 0; index < slices_.size(); ++index) {
    ++stats->coalesce_touched;
    if (next_run < runs.size() && index == runs[next_run].start) {
      const Run run = runs[next_run++];
      Slice merged{NewSliceHandle(), slices_[index].offset, 0, 0};
      for (std::size_t j = index; j < index + run.count; ++j) {
        merged.size += slices_[j].effective_size();
      }
      stats->coalesce_touched += run.count - 1;
      slices_map_[merged.handle->id] = slices_tmp_.size();
      slices_tmp_.push_back(std::move(merged));
      index += run.count - 1;
      continue;
    }
    slices_map_[slices_[index].handle->id] = slices_tmp_.size();
    slices_tmp_.push_back(std::move(slices_[index]));
  }
  slices_.swap(slices_tmp_);
  slices_tmp_.clear();
}

uint64_t MemoryPage::FreeBytes() const {
  uint64_t free_bytes = 0;
  for (const Slice& slice : slices_) {
    if (IsFree(slice.handle))
      free_bytes += slice.effective_size();
  }
  return free_bytes;
}

uint64_t MemoryPage::DeadBytes() const {
  uint64_t accounted = 0;
  for (const Slice& slice : slices_) accounted += slice.effective_size();
  return accounted >= page_size_ ? 0 : page_size_ - accounted;
}

std::optional<std::size_t> MemoryPage::IndexOf(uint64_t slice_id) const {
  const auto it = slices_map_.find(slice_id);
  if (it == slices_map_.end())
    return std::nullopt;
  return it->second;
}

}  // namespace cuclimb::workloads::cubecl
