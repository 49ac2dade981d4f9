// SPDX-License-Identifier: Apache-2.0
// Choosing the iteration source and tracking its boundaries.
#include "iterations/segmenter.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "trace/event_kinds.h"

namespace cuclimb::analysis {
namespace {

using format::EventType;

constexpr int64_t kMinAuto = 8;  // instances for a confident automatic choice
constexpr int64_t kMinAny = 2;   // instances for any choice


uint64_t StackKey(uint32_t tid, uint32_t domain) {
  return (uint64_t{tid} << 32) | domain;
}

}  // namespace

const char* SourceName(IterationSource source) {
  switch (source) {
    case IterationSource::kRange:
      return "nvtx_range";
    case IterationSource::kMark:
      return "nvtx_mark";
    case IterationSource::kLaunch:
      return "launch_period";
    case IterationSource::kNone:
      break;
  }
  return "none";
}

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

void SegmentStats::ObserveAll(const trace::Event& ev) {
  const EventType t = ev.type;
  if (ev.tid != 0 && !nvtx_only_) {
    if (ev.tid != last_tid_ || last_thread_ == nullptr) {
      last_thread_ = &threads_[ev.tid];  // re-fetched on every change: inserts move entries
      last_tid_ = ev.tid;
    }
    ThreadCounts& tc = *last_thread_;
    ++tc.events;
    if (trace::IsCudaCall(t))
      ++tc.cuda_calls;
    if (t == EventType::kLaunch) {
      ++tc.launches;
      if (tc.launch_names.size() < kMaxLaunchPrefix)
        tc.launch_names.push_back(ev.name);
    }
  }
  switch (t) {
    case EventType::kPush: {
      // Every instance counts, nested in itself or not: when pops are lost (dropped events) an
      // iteration range looks nested in its stale predecessor, and must still be counted.
      std::vector<Open>& stack = stacks_[StackKey(ev.tid, ev.domain)];
      int& open = depth_[ev.tid];
      const int depth = open;
      stack.push_back({ev.name, true});
      if (stack.size() > 256)
        stack.erase(stack.begin());  // bounded under lost pops
      else
        ++open;
      Candidate& c = ranges_[Key{ev.tid, ev.domain, ev.name}];
      if (c.count++ == 0) c.first_ts = ev.ts;
      c.min_depth = std::min(c.min_depth, depth);
      break;
    }
    case EventType::kPop: {
      auto it = stacks_.find(StackKey(ev.tid, ev.domain));
      if (it != stacks_.end() && !it->second.empty()) {
        it->second.pop_back();
        --depth_[ev.tid];
      }
      break;
    }
    case EventType::kRangeStart: {
      const int depth = DepthOf(ev.tid);
      started_[ev.addr] = ev.tid;
      ++open_started_[ev.tid];
      ++depth_[ev.tid];
      Candidate& c = ranges_[Key{ev.tid, ev.domain, ev.name}];
      if (c.count++ == 0)
        c.first_ts = ev.ts;
      c.min_depth = std::min(c.min_depth, depth);
      break;
    }
    case EventType::kRangeEnd: {
      auto it = started_.find(ev.addr);
      if (it != started_.end()) {
        auto open = open_started_.find(it->second);
        if (open != open_started_.end() && open->second > 0) {
          --open->second;
          --depth_[it->second];
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

namespace {

using Key = SegmentStats::Key;
using Candidate = SegmentStats::Candidate;

// Outermost first, then most instances, then earliest, then lowest ids: a total order.
bool Better(const Key& a, const Candidate& ca, const Key& b, const Candidate& cb) {
  if (ca.min_depth != cb.min_depth)
    return ca.min_depth < cb.min_depth;
  if (ca.count != cb.count)
    return ca.count > cb.count;
  if (ca.first_ts != cb.first_ts)
    return ca.first_ts < cb.first_ts;
  if (a.tid != b.tid)
    return a.tid < b.tid;
  if (a.domain != b.domain)
    return a.domain < b.domain;
  return a.name < b.name;
}

// Best candidate with ≥ min_count instances; on `tid` only unless tid == 0. User mode: only
// names matching --iteration, most instances first (depth ignored).
const std::pair<const Key, Candidate>* Pick(const absl::flat_hash_map<Key, Candidate>& cands,
                                            uint32_t tid, uint64_t min_count,
                                            const SegmentStats* user) {
  const std::pair<const Key, Candidate>* best = nullptr;
  for (const auto& entry : cands) {
    const auto& [k, c] = entry;
    if (c.count < min_count)
      continue;
    if (tid != 0 && k.tid != tid)
      continue;
    if (user != nullptr && !user->MatchesUser(k.name))
      continue;
    if (best == nullptr) {
      best = &entry;
      continue;
    }
    if (user != nullptr) {
      Candidate ca = c, cb = best->second;
      ca.min_depth = cb.min_depth = 0;
      if (Better(k, ca, best->first, cb))
        best = &entry;
    } else if (Better(k, c, best->first, best->second)) {
      best = &entry;
    }
  }
  return best;
}

SegmentChoice FromCandidate(IterationSource source, const std::pair<const Key, Candidate>& e,
                            const trace::TraceReader& reader, const std::string& how) {
  SegmentChoice c;
  c.source = source;
  c.tid = e.first.tid;
  c.domain = e.first.domain;
  c.name = e.first.name;
  c.why = absl::StrFormat("%s \"%s\" on thread %d (%d instances%s)%s",
                          source == IterationSource::kRange ? "NVTX range" : "NVTX mark",
                          reader.Str(e.first.name), e.first.tid, e.second.count,
                          source == IterationSource::kRange
                              ? absl::StrCat(", depth ", e.second.min_depth)
                              : std::string(),
                          how);
  return c;
}

}  // namespace

SegmentChoice ChooseSegmentation(const SegmentStats& stats, const LaunchPeriod& launch,
                                 const trace::TraceReader& reader) {
  if (!stats.user_name().empty()) {
    if (const auto* r = Pick(stats.ranges(), 0, 1, &stats)) {
      SegmentChoice c = FromCandidate(IterationSource::kRange, *r, reader, ", from --iteration");
      c.user = true;
      return c;
    }
    if (const auto* m = Pick(stats.marks(), 0, 1, &stats)) {
      SegmentChoice c = FromCandidate(IterationSource::kMark, *m, reader, ", from --iteration");
      c.user = true;
      return c;
    }
  }
  const std::string fallback =
      stats.user_name().empty()
          ? std::string()
          : absl::StrCat("; no range or mark is named \"", stats.user_name(), "\"");
  const uint32_t busiest = stats.BusiestThread();
  for (int64_t min_count : {kMinAuto, kMinAny}) {
    for (uint32_t tid : {busiest, 0u}) {
      if (const auto* r = Pick(stats.ranges(), tid, min_count, nullptr)) {
        return FromCandidate(IterationSource::kRange, *r, reader,
                             absl::StrCat(tid != 0 ? ", the busiest CUDA thread" : "", fallback));
      }
    }
    for (uint32_t tid : {busiest, 0u}) {
      if (const auto* m = Pick(stats.marks(), tid, min_count, nullptr)) {
        return FromCandidate(IterationSource::kMark, *m, reader,
                             absl::StrCat(tid != 0 ? ", the busiest CUDA thread" : "", fallback));
      }
    }
    if (launch.found) {
      SegmentChoice c;
      c.source = IterationSource::kLaunch;
      c.tid = stats.BusiestLaunchThread();
      c.launch = launch;
      c.name = launch.anchor;
      c.why = absl::StrCat(
          "no repeating NVTX range or mark; ", launch.why, ", anchored at \"",
          std::string(reader.Str(launch.anchor)), "\"",
          launch.anchor_next
              ? absl::StrCat(" + \"", std::string(reader.Str(launch.anchor_next)), "\"")
              : std::string(),
          " on thread ", c.tid, fallback);
      return c;
    }
  }
  SegmentChoice none;
  none.why = absl::StrCat("no repeating NVTX range or mark and no periodic launch sequence (",
                          launch.why.empty() ? "no launches" : launch.why,
                          "): the whole trace is one iteration", fallback);
  return none;
}

Boundaries::Boundaries(const SegmentChoice& choice)
    : choice_(choice),
      tid_(choice.tid),
      watermark_(choice.source == IterationSource::kNone ? std::numeric_limits<int64_t>::max()
                                                         : std::numeric_limits<int64_t>::min()) {
  if (choice.source == IterationSource::kNone) {
    starts_.push_back(std::numeric_limits<int64_t>::min());
    ends_.push_back(std::numeric_limits<int64_t>::max());
    payloads_.push_back(0);
  }
}

void Boundaries::Start(int64_t ts, int64_t payload) {
  if (!starts_.empty() && ts < starts_.back()) {
    ++ignored_;
    return;
  }
  starts_.push_back(ts);
  ends_.push_back(std::numeric_limits<int64_t>::max());
  payloads_.push_back(payload);
  cached_ = -1;
}

void Boundaries::Close(int64_t ts) {
  open_ = false;
  open_id_ = ~uint64_t{0};
  if (!ends_.empty())
    ends_.back() = std::max(ts, starts_.back());
}

void Boundaries::Advance(const trace::Event& ev) {
  switch (choice_.source) {
    case IterationSource::kRange:
      if (ev.type == EventType::kPush) {
        std::vector<bool>& stack = stacks_[ev.domain];
        const bool named = ev.domain == choice_.domain && ev.name == choice_.name;
        if (named && open_ && open_id_ == ~uint64_t{0}) {
          // The iteration range again while one is open: an iteration range does not nest in
          // itself, so the previous one's pop was lost (dropped events). End it here.
          for (size_t i = stack.size(); i-- > 0;) {
            if (stack[i]) {
              stack[i] = false;
              break;
            }
          }
          Close(ev.ts);
          ++lost_pops_;
        }
        const bool ours = named && !open_;
        stack.push_back(ours);
        if (ours) {
          open_ = true;
          Start(ev.ts, ev.value);
        }
        if (stack.size() > kMaxDepth) stack.erase(stack.begin());
      } else if (ev.type == EventType::kPop) {
        std::vector<bool>& stack = stacks_[ev.domain];
        if (!stack.empty()) {
          if (stack.back() && open_)
            Close(ev.ts);
          stack.pop_back();
        }
      } else if (ev.type == EventType::kRangeStart && !open_ && ev.domain == choice_.domain &&
                 ev.name == choice_.name) {
        open_ = true;
        open_id_ = ev.addr;
        Start(ev.ts, ev.value);
      } else if (ev.type == EventType::kRangeEnd && open_ && ev.addr == open_id_) {
        Close(ev.ts);
      }
      break;
    case IterationSource::kMark:
      if (ev.type == EventType::kMark && ev.domain == choice_.domain && ev.name == choice_.name) {
        Start(ev.ts, ev.value);
      }
      break;
    case IterationSource::kLaunch:
      if (ev.type == EventType::kLaunch) {
        if (choice_.launch.anchor_next == 0) {
          if (ev.name == choice_.launch.anchor)
            Start(ev.ts, 0);
        } else if (last_launch_ == choice_.launch.anchor && ev.name == choice_.launch.anchor_next) {
          Start(last_launch_ts_, 0);
        }
        last_launch_ = ev.name;
        last_launch_ts_ = ev.ts;
      }
      break;
    case IterationSource::kNone:
      return;
  }
  watermark_ = std::max(watermark_, ev.ts);
  // A pending pair anchor may still start an iteration at last_launch_ts_.
  if (choice_.source == IterationSource::kLaunch && choice_.launch.anchor_next != 0 &&
      last_launch_ == choice_.launch.anchor) {
    watermark_ = std::min(watermark_, last_launch_ts_ - 1);
  }
}

uint32_t Boundaries::Slot(int64_t ts) {
  if (starts_.empty() || ts < starts_.front())
    return 0;
  int64_t i = cached_;
  const int64_t n = static_cast<int64_t>(starts_.size());
  if (i < 0 || i >= n || ts < starts_[i] || (i + 1 < n && ts >= starts_[i + 1])) {
    i = static_cast<int64_t>(std::upper_bound(starts_.begin(), starts_.end(), ts) -
                             starts_.begin()) -
        1;
    cached_ = i;
  }
  return static_cast<uint32_t>(ts <= ends_[i] ? 2 * i + 1 : 2 * i + 2);
}

void Boundaries::Finish() {
  finished_ = true;
  watermark_ = std::numeric_limits<int64_t>::max();
  const int64_t n = static_cast<int64_t>(starts_.size());
  switch (choice_.source) {
    case IterationSource::kNone:
      count_ = 1;
      break;
    case IterationSource::kRange:
      // An iteration range still open at the end was cut: it is the epilogue.
      count_ = (n > 0 && ends_.back() == std::numeric_limits<int64_t>::max()) ? n - 1 : n;
      break;
    case IterationSource::kMark:
    case IterationSource::kLaunch:
      // The last boundary opens an iteration whose end is not seen.
      count_ = std::max<int64_t>(n - 1, 0);
      break;
  }
}

int64_t Boundaries::IterationOfSlot(uint32_t slot) const {
  if (slot == 0)
    return -1;
  const int64_t i = (static_cast<int64_t>(slot) - 1) / 2;
  if (i >= count_)
    return -2;
  if (choice_.source == IterationSource::kRange && i == count_ - 1 && slot % 2 == 0)
    return -2;
  return i;
}

std::vector<IterationSpan> Boundaries::Spans() const {
  std::vector<IterationSpan> out;
  for (int64_t i = 0; i < count_; ++i) {
    IterationSpan s;
    s.payload = payloads_[i];
    if (choice_.source == IterationSource::kNone) {
      s.start_ns = s.end_ns = 0;  // the whole trace: its one "iteration" has no boundaries
    } else {
      s.start_ns = starts_[i];
      // Marks and launches: an iteration ends where the next begins (Finish() counts one fewer
      // iteration than starts, so starts_[i + 1] exists).
      s.end_ns = choice_.source == IterationSource::kRange ? ends_[i] : starts_[i + 1];
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace cuclimb::analysis
