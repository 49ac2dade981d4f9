// SPDX-License-Identifier: Apache-2.0
// Work on helper threads counts for the ranges open on the iteration thread.
//
// PyTorch runs backward on its autograd engine's thread while the main thread waits inside
// "A/bwd"; data loaders copy batches from threads of their own. Their API time, allocations and
// launches belong to the iteration and to the range the iteration thread has open at the time,
// but that thread's open ranges are only known in its own event order: the writer hands each
// thread's events over in batches, so a helper's events of [t0, t1] may be read before or after
// the iteration thread's events of the same interval. This timeline keeps the iteration thread's
// open-range signature (Aggregator's id of its list of (range, slot)) over time, so a helper's
// event at ts finds the ranges open at ts: at once when the iteration thread has been read past
// ts, else once it has (the caller parks the work until then).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace cuclimb::analysis {

class RangeTimeline {
 public:
  // The iteration thread's signature became `sig` at ts (timestamps of one thread never go
  // back). Keeps at least the latest kKeep changes: a helper's batch trails by far fewer.
  void Change(int64_t ts, uint32_t sig) {
    // Inline: every push and pop of the boundary thread changes it.
    if (!changes_.empty() && changes_.back().first != ts && changes_.size() + 1 < 2 * kKeep &&
        changes_.size() < changes_.capacity()) [[likely]] {
      changes_.emplace_back(ts, sig);
      return;
    }
    ChangeAny(ts, sig);
  }
  // The iteration thread has been read up to ts (Change() does not say so: a start/end range
  // of the iteration thread may end on another thread).
  void Advance(int64_t ts) {
    if (ts > horizon_)
      horizon_ = ts;
  }
  // True when the signature at ts is final.
  bool Known(int64_t ts) const { return ts <= horizon_; }
  int64_t horizon() const { return horizon_; }
  // The signature in effect at ts: that of the last change at or before ts (0, no range open,
  // before the first change).
  uint32_t At(int64_t ts) const;

  static constexpr size_t kKeep = 1u << 16;

 private:
  void ChangeAny(int64_t ts, uint32_t sig);  // Change() when the common case does not hold
  // (ts, signature), ts ascending; the oldest kKeep are dropped at once when there are 2 kKeep.
  std::vector<std::pair<int64_t, uint32_t>> changes_;
  int64_t horizon_ = INT64_MIN;
  uint32_t before_ = 0;        // in effect before changes_.front() (older changes are dropped)
  mutable size_t cached_ = 0;  // index of the last lookup: helpers' events come in time order
};

}  // namespace cuclimb::analysis
