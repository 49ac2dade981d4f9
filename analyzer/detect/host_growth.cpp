// SPDX-License-Identifier: Apache-2.0
// Choosing the deepest growing host frames.
#include "detect/host_growth.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace cuclimb::analysis {
namespace {

// A frame's growth is carried by the frames below it from this share up.
constexpr double kCarried = 0.5;

}  // namespace

std::vector<uint32_t> DeepestGrowingFrames(const std::vector<GrowingFrame>& frames,
                                           const FrameStacks& stacks) {
  int best = -1;
  for (const GrowingFrame& f : frames) {
    if (f.growing)
      best = std::max(best, f.rank);
  }
  if (best < 0)
    return {};
  auto considered = [&](uint32_t i) {
    return i < frames.size() && frames[i].growing && frames[i].rank == best;
  };
  // below[f]: considered frames seen below f (nearer the leaf) on some stack.
  absl::flat_hash_map<uint32_t, absl::flat_hash_set<uint32_t>> below;
  for (const std::vector<uint32_t>& stack : stacks) {
    std::vector<uint32_t> chain;  // considered frames of this stack, innermost first
    for (uint32_t f : stack) {
      if (considered(f))
        chain.push_back(f);
    }
    for (size_t outer = 1; outer < chain.size(); ++outer) {
      for (size_t inner = 0; inner < outer; ++inner) below[chain[outer]].insert(chain[inner]);
    }
  }
  auto is_below = [&](uint32_t g, uint32_t f) {  // g strictly below f, and not also above it
    auto it = below.find(f);
    if (it == below.end() || !it->second.contains(g))
      return false;
    auto back = below.find(g);
    return back == below.end() || !back->second.contains(f);
  };
  std::vector<uint32_t> named;
  for (uint32_t f = 0; f < frames.size(); ++f) {
    if (!considered(f))
      continue;
    double carried = 0;
    if (auto it = below.find(f); it != below.end()) {
      for (uint32_t g : it->second) {
        if (!is_below(g, f))
          continue;
        // Only the outermost frames below f: what is under them is their own growth again.
        bool outermost = true;
        for (uint32_t h : it->second) {
          if (h != g && is_below(h, f) && is_below(g, h)) {
            outermost = false;
            break;
          }
        }
        if (outermost)
          carried += frames[g].slope;
      }
    }
    if (carried < kCarried * frames[f].slope)
      named.push_back(f);
  }
  // A framework frame names the user's code that calls it, when that code carries little else.
  for (uint32_t& f : named) {
    if (frames[f].user)
      continue;
    uint32_t lifted = f;
    for (uint32_t g = 0; g < frames.size(); ++g) {
      if (!considered(g) || !frames[g].user || !is_below(f, g) ||
          frames[f].slope < kCarried * frames[g].slope)
        continue;
      if (lifted == f || is_below(g, lifted))
        lifted = g;  // the deepest such user frame
    }
    f = lifted;
  }
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());
  // A named frame below another named one is part of that one's growth (too small a part to
  // carry it): one name per call chain.
  std::vector<uint32_t> chains;
  for (uint32_t f : named) {
    bool under_named = false;
    for (uint32_t g : named) under_named |= g != f && is_below(f, g);
    if (!under_named)
      chains.push_back(f);
  }
  named = std::move(chains);
  std::sort(named.begin(), named.end(), [&](uint32_t x, uint32_t y) {
    return frames[x].slope != frames[y].slope ? frames[x].slope > frames[y].slope : x < y;
  });
  return named;
}

}  // namespace cuclimb::analysis
