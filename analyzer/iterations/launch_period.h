// SPDX-License-Identifier: Apache-2.0
// Iterations of a program without NVTX: the period of its kernel-launch name sequence.
#pragma once

#include <cstdint>
#include <string>

#include "absl/types/span.h"

namespace cuclimb::analysis {

struct LaunchPeriod {
  bool found = false;
  int64_t period = 0;        // launches per iteration
  double match = 0;          // fraction of positions i with name[i] == name[i + period]
  uint32_t anchor = 0;       // the kernel name (string id) that starts each iteration
  uint32_t anchor_next = 0;  // when not 0, the anchor is the pair (anchor, anchor_next)
  uint32_t tid = 0;          // the thread whose launches were examined (set by the caller)
  std::string why;
};

// Finds the fundamental period of a kernel-name sequence (string ids, in launch order on one
// thread) and a kernel, or a pair of consecutive kernels, that occurs once per period.
//
// Method: the first 10 % is skipped as set-up. Candidate periods are the median distances
// between the j-th next occurrences (j = 1..8) of every name seen ≥ 3 times. For each
// candidate p, match(p) = the fraction of positions (up to 200 000) where name[i] equals
// name[i + p]. The period is the smallest candidate within 0.02 of the best match, provided the
// best is ≥ 0.6: an outer loop of steps thus wins over the inner step, whose match is broken by
// the outer loop's own kernels. The anchor is the name with about one occurrence per period
// (0.9–1.1) and the steadiest spacing, ties to the earliest first occurrence; without one, the
// same is tried with pairs of consecutive names.
LaunchPeriod FindLaunchPeriod(absl::Span<const uint32_t> names);

}  // namespace cuclimb::analysis
