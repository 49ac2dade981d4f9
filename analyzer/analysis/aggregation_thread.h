// SPDX-License-Identifier: Apache-2.0
// The aggregation of one trace on threads of its own. The reading thread decodes events straight
// into an EventBatch, finds the iteration boundaries and writes each event's slot next to it;
// once every event of a full batch has its slot, it hands the batch itself over (no copy) to one
// AggregationThread, or two when the allocation family has its own aggregator. Each runs
// Aggregator::Process on the batches in the order they were added, so the results are those of
// calling Process inline, byte for byte.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "series/aggregator.h"
#include "trace/event_batch.h"
#include "trace/reader.h"

namespace cuclimb::analysis {

using trace::BatchPool;
using trace::EventBatch;

class AggregationThread {
 public:
  // memory_only: only the allocation family's events of each batch are processed (the kMemory
  // aggregator); otherwise all of them.
  AggregationThread(Aggregator* aggregator, bool memory_only, BatchPool* pool);
  ~AggregationThread();  // Finish()es if the caller did not
  AggregationThread(const AggregationThread&) = delete;
  AggregationThread& operator=(const AggregationThread&) = delete;

  // On the feeding thread: the batch (every slot set, holders counting this thread) will be
  // processed on the aggregation thread after those added before it, then released to the pool.
  // Waits while kQueuedBatches are queued.
  void Add(EventBatch* batch);
  // Returns once every batch added so far has been processed and the aggregation thread waits.
  // The reader calls this before it adds to its string or stack tables, which the aggregator
  // reads (TraceReader::GuardTables).
  void Sync();
  // Processes what is left and ends the thread; the aggregator is the caller's again.
  void Finish();

  static constexpr size_t kQueuedBatches = 16;  // ≈ 2 MiB: absorbs the consumer's wake-up delays
  static constexpr size_t kWakeBatches = 4;     // what wakes a consumer that ran dry

 private:
  void Run();

  Aggregator* aggregator_;
  const bool memory_only_;
  BatchPool* pool_;
  bool synced_ = true;  // nothing queued since the last Sync() (feeding thread only)

  std::mutex mutex_;
  std::condition_variable changed_;  // a batch queued, processed, or closing_ set
  std::deque<EventBatch*> full_;     // queued, oldest first
  bool busy_ = false;                // the aggregation thread holds a batch
  bool producer_waiting_ = false;    // Add() waits for the queue to be half empty
  bool consumer_waiting_ = false;    // Run() waits for kWakeBatches
  bool sync_waiting_ = false;        // Sync() waits for everything to be processed
  bool closing_ = false;
  std::thread thread_;
};

}  // namespace cuclimb::analysis
