// SPDX-License-Identifier: Apache-2.0
// What the choice of iteration source needs to know about a trace, counted while it streams by:
// per thread its CUDA calls and launches, per (thread, domain, name) the instances of NVTX ranges
// and marks, how deep the ranges nest, and how much of their thread's work they enclose.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "trace/event_kinds.h"
#include "trace/reader.h"

namespace cuclimb::analysis {

class SegmentStats {
 public:
  static constexpr size_t kMaxLaunchPrefix = 1u << 20;  // launch names kept per thread
  static constexpr size_t kMaxDepth = 256;              // bounds a stack whose pops were lost

  // `user_name` is --iteration (empty for automatic); reader resolves string ids.
  SegmentStats(const trace::TraceReader* reader, std::string user_name);

  // Every event of the trace, in read order. Per event: a type test and, for CUDA calls, two
  // counter increments on the (cached) thread; NVTX events do a little more.
  void Observe(const trace::Event& ev) {
    const format::EventType t = ev.type;
    if (t >= format::EventType::kPush && t <= format::EventType::kMark) {
      ObserveNvtx(ev);
    } else if (ev.tid == 0) {
      return;
    } else if (collect_prefix_) {
      ObserveCall(ev);
    } else if (trace::IsCudaCall(t)) {  // the hot path after the prefix
      ThreadCounts& tc = Thread(ev.tid);
      ++tc.cuda_calls;
      tc.launches += t == format::EventType::kLaunch;
    }
  }
  // After the prefix: launch names (for the launch period) and per-thread event counts are no
  // longer collected; calls, launches and NVTX ranges still are, to the end of the trace.
  void EndPrefix() { collect_prefix_ = false; }

  struct Candidate {
    uint64_t count = 0;
    int min_depth = 1 << 30;  // least nesting depth of any instance (0 = outermost)
    int64_t first_ts = 0;
    // The thread's work inside the range's instances, for Coverage(). An instance nested in
    // another of the same range is counted once: the outer one, when it closes, counts only what
    // its inner ones did not; when it never closes (its pop was lost) the inner ones still count.
    uint64_t launches_inside = 0, calls_inside = 0;
    int64_t inside_ns = 0, last_end = 0;
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
    uint64_t events = 0;  // in the prefix only
    uint64_t cuda_calls = 0, launches = 0;
    int depth = 0;                       // NVTX ranges open now on the thread (all domains)
    std::vector<uint32_t> launch_names;  // the first kMaxLaunchPrefix, in the prefix only
  };

  // Node maps: an open instance keeps a pointer to its candidate.
  using CandidateMap = absl::node_hash_map<Key, Candidate>;
  const CandidateMap& ranges() const { return ranges_; }
  const CandidateMap& marks() const { return marks_; }
  const absl::flat_hash_map<uint32_t, ThreadCounts>& threads() const { return threads_; }
  bool MatchesUser(uint32_t name_id) const;
  const std::string& user_name() const { return user_name_; }
  // Thread with the most CUDA calls (ties: lowest tid); 0 when none.
  uint32_t BusiestThread() const;
  // Thread with the most launches; 0 when none.
  uint32_t BusiestLaunchThread() const;

  // The share of its thread's work that a range encloses, in [0, 1]: of the thread's kernel
  // launches when it made any, else of its CUDA calls, else of the time from the range's first
  // start to its last end. A program's iteration range encloses nearly all of it; a library's
  // per-call range or a logging range a small part. *basis (when given) names the measure:
  // "launches", "CUDA calls" or "time".
  double Coverage(const Key& key, const Candidate& c, const char** basis = nullptr) const;

 private:
  struct Open {
    uint32_t name;
    Candidate* candidate;
    int64_t ts;
    uint64_t launches_at, calls_at;  // the thread's counters when it opened
    // Already counted by closed instances of the same range nested inside this one.
    uint64_t nested_launches = 0, nested_calls = 0;
    int64_t nested_ns = 0;
  };
  struct Started {
    Key key;
    Open open;
  };
  ThreadCounts& Thread(uint32_t tid) {
    if (tid != last_tid_ || last_thread_ == nullptr) {
      last_thread_ = &threads_[tid];  // re-fetched on every change: inserts move entries
      last_tid_ = tid;
    }
    return *last_thread_;
  }
  void ObserveCall(const trace::Event& ev);
  void ObserveNvtx(const trace::Event& ev);
  static Open Opening(const ThreadCounts& tc, uint32_t name, Candidate* c, int64_t ts) {
    return {name, c, ts, tc.launches, tc.cuda_calls};
  }
  // Counts a closing instance; `outer` is the nearest open instance of the same range that
  // encloses it (nullptr when none), which will not count it again.
  static void Close(const Open& open, const ThreadCounts& tc, int64_t ts, Open* outer);
  std::vector<Open>& StackOf(uint32_t tid, uint32_t domain) {
    const uint64_t key = (uint64_t{tid} << 32) | domain;
    if (key != last_stack_key_ || last_stack_ == nullptr) {
      last_stack_ = &stacks_[key];  // a node map: the pointer stays valid
      last_stack_key_ = key;
    }
    return *last_stack_;
  }

  const trace::TraceReader* reader_;
  std::string user_name_;
  mutable std::vector<int8_t> user_match_;  // by string id: −1 unknown, 0 no, 1 yes
  CandidateMap ranges_, marks_;
  absl::node_hash_map<uint64_t, std::vector<Open>> stacks_;  // (tid, domain) → push stack
  uint64_t last_stack_key_ = ~uint64_t{0};
  std::vector<Open>* last_stack_ = nullptr;
  absl::flat_hash_map<uint64_t, Started> started_;  // start/end id → open instance
  absl::flat_hash_map<uint32_t, ThreadCounts> threads_;
  uint32_t last_tid_ = 0;
  ThreadCounts* last_thread_ = nullptr;
  bool collect_prefix_ = true;
};

}  // namespace cuclimb::analysis
