// SPDX-License-Identifier: Apache-2.0
#include "analysis/aggregation_thread.h"

#include <utility>

namespace cuclimb::analysis {

AggregationThread::AggregationThread(Aggregator* aggregator, bool memory_only, BatchPool* pool)
    : aggregator_(aggregator), memory_only_(memory_only), pool_(pool), thread_([this] { Run(); }) {}

AggregationThread::~AggregationThread() {
  Finish();
}

// The two threads wake each other only across thresholds, not per batch: a producer faster than
// the consumer waits until the queue is half empty, and a consumer that ran dry waits for a few
// batches. Waking per batch cost a futex wake and a sleep on both sides for every 1 024 events,
// and with them the pipeline ran no faster than one thread.
void AggregationThread::Add(EventBatch* batch) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (full_.size() >= kQueuedBatches) {
    producer_waiting_ = true;
    changed_.wait(lock, [this] { return full_.size() <= kQueuedBatches / 2; });
    producer_waiting_ = false;
  }
  full_.push_back(batch);
  const bool wake = consumer_waiting_ && full_.size() >= kWakeBatches;
  lock.unlock();
  if (wake)
    changed_.notify_all();
  synced_ = false;
}

void AggregationThread::Sync() {
  if (synced_)
    return;
  std::unique_lock<std::mutex> lock(mutex_);
  sync_waiting_ = true;
  changed_.notify_all();  // a consumer waiting for kWakeBatches takes what is queued
  changed_.wait(lock, [this] { return full_.empty() && !busy_; });
  sync_waiting_ = false;
  synced_ = true;
}

void AggregationThread::Finish() {
  if (!thread_.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void AggregationThread::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (full_.empty() && !closing_) {
      consumer_waiting_ = true;
      changed_.wait(lock, [this] {
        return closing_ || full_.size() >= kWakeBatches || (sync_waiting_ && !full_.empty());
      });
      consumer_waiting_ = false;
    }
    if (full_.empty())
      return;  // closing, and everything processed
    EventBatch* batch = full_.front();
    full_.pop_front();
    busy_ = true;
    const bool room = producer_waiting_ && full_.size() <= kQueuedBatches / 2;
    lock.unlock();
    if (room)
      changed_.notify_all();
    const size_t n = batch->size;
    if (memory_only_) {
      for (size_t i = 0; i < n; ++i) {
        if (Aggregator::IsMemoryEvent(batch->events[i].type))
          aggregator_->Process(batch->events[i], batch->slots[i]);
      }
    } else {
      for (size_t i = 0; i < n; ++i) aggregator_->Process(batch->events[i], batch->slots[i]);
    }
    pool_->Release(batch);
    lock.lock();
    busy_ = false;
    if (sync_waiting_ && full_.empty())
      changed_.notify_all();
  }
}

}  // namespace cuclimb::analysis
