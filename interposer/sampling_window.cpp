// SPDX-License-Identifier: Apache-2.0
// The sampling window's decisions (see sampling_window.h).
#include "interposer/sampling_window.h"

namespace cuclimb::interposer {

bool SampledIterationIn(uint64_t after, uint64_t upto, uint32_t every) noexcept {
  if (upto <= after || every == 0)
    return false;
  if (upto / every > after / every)
    return true;                              // a multiple of every was passed
  for (uint64_t p = 1; p < every; p <<= 1) {  // early iterations 1, 2, 4, ...
    if (p > after && p <= upto)
      return true;
  }
  return false;
}

SamplingWindow::Action SamplingWindow::Tick(int64_t now_ns, uint64_t marks,
                                            bool capturing) noexcept {
  ++ticks_;
  if (capturing)
    return Action::kNone;  // switching a kind allocates device buffers: not during a capture
  if (open_) {
    const bool boundary = marks > 0 ? marks != marks_at_open_ : true;
    if (!boundary && now_ns - opened_ns_ <= kMaxOpenNs)
      return Action::kNone;
    open_ = false;
    closed_ns_ = now_ns;
    min_closed_ns_ = (now_ns - opened_ns_) * static_cast<int64_t>(every_ - 1);
    marks_seen_ = marks;
    return Action::kClose;
  }
  if (now_ns - closed_ns_ < min_closed_ns_) {
    marks_seen_ = marks;  // iterations passed while closed are not sampled late
    return Action::kNone;
  }
  bool start = false;
  if (marks > 0) {
    start = SampledIterationIn(marks_seen_, marks, every_);
  } else if (now_ns - start_ns_ > kUnmarkedDelayNs) {
    start = every_ <= 1 || ticks_ % every_ == 0;  // no iteration marks: one tick in N
  }
  marks_seen_ = marks;
  if (!start)
    return Action::kNone;
  open_ = true;
  opened_ns_ = now_ns;
  marks_at_open_ = marks;
  return Action::kOpen;
}

}  // namespace cuclimb::interposer
