// SPDX-License-Identifier: Apache-2.0
// How `--jobs` threads are shared among the traces of a job.
#pragma once

#include <cstddef>

namespace cuclimb::analysis {

// Threads that trace k may use besides its own when `jobs` threads analyse `count` traces. With
// as many traces as threads or more, none: each thread takes whole traces. With fewer, the spare
// threads are dealt out one at a time from the first trace, so that 8 traces on 12 threads give
// 4 of them an aggregation thread rather than leaving 4 threads idle; a trace's first helper
// runs its aggregation, the second the allocation family's, the rest decode ahead (AnalyzeOne).
inline int HelpersOf(size_t k, int count, int jobs) {
  if (count <= 0 || jobs <= count)
    return 0;
  const int spare = jobs - count;
  return spare / count + (static_cast<int>(k) < spare % count ? 1 : 0);
}

}  // namespace cuclimb::analysis
