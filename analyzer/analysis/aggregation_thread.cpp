// SPDX-License-Identifier: Apache-2.0
#include "analysis/aggregation_thread.h"

#include <utility>

namespace cuclimb::analysis {

EventBatch* BatchPool::Get() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (free_.empty()) {
    owned_.push_back(std::make_unique<EventBatch>());
    free_.push_back(owned_.back().get());
  }
  EventBatch* batch = free_.back();
  free_.pop_back();
  batch->size = 0;
  return batch;
}

void BatchPool::Release(EventBatch* batch) {
  if (batch->holders.fetch_sub(1, std::memory_order_acq_rel) != 1)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(batch);
}

AggregationThread::AggregationThread(Aggregator* aggregator, bool memory_only, BatchPool* pool)
    : aggregator_(aggregator), memory_only_(memory_only), pool_(pool), thread_([this] { Run(); }) {}

AggregationThread::~AggregationThread() {
  Finish();
}

void AggregationThread::Add(EventBatch* batch) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return full_.size() < kQueuedBatches; });
    full_.push_back(batch);
  }
  changed_.notify_all();
  synced_ = false;
}

void AggregationThread::Sync() {
  if (synced_)
    return;
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return full_.empty() && !busy_; });
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
    changed_.wait(lock, [this] { return closing_ || !full_.empty(); });
    if (full_.empty())
      return;  // closing, and everything processed
    EventBatch* batch = full_.front();
    full_.pop_front();
    busy_ = true;
    lock.unlock();
    changed_.notify_all();  // room in the queue
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
    changed_.notify_all();  // a Sync() may be waiting for this
  }
}

}  // namespace cuclimb::analysis
