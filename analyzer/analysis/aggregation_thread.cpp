// SPDX-License-Identifier: Apache-2.0
#include "analysis/aggregation_thread.h"

#include <utility>

namespace cuclimb::analysis {

AggregationThread::AggregationThread(Aggregator* aggregator)
    : aggregator_(aggregator), thread_([this] { Run(); }) {}

AggregationThread::~AggregationThread() {
  Finish();
}

void AggregationThread::Flush() {
  std::unique_ptr<Batch> next;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return full_.size() < kQueuedBatches; });
    full_.push_back(std::move(current_));
    if (!empty_.empty()) {
      next = std::move(empty_.back());
      empty_.pop_back();
    }
  }
  changed_.notify_all();
  current_ = next != nullptr ? std::move(next) : std::make_unique<Batch>();
  current_->n = 0;
  synced_ = false;
}

void AggregationThread::Sync() {
  if (current_->n > 0)
    Flush();
  if (synced_)
    return;
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return full_.empty() && !busy_; });
  synced_ = true;
}

void AggregationThread::Finish() {
  if (!thread_.joinable())
    return;
  if (current_->n > 0)
    Flush();
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
    std::unique_ptr<Batch> batch = std::move(full_.front());
    full_.pop_front();
    busy_ = true;
    lock.unlock();
    changed_.notify_all();  // room in the queue
    for (size_t i = 0; i < batch->n; ++i) aggregator_->Process(batch->events[i], batch->slots[i]);
    lock.lock();
    busy_ = false;
    empty_.push_back(std::move(batch));
    changed_.notify_all();  // a Sync() may be waiting for this
  }
}

}  // namespace cuclimb::analysis
