// SPDX-License-Identifier: Apache-2.0
// Naming the deepest growing host frame of each call chain.
#include "detect/host_growth.h"

#include <gtest/gtest.h>

namespace cuclimb::analysis {
namespace {

constexpr int kUnsymbolized = 0, kSystem = 1, kActionable = 2;

// Frames of a hook loop: 0 libc leaf, 1 interpreter, 2 the hook's Python line, 3 the autograd
// hook dispatch, 4 the engine, 5 the program's main, 6 a flat forward frame.
std::vector<GrowingFrame> HookFrames(double lambda_slope) {
  std::vector<GrowingFrame> f(7);
  f[0] = {true, 1.0, kUnsymbolized};
  f[1] = {true, 1.0, kSystem};
  f[2] = {true, lambda_slope, kActionable, /*user=*/true};
  f[3] = {true, 1.0, kActionable};  // framework
  f[4] = {true, 1.0, kActionable};
  f[5] = {true, 1.1, kActionable, true};
  f[6] = {false, 0.0, kActionable, true};
  return f;
}

const FrameStacks kHookStacks = {
    {0, 1, 2, 1, 3, 4},  // inside the hook's Python code
    {0, 1, 3, 4},        // in the interpreter, called from the dispatch
    {0, 1, 6, 5},        // the forward, from main
    {1, 4, 5},
};

TEST(HostGrowth, TheDispatchFrameWhenTheHookLineCarriesLittle) {
  EXPECT_EQ(DeepestGrowingFrames(HookFrames(0.3), kHookStacks), (std::vector<uint32_t>{3}));
}

TEST(HostGrowth, TheHookLineWhenItCarriesTheGrowth) {
  EXPECT_EQ(DeepestGrowingFrames(HookFrames(0.8), kHookStacks), (std::vector<uint32_t>{2}));
}

TEST(HostGrowth, AFrameworkFrameNamesTheUsersLineThatCallsIt) {
  // compute_metrics (user) calls tensor.item() once per logged value, and the list grows: the
  // growth is all inside PyTorch's item(), which waits in the driver.
  std::vector<GrowingFrame> f = {
      {true, 1.0, kSystem},                    // 0 the driver's wait
      {true, 1.0, kActionable},                // 1 at::native::item
      {true, 1.0, kActionable},                // 2 item (torch/_tensor.py)
      {true, 1.0, kActionable, true},          // 3 compute_metrics (train.py:50)
      {true, 1.2, kActionable, true},          // 4 main (train.py:90)
      {true, 3.0, kActionable, /*user=*/true}  // 5 a user frame on another stack: not above
  };
  const FrameStacks stacks = {{0, 1, 2, 3, 4}, {4}, {5}};
  EXPECT_EQ(DeepestGrowingFrames(f, stacks), (std::vector<uint32_t>{5, 3}));
  // compute_metrics grows three times as much, mostly in its own code: it is named, and item()
  // below it is part of its growth.
  f[3].slope = 3.0;
  f[4].slope = 3.2;
  const FrameStacks more = {{0, 1, 2, 3, 4}, {3, 4}, {5}};
  EXPECT_EQ(DeepestGrowingFrames(f, more), (std::vector<uint32_t>{3, 5}));
}

TEST(HostGrowth, TwoChainsUnderOneRootAreNamedApart) {
  std::vector<GrowingFrame> f = {
      {true, 2.0, kActionable},  // 0 main
      {true, 1.0, kActionable},  // 1 cache_lookup
      {true, 1.5, kActionable},  // 2 log_metrics
      {true, 9.0, kSystem},      // 3 malloc, below both: another rank, not considered
  };
  const FrameStacks stacks = {{3, 1, 0}, {3, 2, 0}, {0}};
  EXPECT_EQ(DeepestGrowingFrames(f, stacks), (std::vector<uint32_t>{2, 1}));
}

TEST(HostGrowth, WithoutSymbolsTheDeepestOfWhatThereIs) {
  std::vector<GrowingFrame> f = {
      {true, 1.0, kUnsymbolized},  // 0 libc leaf
      {true, 1.0, kUnsymbolized},  // 1 libfoo caller
      {false, 0, kActionable},     // 2 flat
  };
  EXPECT_EQ(DeepestGrowingFrames(f, {{0, 1}, {2}}), (std::vector<uint32_t>{0}));
}

TEST(HostGrowth, RecursionAndNothingGrowing) {
  std::vector<GrowingFrame> f = {{true, 1.0, kActionable}, {true, 1.0, kActionable}};
  // 0 calls 1 calls 0 again: neither is simply below the other.
  const auto named = DeepestGrowingFrames(f, {{0, 1}, {1, 0}});
  EXPECT_EQ(named, (std::vector<uint32_t>{0, 1}));
  std::vector<GrowingFrame> flat = {{false, 0, kActionable}};
  EXPECT_TRUE(DeepestGrowingFrames(flat, {{0}}).empty());
}

}  // namespace
}  // namespace cuclimb::analysis
