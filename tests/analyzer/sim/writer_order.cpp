// SPDX-License-Identifier: Apache-2.0
// Writer batch order for simulated traces.
#include "writer_order.h"

#include <algorithm>

namespace cuclimb::testing {

WriterOrder::WriterOrder(int64_t batch_ns, uint64_t seed,
                         std::function<void(const format::Event&)> out)
    : batch_ns_(batch_ns), rng_(seed * 0x9E3779B97F4A7C15ull + 7), out_(std::move(out)) {}

void WriterOrder::Add(const format::Event& e) {
  clock_ = std::max(clock_, e.ts);
  if (next_flush_ == INT64_MIN)
    next_flush_ = clock_ + batch_ns_;
  if (clock_ >= next_flush_) {
    Flush();
    next_flush_ = clock_ + batch_ns_;
  }
  buffers_[e.tid].push_back(e);
}

void WriterOrder::Flush() {
  std::vector<uint32_t> tids;
  for (const auto& [tid, events] : buffers_) {
    if (!events.empty())
      tids.push_back(tid);
  }
  // Fisher–Yates with a splitmix step: the drain order differs from batch to batch.
  for (size_t i = tids.size(); i > 1; --i) {
    rng_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = rng_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    std::swap(tids[i - 1], tids[(z ^ (z >> 31)) % i]);
  }
  for (uint32_t tid : tids) {
    for (const format::Event& e : buffers_[tid]) out_(e);
    buffers_[tid].clear();
  }
}

}  // namespace cuclimb::testing
