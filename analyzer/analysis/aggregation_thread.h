// SPDX-License-Identifier: Apache-2.0
// The aggregation of one trace on a thread of its own. The reading thread decodes, finds the
// iteration boundaries and assigns slots; it hands (event, slot) batches over through a bounded
// queue, and this thread runs Aggregator::Process on them in the order they were added, so the
// results are those of calling Process inline, byte for byte. The aggregation is about half of
// the work per event (docs/performance.md), so the two threads split one trace about evenly.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "series/aggregator.h"
#include "trace/reader.h"

namespace cuclimb::analysis {

class AggregationThread {
 public:
  explicit AggregationThread(Aggregator* aggregator);
  ~AggregationThread();  // Finish()es if the caller did not
  AggregationThread(const AggregationThread&) = delete;
  AggregationThread& operator=(const AggregationThread&) = delete;

  // On the feeding thread: Process(ev, slot) will run on the aggregation thread, in this order.
  void Add(const trace::Event& ev, uint32_t slot) {
    current_->events[current_->n] = ev;
    current_->slots[current_->n] = slot;
    if (++current_->n == kBatchEvents)
      Flush();
  }
  // Returns once every event added so far has been processed and the aggregation thread waits.
  // The reader calls this before it adds to its string or stack tables, which the aggregator
  // reads (TraceReader::GuardTables).
  void Sync();
  // Processes what is left and ends the thread; the aggregator is the caller's again.
  void Finish();

 private:
  static constexpr size_t kBatchEvents = 1024;  // 128 KiB of events
  static constexpr size_t kQueuedBatches = 16;  // ≈ 2 MiB: absorbs the consumer's wake-up delays
  struct Batch {
    std::vector<trace::Event> events = std::vector<trace::Event>(kBatchEvents);
    std::vector<uint32_t> slots = std::vector<uint32_t>(kBatchEvents);
    size_t n = 0;
  };

  // Queues the current batch (waiting while the queue is full) and starts another.
  void Flush();
  void Run();

  Aggregator* aggregator_;
  std::unique_ptr<Batch> current_ = std::make_unique<Batch>();  // being filled by Add()
  bool synced_ = true;  // nothing queued since the last Sync() (feeding thread only)

  std::mutex mutex_;
  std::condition_variable changed_;          // a batch queued, processed, or closing_ set
  std::deque<std::unique_ptr<Batch>> full_;  // queued, oldest first
  std::vector<std::unique_ptr<Batch>> empty_;
  bool busy_ = false;  // the aggregation thread holds a batch
  bool closing_ = false;
  std::thread thread_;
};

}  // namespace cuclimb::analysis
