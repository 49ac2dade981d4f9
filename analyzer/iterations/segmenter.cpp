// SPDX-License-Identifier: Apache-2.0
// Tracking the boundaries of the chosen iteration source.
#include "iterations/segmenter.h"

#include <algorithm>
#include <limits>

namespace cuclimb::analysis {

using format::EventType;

Boundaries::Boundaries(const SegmentChoice& choice)
    : choice_(choice),
      tid_(choice.tid),
      watermark_(choice.source == IterationSource::kNone ? std::numeric_limits<int64_t>::max()
                                                         : std::numeric_limits<int64_t>::min()) {
  ForgetSlot();
  const auto bit = [](EventType t) { return uint64_t{1} << static_cast<unsigned>(t); };
  static_assert(static_cast<unsigned>(EventType::kCount) <= 64);
  switch (choice.source) {
    case IterationSource::kRange:
      boundary_types_ = bit(EventType::kPush) | bit(EventType::kPop) | bit(EventType::kRangeStart) |
                        bit(EventType::kRangeEnd);
      break;
    case IterationSource::kMark:
      boundary_types_ = bit(EventType::kMark);
      break;
    case IterationSource::kLaunch:
      boundary_types_ = bit(EventType::kLaunch);
      if (choice.launch.anchor_next != 0 && choice.launch.anchor == last_launch_)
        ceiling_ = last_launch_ts_ - 1;  // as Advance() sets it
      break;
    case IterationSource::kNone:
      break;
  }
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
  ForgetSlot();
}

void Boundaries::Close(int64_t ts) {
  open_ = false;
  open_id_ = ~uint64_t{0};
  if (!ends_.empty())
    ends_.back() = std::max(ts, starts_.back());
  ForgetSlot();
}

void Boundaries::Advance(const trace::Event& ev) {
  switch (choice_.source) {
    case IterationSource::kRange:
      if (ev.type == EventType::kPush) {
        std::vector<bool>& stack = StackOf(ev.domain);
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
        if (stack.size() > kMaxDepth)
          stack.erase(stack.begin());
      } else if (ev.type == EventType::kPop) {
        std::vector<bool>& stack = StackOf(ev.domain);
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
  // A pending pair anchor may still start an iteration at last_launch_ts_.
  const bool anchor_pending = choice_.source == IterationSource::kLaunch &&
                              choice_.launch.anchor_next != 0 &&
                              last_launch_ == choice_.launch.anchor;
  ceiling_ = anchor_pending ? last_launch_ts_ - 1 : std::numeric_limits<int64_t>::max();
  watermark_ = std::min(std::max(watermark_, ev.ts), ceiling_);
}

uint32_t Boundaries::FindSlot(int64_t ts) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (starts_.empty() || ts < starts_.front()) {  // the prologue, slot 0, up to the first start
    slot_from_ = kMin;
    slot_to_ = starts_.empty() ? kMax : starts_.front();
    slot_end_ = kMax;
    slot_ = 0;
    return 0;
  }
  // The last start at or before ts (starts_ is sorted; equal starts: the last of them).
  const size_t i =
      static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), ts) - starts_.begin()) -
      1;
  slot_from_ = starts_[i];
  slot_to_ = i + 1 < starts_.size() ? starts_[i + 1] : kMax;
  slot_end_ = ends_[i];
  slot_ = static_cast<uint32_t>(2 * i + 1);
  return ts <= slot_end_ ? slot_ : slot_ + 1;
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
