// SPDX-License-Identifier: Apache-2.0
// Which growing host functions to name: the deepest frame that still carries the growth.
//
// When host time grows inside one function, the inclusive samples of that function and of every
// caller above it grow together, and so may frames below it (the C library it calls). The user
// needs the deepest frame that can be acted on: below it, the growth splits up or runs into code
// nobody changes; above it, it is only more of the same call chain.
#pragma once

#include <cstdint>
#include <vector>

namespace cuclimb::analysis {

struct GrowingFrame {
  bool growing = false;  // its inclusive samples pass the accumulator test
  double slope = 0;      // samples per iteration
  int rank = 0;          // how actionable (series/host_functions.h FrameRank); higher is better
  bool user = false;     // the program's own code (not its framework's)
};

// Functions of each distinct sampled stack, innermost first (no repeats within a stack).
using FrameStacks = std::vector<std::vector<uint32_t>>;

// Of the growing frames, only the best rank present is considered (actionable frames when there
// are any; else symbolized ones; else any). Among those, a frame is named unless the frames below
// it — the outermost considered frames found below it on the same stacks — together grow by at
// least half as much as it does: then they carry its growth and are named instead. A named
// framework frame gives way to the deepest growing user frame above it that it carries at
// least half of (the user's line that calls into the framework, as call sites are labelled). Of
// the named frames, one below another is dropped (one name per call chain). Returns indexes into
// `frames`, by slope descending (ties: lower index first).
std::vector<uint32_t> DeepestGrowingFrames(const std::vector<GrowingFrame>& frames,
                                           const FrameStacks& stacks);

}  // namespace cuclimb::analysis
