// SPDX-License-Identifier: Apache-2.0
// The batches events travel in from the reader to the aggregation: a binary reader's prefetch
// workers decode column chunks straight into them (BinaryReader), the analysis writes each
// event's slot next to it and hands the batch as it is to its aggregation threads
// (analysis/aggregation_thread.h). Nothing is copied per event on the way.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "interposer/format/trace_format.h"

namespace cuclimb::trace {

// Events in read order with their slots.
struct EventBatch {
  static constexpr size_t kCapacity = 1024;  // 132 KiB with the slots
  format::Event events[kCapacity];
  uint32_t slots[kCapacity];
  size_t size = 0;
  // No event will be added: the batch is done once its `size` events have their slots. Batches
  // decoded ahead come sealed, and may hold fewer than kCapacity (a chunk's last ones).
  bool sealed = false;
  // Decoded ahead, before the definitions up to its chunk's were applied: the string and stack
  // tables must hold this many entries for its events' ids to be defined (the reading thread
  // checks), and events of unknown types (a newer minor's) were skipped among them.
  uint64_t strings_needed = 0;
  uint64_t stacks_needed = 0;
  uint64_t skipped = 0;
  std::atomic<int> holders{0};  // threads that have not processed it yet
};

// The batches of one trace. A batch handed to other threads comes back when the last of them is
// done with it; batches are reused, so their number stays what the queues, the prefetch workers
// and the reading thread hold at once.
class BatchPool {
 public:
  // A batch with size 0, not sealed.
  EventBatch* Get();
  // One holder is done with `batch`; the last one puts it back.
  void Release(EventBatch* batch);
  // The only holder is done with `batch`.
  void GiveBack(EventBatch* batch) {
    batch->holders.store(1, std::memory_order_relaxed);
    Release(batch);
  }
  size_t allocated() const { return owned_.size(); }

  static constexpr size_t kBatches = 40;  // ≈ 5 MiB: two queues of 16 and the reader's

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<EventBatch>> owned_;
  std::deque<EventBatch*> free_;  // released, oldest first
};

}  // namespace cuclimb::trace
