// SPDX-License-Identifier: Apache-2.0
#include "analysis/event_pass.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "iterations/segment_stats.h"

namespace cuclimb::analysis {

EventPass::EventPass(std::unique_ptr<trace::TraceReader> reader, const SegmentChoice& choice,
                     const AnalyzeOptions& options, const FrameClassifier& classifier, int threads)
    : reader_(std::move(reader)) {
  symbolizer_ = std::make_unique<Symbolizer>(
      options.symbol_dirs, classifier, options.host_root + "/usr/lib/debug", options.host_root);
  const bool pseudo =
      choice.source == IterationSource::kMark || choice.source == IterationSource::kLaunch;
  const uint32_t iteration_tid = pseudo ? choice.tid : 0;
  boundaries_ = std::make_unique<Boundaries>(choice);
  // The aggregators read the reader's tables: no thread unless the reader guards them.
  const bool threaded = threads > 0 && reader_->GuardTables({});
  const bool split = threaded && threads >= 2;
  using Family = Aggregator::Family;
  aggregator_ = std::make_unique<Aggregator>(reader_.get(), symbolizer_.get(), iteration_tid,
                                             choice.tid, split ? Family::kOthers : Family::kAll);
  if (!threaded)
    return;
  aggregation_ = std::make_unique<AggregationThread>(aggregator_.get(), false, &pool());
  if (split) {
    memory_ = std::make_unique<Aggregator>(reader_.get(), symbolizer_.get(), iteration_tid,
                                           choice.tid, Family::kMemory);
    memory_aggregation_ = std::make_unique<AggregationThread>(memory_.get(), true, &pool());
  }
  AggregationThread* a = aggregation_.get();
  AggregationThread* m = memory_aggregation_.get();
  reader_->GuardTables([a, m] {
    a->Sync();
    if (m != nullptr)
      m->Sync();
  });
}

EventPass::~EventPass() {
  if (aggregation_ != nullptr)
    reader_->GuardTables({});
}

EventBatch* EventPass::Filling() {
  if (open_.empty() || open_.back()->sealed)
    open_.push_back(pool().Get());
  return open_.back();
}

void EventPass::Seal() {
  if (open_.empty() || open_.back()->sealed)
    return;
  EventBatch* batch = open_.back();
  if (batch->size == 0) {  // nothing was read into it
    open_.pop_back();
    pool().GiveBack(batch);
    return;
  }
  batch->sealed = true;
  if (open_.size() == 1 && cursor_ == batch->size) {  // every event has its slot already
    open_.pop_front();
    cursor_ = 0;
    Done(batch);
  }
}

size_t EventPass::Read(SegmentStats* stats) {
  if (EventBatch* ahead = reader_->TakeBatch()) {
    // Decoded ahead, sealed: it follows the batch being filled, which is then complete.
    Seal();
    open_.push_back(ahead);
    if (stats != nullptr) {
      for (size_t i = 0; i < ahead->size; ++i) stats->Observe(ahead->events[i]);
    }
    const size_t n = ahead->size;
    Take(ahead, 0);
    return n;
  }
  EventBatch* batch = Filling();
  const size_t from = batch->size;
  const size_t n =
      reader_->Read(batch->events + from, std::min(kReadEvents, EventBatch::kCapacity - from));
  if (n == 0)
    return 0;
  if (stats != nullptr) {
    for (size_t i = from; i < from + n; ++i) stats->Observe(batch->events[i]);
  }
  batch->size = from + n;
  batch->sealed = batch->size == EventBatch::kCapacity;
  Take(batch, from);
  return n;
}

void EventPass::Feed(const trace::Event* events, size_t n) {
  while (n > 0) {
    EventBatch* batch = Filling();
    const size_t from = batch->size;
    const size_t k = std::min(n, EventBatch::kCapacity - from);
    std::memcpy(static_cast<void*>(batch->events + from), events, k * sizeof(trace::Event));
    batch->size = from + k;
    batch->sealed = batch->size == EventBatch::kCapacity;
    Take(batch, from);
    events += k;
    n -= k;
  }
}

void EventPass::Take(EventBatch* batch, size_t from) {
  Boundaries& b = *boundaries_;
  const size_t to = batch->size;  // the batch may be done (and gone) after its last event
  size_t i = from;
  while (i < to) {
    if (pending_ == 0) {  // the cursor is at event i: the common case, in a tight loop
      i = TakeReady(batch, i, to);
      if (i == to)
        return;
      ++pending_;  // event i, observed, waits for its iteration; so will the ones after it
      ++i;
      continue;
    }
    b.Observe(batch->events[i]);
    ++pending_;
    Drain(false);
    ++i;
  }
}

size_t EventPass::TakeReady(EventBatch* batch, size_t i, size_t to) {
  Boundaries& b = *boundaries_;
  Aggregator* inline_aggregator = aggregation_ == nullptr ? aggregator_.get() : nullptr;
  for (; i < to; ++i) {
    const trace::Event& ev = batch->events[i];
    b.Observe(ev);
    if (!b.Ready(ev.ts))
      break;
    const uint32_t slot = b.Slot(ev.ts);
    if (inline_aggregator != nullptr)
      inline_aggregator->Process(ev, slot);
    else
      batch->slots[i] = slot;
  }
  cursor_ = i;
  if (cursor_ == batch->size && batch->sealed) {
    open_.pop_front();
    cursor_ = 0;
    Done(batch);
  }
  return i;
}

void EventPass::Drain(bool all) {
  Boundaries& b = *boundaries_;
  while (pending_ > 0) {
    const int64_t ts = open_.front()->events[cursor_].ts;
    if (!all && pending_ <= kMaxPending && !b.Ready(ts))
      return;
    --pending_;
    Slotted(b.Slot(ts));
  }
}

void EventPass::Slotted(uint32_t slot) {
  EventBatch* batch = open_.front();
  if (aggregation_ == nullptr)
    aggregator_->Process(batch->events[cursor_], slot);
  else
    batch->slots[cursor_] = slot;
  if (++cursor_ == batch->size && batch->sealed) {
    open_.pop_front();
    cursor_ = 0;
    Done(batch);
  }
}

void EventPass::Done(EventBatch* batch) {
  if (aggregation_ == nullptr) {
    pool().GiveBack(batch);  // processed already, event by event
    return;
  }
  batch->holders.store(memory_aggregation_ != nullptr ? 2 : 1, std::memory_order_relaxed);
  aggregation_->Add(batch);
  if (memory_aggregation_ != nullptr)
    memory_aggregation_->Add(batch);
}

void EventPass::Finish() {
  boundaries_->Finish();
  Drain(true);
  // At most one batch is left, not sealed, every event slotted.
  while (!open_.empty()) {
    EventBatch* batch = open_.front();
    open_.pop_front();
    cursor_ = 0;
    Done(batch);
  }
  if (aggregation_ != nullptr) {
    aggregation_->Finish();
    if (memory_aggregation_ != nullptr)
      memory_aggregation_->Finish();
    reader_->GuardTables({});
    aggregation_.reset();
    memory_aggregation_.reset();
  }
  aggregator_->Finish();
  if (memory_ != nullptr) {
    memory_->Finish();
    aggregator_->TakeMemory(memory_.get());
    memory_.reset();
  }
}

}  // namespace cuclimb::analysis
