// SPDX-License-Identifier: Apache-2.0
// How `--jobs` threads are shared among the traces of a job: which trace is taken first, and
// how many threads each may use.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "util/parallel_for.h"

namespace cuclimb::analysis {

// The order in which the threads take the traces: the largest first (ties in the given order).
// A job's wall time is its last trace's end; started last, a large trace (rank 0 with the
// evaluations, a rank that ran longer) would run alone at the end while the other threads idle.
// Taken first, it runs while the smaller ones share the other threads. Reports do not depend on
// the order: each trace's result goes to its own slot.
inline std::vector<size_t> LargestFirst(const std::vector<uint64_t>& bytes) {
  std::vector<size_t> order(bytes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&bytes](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  return order;
}

// Threads that the k-th trace taken may use besides its own when `jobs` threads analyse `count`
// traces. With as many traces as threads or more, none: each thread takes whole traces. With
// fewer, the spare threads are dealt out one at a time from the first trace taken (the largest),
// so that 8 traces on 12 threads give 4 of them an aggregation thread rather than leaving 4
// threads idle; a trace's first helper runs its aggregation, the second the allocation family's,
// the rest decode ahead (AnalyzeOne).
inline int HelpersOf(size_t k, int count, int jobs) {
  if (count <= 0 || jobs <= count)
    return 0;
  const int spare = jobs - count;
  return spare / count + (static_cast<int>(k) < spare % count ? 1 : 0);
}

// Threads of a job that came free while some of its traces are still read: a thread that found
// no trace left to take, and the helpers of a trace that is done. Equal traces on as many threads
// do not end together (on a shared host some cores are slower at any moment: 8 equal ranks on 8
// threads ended 1.1 to 1.9 s apart), and the last ones would be read by one thread each while
// the others idle. A trace still being read borrows them as prefetch workers (AnalyzeOne).
class SpareThreads {
 public:
  void Give(int n) {
    if (n > 0)
      free_.fetch_add(n, std::memory_order_relaxed);
  }
  // One thread, if one is free; cheap enough to ask every batch.
  bool TryTake() {
    int n = free_.load(std::memory_order_relaxed);
    while (n > 0) {
      if (free_.compare_exchange_weak(n, n - 1, std::memory_order_relaxed))
        return true;
    }
    return false;
  }
  int free() const { return free_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> free_{0};
};

// Runs fn(k, helpers) for every trace k of a job on up to `jobs` threads, the traces taken
// largest first and each given its share of the spare threads; a thread that finds no trace
// left, and a trace's helpers once fn returns, are given to `spare` (when not null). One thread
// takes the traces in their own order: it gains nothing from another, and its progress keeps
// theirs.
template <typename Fn>
void ForEachTrace(const std::vector<uint64_t>& bytes, int jobs, SpareThreads* spare, Fn&& fn) {
  const int count = static_cast<int>(bytes.size());
  jobs = std::max(1, jobs);
  const int threads = std::min(jobs, count);
  const std::vector<size_t> order =
      LargestFirst(threads > 1 ? bytes : std::vector<uint64_t>(bytes.size()));
  std::atomic<size_t> next{0};
  // One loop per thread: each takes traces until none is left, then gives itself.
  util::ParallelFor(static_cast<size_t>(std::max(threads, 0)), threads, [&](size_t) {
    for (size_t taken = next++; taken < order.size(); taken = next++) {
      const int helpers = HelpersOf(taken, count, jobs);
      fn(order[taken], helpers);
      if (spare != nullptr)
        spare->Give(helpers);
    }
    if (spare != nullptr)
      spare->Give(1);
  });
}

}  // namespace cuclimb::analysis
