// SPDX-License-Identifier: Apache-2.0
// The iteration thread's open ranges over time.
#include "series/borrowed_ranges.h"

#include <algorithm>

namespace cuclimb::analysis {

void RangeTimeline::ChangeAny(int64_t ts, uint32_t sig) {
  if (!changes_.empty() && changes_.back().first == ts) {
    changes_.back().second = sig;  // several changes at one timestamp: the last one holds
  } else {
    changes_.emplace_back(ts, sig);
  }
  if (changes_.size() >= 2 * kKeep) {
    before_ = changes_[kKeep - 1].second;
    changes_.erase(changes_.begin(), changes_.begin() + kKeep);
    cached_ = 0;
  }
}

uint32_t RangeTimeline::At(int64_t ts) const {
  const size_t n = changes_.size();
  if (n == 0 || ts < changes_.front().first)
    return before_;
  // Most lookups fall in the same interval as the last one, or the next.
  for (size_t i = std::min(cached_, n - 1); i < n && i <= cached_ + 1; ++i) {
    if (changes_[i].first <= ts && (i + 1 == n || ts < changes_[i + 1].first)) {
      cached_ = i;
      return changes_[i].second;
    }
  }
  auto it = std::upper_bound(
      changes_.begin(), changes_.end(), ts,
      [](int64_t t, const std::pair<int64_t, uint32_t>& c) { return t < c.first; });
  cached_ = static_cast<size_t>(it - changes_.begin()) - 1;
  return changes_[cached_].second;
}

}  // namespace cuclimb::analysis
