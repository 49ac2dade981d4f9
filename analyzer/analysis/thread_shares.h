// SPDX-License-Identifier: Apache-2.0
// How `--jobs` threads are shared among the traces of a job: which trace is taken first, and
// how many threads each may use.
#pragma once

#include <algorithm>
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

// Runs fn(k, helpers) for every trace k of a job on up to `jobs` threads, the traces taken
// largest first and each given its share of the spare threads. One thread takes the traces in
// their own order: it gains nothing from another, and its progress keeps theirs.
template <typename Fn>
void ForEachTrace(const std::vector<uint64_t>& bytes, int jobs, Fn&& fn) {
  const int count = static_cast<int>(bytes.size());
  jobs = std::max(1, jobs);
  const std::vector<size_t> order =
      LargestFirst(std::min(jobs, count) > 1 ? bytes : std::vector<uint64_t>(bytes.size()));
  util::ParallelFor(order.size(), std::min(jobs, count),
                    [&](size_t taken) { fn(order[taken], HelpersOf(taken, count, jobs)); });
}

}  // namespace cuclimb::analysis
