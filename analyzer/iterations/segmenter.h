// SPDX-License-Identifier: Apache-2.0
// Iteration boundaries: which source defines them (SegmentStats + ChooseSegmentation) and where
// they fall, learnt while the trace streams by (Boundaries).
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
#include "iterations/iteration_span.h"
#include "iterations/launch_period.h"
#include "trace/reader.h"

namespace cuclimb::analysis {

enum class IterationSource { kNone, kRange, kMark, kLaunch };

const char* SourceName(IterationSource source);

struct SegmentChoice {
  IterationSource source = IterationSource::kNone;
  uint32_t tid = 0;
  uint32_t name = 0, domain = 0;  // string ids of the range or mark
  LaunchPeriod launch;            // kLaunch
  bool user = false;              // chosen by --iteration
  std::string why;

  bool SameBoundaries(const SegmentChoice& o) const {
    return source == o.source && tid == o.tid && name == o.name && domain == o.domain &&
           launch.anchor == o.launch.anchor && launch.anchor_next == o.launch.anchor_next;
  }
};

// Counts what the choice needs: per thread CUDA calls and launch names, per (thread, domain,
// name) the instances and nesting depth of NVTX ranges, and marks. Cheap per event.
class SegmentStats {
 public:
  static constexpr size_t kMaxLaunchPrefix = 1u << 20;  // launch names kept per thread

  // `user_name` is --iteration (empty for automatic); reader resolves string ids.
  SegmentStats(const trace::TraceReader* reader, std::string user_name);
  void Observe(const trace::Event& ev) {
    if (nvtx_only_ && (ev.type < format::EventType::kPush || ev.type > format::EventType::kMark))
      return;
    ObserveAll(ev);
  }
  // After the prefix: only NVTX events matter for the final choice; the per-thread CUDA call
  // counts of the whole trace are handed over at the end (SetCudaCalls) by whoever counted them.
  void ObserveNvtxOnly() { nvtx_only_ = true; }
  void SetCudaCalls(uint32_t tid, uint64_t calls) { threads_[tid].cuda_calls = calls; }

  struct Candidate {
    uint64_t count = 0;
    int min_depth = 1 << 30;
    int64_t first_ts = 0;
  };
  struct Key {
    uint32_t tid, domain, name;
    bool operator==(const Key& o) const {
      return tid == o.tid && domain == o.domain && name == o.name;
    }
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.tid, k.domain, k.name);
    }
  };
  struct ThreadCounts {
    uint64_t events = 0, cuda_calls = 0, launches = 0;
    std::vector<uint32_t> launch_names;  // first kMaxLaunchPrefix
  };

  const absl::flat_hash_map<Key, Candidate>& ranges() const { return ranges_; }
  const absl::flat_hash_map<Key, Candidate>& marks() const { return marks_; }
  const absl::flat_hash_map<uint32_t, ThreadCounts>& threads() const { return threads_; }
  bool MatchesUser(uint32_t name_id) const;
  const std::string& user_name() const { return user_name_; }
  // Thread with the most CUDA calls (ties: lowest tid); 0 when none.
  uint32_t BusiestThread() const;
  // Thread with the most launches; 0 when none.
  uint32_t BusiestLaunchThread() const;

 private:
  struct Open {
    uint32_t name;
    bool counted;
  };
  // Open ranges on the thread, all domains: push stacks plus open start/end ranges. Kept as a
  // count per thread: summing the stacks on each push was quadratic in threads (issue #14).
  int DepthOf(uint32_t tid) const {
    auto it = depth_.find(tid);
    return it == depth_.end() ? 0 : it->second;
  }
  void ObserveAll(const trace::Event& ev);

  const trace::TraceReader* reader_;
  std::string user_name_;
  mutable std::vector<int8_t> user_match_;  // by string id: −1 unknown, 0 no, 1 yes
  absl::flat_hash_map<Key, Candidate> ranges_, marks_;
  absl::flat_hash_map<uint64_t, std::vector<Open>> stacks_;  // (tid, domain) → push stack
  absl::flat_hash_map<uint32_t, int> open_started_;          // tid → open start/end ranges
  absl::flat_hash_map<uint32_t, int> depth_;                 // tid → DepthOf()
  absl::flat_hash_map<uint64_t, uint32_t> started_;          // start/end id → start tid
  absl::flat_hash_map<uint32_t, ThreadCounts> threads_;
  uint32_t last_tid_ = 0;
  ThreadCounts* last_thread_ = nullptr;
  bool nvtx_only_ = false;
};

// Applies the rules of docs/report-schema.md ("Iterations") to the statistics. `launch` is the
// launch-period result for the busiest launching thread (computed once, on the prefix).
SegmentChoice ChooseSegmentation(const SegmentStats& stats, const LaunchPeriod& launch,
                                 const trace::TraceReader& reader);

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
