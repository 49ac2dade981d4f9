// SPDX-License-Identifier: Apache-2.0
// Iteration boundaries: which source defines them (SegmentStats + ChooseSegmentation, in
// segment_stats.h and choice.h) and where they fall, learnt while the trace streams by
// (Boundaries).
//
// Events arrive only roughly in time order: each thread's events are in order, but threads are
// interleaved in batches and GPU records come late. Boundaries therefore keeps a watermark, the
// latest timestamp seen on the boundary thread: every boundary before it is known, so an event
// at or before the watermark can be given its iteration for good (Ready()).
//
// Slots: iteration i owns slot 2i+1 (from its start to its end) and slot 2i+2 (the gap after
// its end, before the next start); slot 0 is the prologue. Only at the end is it known which
// slots are the epilogue (IterationOfSlot()).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "iterations/choice.h"
#include "iterations/iteration_span.h"
#include "iterations/launch_period.h"
#include "iterations/segment_stats.h"
#include "report/report.h"
#include "trace/reader.h"

namespace cuclimb::analysis {

class Boundaries {
 public:
  explicit Boundaries(const SegmentChoice& choice);
  Boundaries(const Boundaries&) = delete;  // it keeps a pointer into its own map
  Boundaries& operator=(const Boundaries&) = delete;

  // Every event, in read order, before it is assigned. Most events of the boundary thread are of
  // types that cannot move a boundary: they only raise the watermark, inline.
  void Observe(const trace::Event& ev) {
    if (ev.tid == tid_ && ev.tid != 0) {
      if ((boundary_types_ >> (static_cast<unsigned>(ev.type) & 63)) & 1)
        Advance(ev);
      else
        watermark_ = std::min(std::max(watermark_, ev.ts), ceiling_);
    } else if (ev.type == format::EventType::kRangeEnd && open_ && ev.addr == open_id_) {
      Close(ev.ts);  // a boundary start/end range may end on another thread
    }
  }
  // True when the iteration of an event at ts is final.
  bool Ready(int64_t ts) const { return ts <= watermark_; }
  // The slot of an event at ts. Consecutive events nearly always fall between the same two
  // boundaries: that interval and its slot are kept, so the common case is two compares.
  uint32_t Slot(int64_t ts) {
    if (ts >= slot_from_ && ts < slot_to_)
      return ts <= slot_end_ ? slot_ : slot_ + 1;
    return FindSlot(ts);
  }
  // After the last event: fixes the count and which slots are the epilogue.
  void Finish();

  int64_t count() const { return count_; }
  // −1: prologue, −2: epilogue, else the iteration.
  int64_t IterationOfSlot(uint32_t slot) const;
  std::vector<IterationSpan> Spans() const;
  uint64_t ignored_boundaries() const { return ignored_; }
  // Iteration ranges that began while the previous one was still open (its pop was lost).
  uint64_t lost_pops() const { return lost_pops_; }

 private:
  void Advance(const trace::Event& ev);
  void Start(int64_t ts, int64_t payload);
  void Close(int64_t ts);
  // The push stack of a domain; the last one is kept (a flat map moves its entries when one is
  // added, so it is looked up again whenever the domain changes).
  std::vector<bool>& StackOf(uint32_t domain) {
    if (domain != last_domain_ || last_stack_ == nullptr) {
      last_stack_ = &stacks_[domain];
      last_domain_ = domain;
    }
    return *last_stack_;
  }
  // Slot() outside the kept interval: finds the interval of ts and keeps it.
  uint32_t FindSlot(int64_t ts);
  // After a boundary changed: the kept interval is empty until the next FindSlot().
  void ForgetSlot() {
    slot_from_ = std::numeric_limits<int64_t>::max();
    slot_to_ = std::numeric_limits<int64_t>::min();
  }

  SegmentChoice choice_;
  uint32_t tid_;
  uint64_t boundary_types_ = 0;  // bit t: events of type t on the boundary thread go to Advance()
  int64_t watermark_;
  // The watermark stays below a launch that may still start an iteration (a pair anchor).
  int64_t ceiling_ = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> starts_, ends_, payloads_;
  // Range source: the boundary thread's push stack (true = a boundary instance).
  absl::flat_hash_map<uint32_t, std::vector<bool>> stacks_;  // domain → stack
  uint32_t last_domain_ = 0;
  std::vector<bool>* last_stack_ = nullptr;
  bool open_ = false;
  uint64_t open_id_ = ~uint64_t{0};  // start/end id of the open boundary instance
  uint32_t last_launch_ = 0;         // launch source with a pair anchor
  int64_t last_launch_ts_ = 0;
  // Slot(): events in [slot_from_, slot_to_) get slot_ up to slot_end_, slot_ + 1 after it.
  int64_t slot_from_ = 0, slot_to_ = 0, slot_end_ = 0;
  uint32_t slot_ = 0;
  int64_t count_ = 0;
  bool finished_ = false;
  uint64_t ignored_ = 0;
  uint64_t lost_pops_ = 0;
  static constexpr size_t kMaxDepth = 256;  // bounds a stack whose pops were dropped
};

}  // namespace cuclimb::analysis
