// SPDX-License-Identifier: Apache-2.0
// One streaming pass over a trace with a chosen iteration source: every event is observed by the
// iteration boundaries, given its slot once its iteration is final (Boundaries::Ready), and
// aggregated in read order, inline or on aggregation threads (aggregation_thread.h).
//
// Events live in EventBatches from the moment they are decoded: the reader's prefetch workers
// decode into them (TraceReader::TakeBatch), or the reader writes into the batch being filled;
// slots are written next to the events, and a sealed batch whose events all have their slots is
// aggregated (inline) or handed over as it is (threads). Events whose iteration is not final yet
// simply stay in their batch; nothing is copied per event.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>

#include "analysis/aggregation_thread.h"
#include "analysis/analyze.h"
#include "iterations/segmenter.h"
#include "series/aggregator.h"
#include "symbols/frame_classifier.h"
#include "symbols/symbolizer.h"
#include "trace/reader.h"

namespace cuclimb::analysis {

class EventPass {
 public:
  // threads: how many threads may run the aggregation (0: it runs inline; 1: on one thread; 2:
  // the allocation family on a second one), where the reader allows it.
  EventPass(std::unique_ptr<trace::TraceReader> reader, const SegmentChoice& choice,
            const AnalyzeOptions& options, const FrameClassifier& classifier, int threads);
  ~EventPass();
  EventPass(const EventPass&) = delete;
  EventPass& operator=(const EventPass&) = delete;

  // Reads the next events (a batch the reader decoded ahead, or up to kReadEvents) from the reader
  // and feeds them; `stats`, when given, observes each of them first. Returns how many; 0 at the
  // end of what can be read.
  size_t Read(SegmentStats* stats);
  // Feeds events that were read already (the prefix), in read order.
  void Feed(const trace::Event* events, size_t n);
  // After the last event: the rest get their slots and are aggregated; the aggregation threads
  // end, and aggregator() holds the results of the whole trace.
  void Finish();

  trace::TraceReader* reader() const { return reader_.get(); }
  Symbolizer* symbolizer() const { return symbolizer_.get(); }
  const Aggregator& aggregator() const { return *aggregator_; }
  const Boundaries& boundaries() const { return *boundaries_; }

  // Events read per Read(): 32 KiB, handled while in cache.
  static constexpr size_t kReadEvents = 256;
  // Events waiting for their iteration to be final: beyond this many, the oldest get the slot
  // the boundaries known so far give (a boundary thread that went quiet must not hold the rest).
  static constexpr size_t kMaxPending = 1u << 20;

 private:
  // The batch to read into: the last one until sealed, else a new one.
  EventBatch* Filling();
  // The last batch gets no more events (a batch decoded ahead comes after it): sealed, or given
  // back when empty.
  void Seal();
  trace::BatchPool& pool() { return reader_->batches(); }
  // events[from, batch->size) of the last batch were just added: observes and slots them.
  void Take(EventBatch* batch, size_t from);
  // Take() while nothing waits: slots events[i, to) up to the first whose iteration is not final
  // (observed, not slotted); returns its index, or `to`.
  size_t TakeReady(EventBatch* batch, size_t i, size_t to);
  // Gives slots to waiting events, oldest first, while their iteration is final (all: every
  // one).
  void Drain(bool all);
  // The event at the cursor gets `slot`; a full batch that is all slotted moves on.
  void Slotted(uint32_t slot);
  // A batch whose events all have slots: aggregated inline (and reused), or handed over.
  void Done(EventBatch* batch);

  std::unique_ptr<trace::TraceReader> reader_;
  std::unique_ptr<Symbolizer> symbolizer_;
  std::unique_ptr<Aggregator> aggregator_;
  std::unique_ptr<Aggregator> memory_;  // the allocation family's, when it has a thread of its own
  std::unique_ptr<Boundaries> boundaries_;
  // Batches not yet done, in read order, from the reader's pool (batches()). The cursor (the
  // first event without a slot) is in the front one; everything after it waits (pending_
  // events). Every batch but the last is sealed, and none sealed is empty.
  std::deque<EventBatch*> open_;
  size_t cursor_ = 0;
  size_t pending_ = 0;
  // The aggregators' threads, when they have them (declared after them: destroyed first).
  std::unique_ptr<AggregationThread> aggregation_, memory_aggregation_;
};

}  // namespace cuclimb::analysis
