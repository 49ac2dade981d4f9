// SPDX-License-Identifier: Apache-2.0
// The order in which libcuclimb's writer hands events over: each thread's events stay in order,
// but the writer drains the threads' rings in turn, so another thread's events of the same
// interval come before or after them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "interposer/format/trace_format.h"

namespace cuclimb::testing {

class WriterOrder {
 public:
  // Every batch_ns of the run (by the latest timestamp added so far), the buffered events of
  // every thread (GPU records and samples, tid 0, are one more "thread") go to `out`, the
  // threads in an order drawn from `seed`.
  WriterOrder(int64_t batch_ns, uint64_t seed, std::function<void(const format::Event&)> out);

  void Add(const format::Event& e);
  void Flush();

 private:
  int64_t batch_ns_;
  uint64_t rng_;
  std::function<void(const format::Event&)> out_;
  std::map<uint32_t, std::vector<format::Event>> buffers_;  // by tid
  int64_t clock_ = INT64_MIN, next_flush_ = INT64_MIN;
};

}  // namespace cuclimb::testing
