// SPDX-License-Identifier: Apache-2.0
// DropQueue: fence cadence and release of staging buffers.
#include "workloads/allocators/cubecl/drop_queue.h"

#include <utility>

namespace cuclimb::workloads::cubecl {

DropQueue::DropQueue(MemoryBackend* backend, StreamHandle stream, AllocatorStats* stats,
                     std::size_t max_entries, std::size_t max_bytes)
    : backend_(backend),
      stream_(stream),
      stats_(stats),
      max_entries_(max_entries),
      max_bytes_(max_bytes) {}

DropQueue::~DropQueue() {
  if (fence_ != nullptr)
    backend_->EventDestroy(fence_);
  // One last fence covers the pending copies too, so the storage may free their buffers.
  EventHandle last = backend_->EventCreate();
  backend_->EventRecord(last, stream_);
  backend_->EventSynchronize(last);
  backend_->EventDestroy(last);
}

void DropQueue::Push(SliceHandle handle, std::size_t size_bytes) {
  pending_.push_back(std::move(handle));
  pending_bytes_ += size_bytes;
  if (pending_.size() < max_entries_ && pending_bytes_ < max_bytes_)
    return;
  if (fence_ != nullptr) {
    backend_->EventSynchronize(fence_);
    ++stats_->event_waits;
    backend_->EventDestroy(fence_);
  }
  fenced_.clear();  // their copies are done: the staging slices become free again
  fenced_.swap(pending_);
  pending_bytes_ = 0;
  fence_ = backend_->EventCreate();
  backend_->EventRecord(fence_, stream_);
}

}  // namespace cuclimb::workloads::cubecl
