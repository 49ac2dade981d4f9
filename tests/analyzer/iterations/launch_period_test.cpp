// SPDX-License-Identifier: Apache-2.0
// Period of a kernel-launch sequence: outer loops over inner steps, pair anchors, noise.
#include "iterations/launch_period.h"

#include <vector>

#include <gtest/gtest.h>

namespace cuclimb::analysis {
namespace {

// Kernels: 1 = init (once per iteration), 2..5 = a step's kernels.
std::vector<uint32_t> Loop(int iterations, int steps, bool setup = true) {
  std::vector<uint32_t> s;
  if (setup) {
    for (int i = 0; i < 50; ++i) s.push_back(100 + i % 7);  // set-up kernels, never again
  }
  for (int it = 0; it < iterations; ++it) {
    s.push_back(1);
    for (int k = 0; k < steps; ++k) {
      for (uint32_t kernel : {2u, 3u, 4u, 5u}) s.push_back(kernel);
    }
  }
  return s;
}

TEST(LaunchPeriod, OuterLoopWinsOverInnerStep) {
  const LaunchPeriod p = FindLaunchPeriod(Loop(100, 10));
  ASSERT_TRUE(p.found) << p.why;
  EXPECT_EQ(p.period, 41);
  EXPECT_EQ(p.anchor, 1u);
  EXPECT_EQ(p.anchor_next, 0u);
  EXPECT_GT(p.match, 0.99);
}

TEST(LaunchPeriod, PairAnchorWhenNoKernelIsOncePerIteration) {
  // Every kernel occurs several times per iteration; only the pair (9, 2) marks the start.
  std::vector<uint32_t> s;
  for (int it = 0; it < 80; ++it) {
    for (int k = 0; k < 3; ++k) s.push_back(9);
    for (int k = 0; k < 5; ++k) {
      s.push_back(2);
      s.push_back(3);
    }
  }
  const LaunchPeriod p = FindLaunchPeriod(s);
  ASSERT_TRUE(p.found) << p.why;
  EXPECT_EQ(p.period, 13);
  EXPECT_EQ(p.anchor, 9u);
  EXPECT_EQ(p.anchor_next, 2u);
}

TEST(LaunchPeriod, ToleratesOccasionalExtraKernels) {
  std::vector<uint32_t> s = Loop(200, 5, false);
  std::vector<uint32_t> noisy;
  uint64_t x = 7;
  for (size_t i = 0; i < s.size(); ++i) {
    noisy.push_back(s[i]);
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    if ((x >> 33) % 150 == 0)
      noisy.push_back(77);  // an occasional extra launch, at random
  }
  const LaunchPeriod p = FindLaunchPeriod(noisy);
  ASSERT_TRUE(p.found) << p.why;
  EXPECT_EQ(p.period, 21);
  EXPECT_EQ(p.anchor, 1u);
}

TEST(LaunchPeriod, IdenticalStepsGiveTheStep) {
  // Without an iteration-specific kernel, the fundamental period is the step.
  std::vector<uint32_t> s;
  for (int i = 0; i < 500; ++i) {
    for (uint32_t k : {2u, 3u, 4u}) s.push_back(k);
  }
  const LaunchPeriod p = FindLaunchPeriod(s);
  ASSERT_TRUE(p.found) << p.why;
  EXPECT_EQ(p.period, 3);
}

TEST(LaunchPeriod, AperiodicAndTinySequences) {
  std::vector<uint32_t> s;
  uint64_t x = 1;
  for (int i = 0; i < 5000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    s.push_back(static_cast<uint32_t>(x >> 60));
  }
  EXPECT_FALSE(FindLaunchPeriod(s).found);
  EXPECT_FALSE(FindLaunchPeriod(std::vector<uint32_t>{1, 2, 3}).found);
}

}  // namespace
}  // namespace cuclimb::analysis
