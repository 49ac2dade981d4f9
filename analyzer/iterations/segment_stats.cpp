// SPDX-License-Identifier: Apache-2.0
// Counting what the choice of iteration source needs.
#include "iterations/segment_stats.h"

#include <algorithm>

namespace cuclimb::analysis {
namespace {

using format::EventType;

}  // namespace

SegmentStats::SegmentStats(const trace::TraceReader* reader, std::string user_name)
    : reader_(reader), user_name_(std::move(user_name)) {}

bool SegmentStats::MatchesUser(uint32_t name_id) const {
  if (user_name_.empty() || name_id == 0)
    return false;
  if (name_id >= user_match_.size())
    user_match_.resize(name_id + 1, -1);
  if (user_match_[name_id] < 0)
    user_match_[name_id] = reader_->Str(name_id) == user_name_ ? 1 : 0;
  return user_match_[name_id] == 1;
}

void SegmentStats::ObserveCall(const trace::Event& ev) {
  ThreadCounts& tc = Thread(ev.tid);
  const EventType t = ev.type;
  if (collect_prefix_) {
    ++tc.events;
    if (t == EventType::kLaunch && tc.launch_names.size() < kMaxLaunchPrefix)
      tc.launch_names.push_back(ev.name);
  }
  if (trace::IsCudaCall(t)) {
    ++tc.cuda_calls;
    tc.launches += t == EventType::kLaunch;
  }
}

void SegmentStats::Close(const Open& open, const ThreadCounts& tc, int64_t ts, Open* outer) {
  const uint64_t launches = tc.launches - open.launches_at - open.nested_launches;
  const uint64_t calls = tc.cuda_calls - open.calls_at - open.nested_calls;
  const int64_t ns = std::max<int64_t>(std::max<int64_t>(ts - open.ts, 0) - open.nested_ns, 0);
  Candidate& c = *open.candidate;
  c.launches_inside += launches;
  c.calls_inside += calls;
  c.inside_ns += ns;
  c.last_end = std::max(c.last_end, ts);
  if (outer != nullptr) {
    outer->nested_launches += launches;
    outer->nested_calls += calls;
    outer->nested_ns += ns;
  }
}

void SegmentStats::ObserveNvtx(const trace::Event& ev) {
  ThreadCounts& tc = Thread(ev.tid);
  if (collect_prefix_ && ev.tid != 0)
    ++tc.events;
  switch (ev.type) {
    case EventType::kPush: {
      // Every instance counts, nested in itself or not: when pops are lost (dropped events) an
      // iteration range looks nested in its stale predecessor, and must still be counted.
      std::vector<Open>& stack = StackOf(ev.tid, ev.domain);
      Candidate& c = ranges_[Key{ev.tid, ev.domain, ev.name}];
      if (c.count++ == 0)
        c.first_ts = ev.ts;
      c.min_depth = std::min(c.min_depth, tc.depth);
      stack.push_back(Opening(tc, ev.name, &c, ev.ts));
      ++tc.depth;
      if (stack.size() > kMaxDepth) {  // bounded under lost pops
        stack.erase(stack.begin());
        --tc.depth;
      }
      break;
    }
    case EventType::kPop: {
      std::vector<Open>& stack = StackOf(ev.tid, ev.domain);
      if (!stack.empty()) {
        Open* outer = nullptr;
        for (size_t i = stack.size() - 1; i-- > 0 && outer == nullptr;) {
          if (stack[i].name == stack.back().name)
            outer = &stack[i];
        }
        Close(stack.back(), tc, ev.ts, outer);
        stack.pop_back();
        tc.depth = std::max(tc.depth - 1, 0);
      }
      break;
    }
    case EventType::kRangeStart: {
      const Key key{ev.tid, ev.domain, ev.name};
      Candidate& c = ranges_[key];
      if (c.count++ == 0)
        c.first_ts = ev.ts;
      c.min_depth = std::min(c.min_depth, tc.depth);
      started_[ev.addr] = Started{key, Opening(tc, ev.name, &c, ev.ts)};
      ++tc.depth;
      break;
    }
    case EventType::kRangeEnd: {
      // A start/end range may end on another thread: its work is counted on the start thread.
      auto it = started_.find(ev.addr);
      if (it != started_.end()) {
        auto owner = threads_.find(it->second.key.tid);
        if (owner != threads_.end()) {
          Close(it->second.open, owner->second, ev.ts, nullptr);
          owner->second.depth = std::max(owner->second.depth - 1, 0);
        }
        started_.erase(it);
      }
      break;
    }
    case EventType::kMark: {
      Candidate& c = marks_[Key{ev.tid, ev.domain, ev.name}];
      if (c.count++ == 0)
        c.first_ts = ev.ts;
      c.min_depth = 0;
      break;
    }
    default:
      break;
  }
}

double SegmentStats::Coverage(const Key& key, const Candidate& c, const char** basis) const {
  const char* unused = nullptr;
  const char*& of = basis != nullptr ? *basis : unused;
  auto it = threads_.find(key.tid);
  if (it != threads_.end() && it->second.launches > 0) {
    of = "launches";
    return std::min(
        1.0, static_cast<double>(c.launches_inside) / static_cast<double>(it->second.launches));
  }
  if (it != threads_.end() && it->second.cuda_calls > 0) {
    of = "CUDA calls";
    return std::min(
        1.0, static_cast<double>(c.calls_inside) / static_cast<double>(it->second.cuda_calls));
  }
  of = "time";
  const int64_t span = c.last_end - c.first_ts;
  return span > 0 ? std::min(1.0, static_cast<double>(c.inside_ns) / static_cast<double>(span))
                  : 0.0;
}

uint32_t SegmentStats::BusiestThread() const {
  uint32_t best = 0;
  uint64_t calls = 0;
  for (const auto& [tid, tc] : threads_) {
    if (tc.cuda_calls > calls || (tc.cuda_calls == calls && calls > 0 && tid < best)) {
      best = tid;
      calls = tc.cuda_calls;
    }
  }
  return best;
}

uint32_t SegmentStats::BusiestLaunchThread() const {
  uint32_t best = 0;
  uint64_t launches = 0;
  for (const auto& [tid, tc] : threads_) {
    if (tc.launches > launches || (tc.launches == launches && launches > 0 && tid < best)) {
      best = tid;
      launches = tc.launches;
    }
  }
  return best;
}

}  // namespace cuclimb::analysis
