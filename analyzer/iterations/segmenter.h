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

#include <cstdint>
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

  // Every event, in read order, before it is assigned.
  void Observe(const trace::Event& ev) {
    if (ev.tid == tid_ && ev.tid != 0) {
      Advance(ev);
    } else if (ev.type == format::EventType::kRangeEnd && open_ && ev.addr == open_id_) {
      Close(ev.ts);  // a boundary start/end range may end on another thread
    }
  }
  // True when the iteration of an event at ts is final.
  bool Ready(int64_t ts) const { return ts <= watermark_; }
  uint32_t Slot(int64_t ts);
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

  SegmentChoice choice_;
  uint32_t tid_;
  int64_t watermark_;
  std::vector<int64_t> starts_, ends_, payloads_;
  // Range source: the boundary thread's push stack (true = a boundary instance).
  absl::flat_hash_map<uint32_t, std::vector<bool>> stacks_;  // domain → stack
  bool open_ = false;
  uint64_t open_id_ = ~uint64_t{0};  // start/end id of the open boundary instance
  uint32_t last_launch_ = 0;         // launch source with a pair anchor
  int64_t last_launch_ts_ = 0;
  int64_t cached_ = -1;  // last iteration index found by Slot()
  int64_t count_ = 0;
  bool finished_ = false;
  uint64_t ignored_ = 0;
  uint64_t lost_pops_ = 0;
  static constexpr size_t kMaxDepth = 256;  // bounds a stack whose pops were dropped
};

}  // namespace cuclimb::analysis
