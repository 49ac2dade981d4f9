// SPDX-License-Identifier: Apache-2.0
#include "trace/event_batch.h"

namespace cuclimb::trace {

// Batches are reused oldest first, from a pool of at least kBatches: a batch the aggregation thread
// has just read is still in that core's cache, and writing it again from the reading core costs
// a snoop per line (the decode ran half as fast as inline when the newest batch came back first).
EventBatch* BatchPool::Get() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty() || owned_.size() < kBatches) {
    owned_.push_back(std::make_unique<EventBatch>());
    free_.push_back(owned_.back().get());
  }
  EventBatch* batch = free_.front();
  free_.pop_front();
  batch->size = 0;
  batch->sealed = false;
  batch->strings_needed = 0;
  batch->stacks_needed = 0;
  batch->skipped = 0;
  return batch;
}

void BatchPool::Release(EventBatch* batch) {
  if (batch->holders.fetch_sub(1, std::memory_order_acq_rel) != 1)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(batch);
}

}  // namespace cuclimb::trace
