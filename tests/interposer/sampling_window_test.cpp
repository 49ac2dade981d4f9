// SPDX-License-Identifier: Apache-2.0
// The sampling window's decisions: which iterations are sampled, how long a window stays open
// and closed, captures, programs without iteration marks, and a long run shaped like a real
// training job (jittered steps, evaluations and checkpoints, a slow machine, late writer ticks).
#include "interposer/sampling_window.h"

#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace cuclimb::interposer {
namespace {

using Action = SamplingWindow::Action;
constexpr int64_t kMs = 1'000'000;

TEST(SampledIterationInTest, PowersOfTwoBelowThePeriodThenMultiples) {
  EXPECT_TRUE(SampledIterationIn(0, 1, 32));
  EXPECT_TRUE(SampledIterationIn(1, 2, 32));
  EXPECT_FALSE(SampledIterationIn(2, 3, 32));
  EXPECT_TRUE(SampledIterationIn(3, 4, 32));
  EXPECT_TRUE(SampledIterationIn(4, 31, 32));  // 8 and 16
  EXPECT_FALSE(SampledIterationIn(16, 31, 32));
  EXPECT_TRUE(SampledIterationIn(31, 32, 32));
  EXPECT_FALSE(SampledIterationIn(32, 63, 32));
  EXPECT_TRUE(SampledIterationIn(63, 64, 32));
  EXPECT_TRUE(SampledIterationIn(40, 200, 32));  // several at once: still one window
}

TEST(SampledIterationInTest, NothingPassedOrNoPeriod) {
  EXPECT_FALSE(SampledIterationIn(5, 5, 32));
  EXPECT_FALSE(SampledIterationIn(6, 5, 32));
  EXPECT_FALSE(SampledIterationIn(0, 10, 0));
  for (uint64_t i = 0; i < 10; ++i) EXPECT_TRUE(SampledIterationIn(i, i + 1, 1)) << i;
}

TEST(SamplingWindowTest, OpensAfterTheFirstIterationAndClosesAtTheNextBoundary) {
  SamplingWindow w(4, 0);
  EXPECT_EQ(w.Tick(10 * kMs, 0, false), Action::kNone);  // no mark yet
  EXPECT_EQ(w.Tick(20 * kMs, 1, false), Action::kOpen);
  EXPECT_TRUE(w.open());
  EXPECT_EQ(w.Tick(30 * kMs, 1, false), Action::kNone);  // same iteration
  EXPECT_EQ(w.Tick(40 * kMs, 2, false), Action::kClose);
  EXPECT_FALSE(w.open());
}

TEST(SamplingWindowTest, StaysClosedForPeriodMinusOneTimesItsLength) {
  SamplingWindow w(4, 0);
  ASSERT_EQ(w.Tick(100 * kMs, 1, false), Action::kOpen);
  ASSERT_EQ(w.Tick(200 * kMs, 2, false), Action::kClose);  // open 100 ms -> closed >= 300 ms
  // Iteration 4 (the period) passes while closed: it is not sampled late.
  EXPECT_EQ(w.Tick(300 * kMs, 3, false), Action::kNone);
  EXPECT_EQ(w.Tick(450 * kMs, 4, false), Action::kNone);
  EXPECT_EQ(w.Tick(499 * kMs, 5, false), Action::kNone);
  EXPECT_EQ(w.Tick(510 * kMs, 6, false), Action::kNone);  // 5, 6: not sampled
  EXPECT_EQ(w.Tick(520 * kMs, 8, false), Action::kOpen);  // 8 is
}

TEST(SamplingWindowTest, NothingSwitchesWhileAStreamCaptures) {
  SamplingWindow w(2, 0);
  EXPECT_EQ(w.Tick(10 * kMs, 1, true), Action::kNone);
  EXPECT_EQ(w.Tick(20 * kMs, 1, false), Action::kOpen);  // the mark is still unseen
  EXPECT_EQ(w.Tick(30 * kMs, 2, true), Action::kNone);   // stays open during the capture
  EXPECT_TRUE(w.open());
  EXPECT_EQ(w.Tick(40 * kMs, 2, false), Action::kClose);
}

TEST(SamplingWindowTest, AWindowWithoutABoundaryClosesAfterTwoSeconds) {
  SamplingWindow w(2, 0);
  ASSERT_EQ(w.Tick(10 * kMs, 1, false), Action::kOpen);
  EXPECT_EQ(w.Tick(10 * kMs + SamplingWindow::kMaxOpenNs, 1, false), Action::kNone);
  EXPECT_EQ(w.Tick(11 * kMs + SamplingWindow::kMaxOpenNs, 1, false), Action::kClose);
}

TEST(SamplingWindowTest, WithoutIterationMarksOneTickInNAfterTheStart) {
  const int64_t start = 5 * kMs;
  SamplingWindow w(4, start);
  int opened = 0;
  int64_t first_open = -1;
  int64_t now = start;
  for (int tick = 0; tick < 400; ++tick) {
    now += 20 * kMs;
    const Action a = w.Tick(now, 0, false);
    if (a == Action::kOpen) {
      ++opened;
      if (first_open < 0)
        first_open = now;
    }
  }
  ASSERT_GT(opened, 0);
  EXPECT_GT(first_open - start, SamplingWindow::kUnmarkedDelayNs);
  // A window without marks lasts one tick (every tick is a "boundary"), then 3 ticks closed.
  EXPECT_LE(opened, 400 / 4);
  EXPECT_GE(opened, 400 / 8);
}

TEST(SamplingWindowTest, PeriodOneSamplesEveryIteration) {
  SamplingWindow w(1, 0);
  int64_t now = 0;
  int opened = 0;
  for (uint64_t marks = 1; marks <= 20; ++marks) {
    now += 10 * kMs;
    opened += w.Tick(now, marks, false) == Action::kOpen ? 1 : 0;
    now += 10 * kMs;
    w.Tick(now, marks, false);
  }
  // Open for one iteration, closed at the next boundary, open again at the one after.
  EXPECT_EQ(opened, 10);
}

// A long run as a real program makes it: steps of 40 ms with 10 % jitter, an evaluation of
// 600 ms every 100 steps, a 3 s checkpoint every 500, a GC pause now and then, a machine that
// slows down by half for a while; writer ticks every 20 ms, sometimes 200 ms late.
TEST(SamplingWindowTest, ARealisticRunIsSampledAtMostOneNthOfTheTimeAndNeverStarved) {
  constexpr uint32_t kEvery = 32;
  constexpr uint64_t kIterations = 3000;
  std::mt19937_64 rng(1234);
  std::uniform_real_distribution<double> jitter(0.9, 1.1);
  std::uniform_int_distribution<int> percent(0, 99);

  // Iteration boundary times.
  std::vector<int64_t> boundary;
  int64_t t = 0;
  for (uint64_t i = 1; i <= kIterations; ++i) {
    double step = 40.0 * jitter(rng);
    if (i % 100 == 0)
      step += 600;
    if (i % 500 == 0)
      step += 3000;
    if (percent(rng) == 0)
      step += 150;  // GC pause
    if (i > 1000 && i < 1400)
      step *= 1.5;  // slow machine
    t += static_cast<int64_t>(step * kMs);
    boundary.push_back(t);
  }

  SamplingWindow w(kEvery, 0);
  int64_t now = 0;
  size_t marks = 0;
  int64_t open_since = 0;
  int64_t open_total = 0;
  int opened = 0;
  uint64_t seen = 0;
  while (marks < kIterations) {
    now += (percent(rng) < 2 ? 200 : 20) * kMs;
    while (marks < kIterations && boundary[marks] <= now) ++marks;
    const Action a = w.Tick(now, marks, false);
    if (a == Action::kOpen) {
      ++opened;
      open_since = now;
      EXPECT_TRUE(SampledIterationIn(seen, marks, kEvery))
          << "opened at " << marks << " without a sampled iteration since " << seen;
    } else if (a == Action::kClose) {
      open_total += now - open_since;
    }
    seen = marks;
  }
  const double open_fraction = static_cast<double>(open_total) / static_cast<double>(now);
  EXPECT_LE(open_fraction, 1.0 / kEvery + 0.01) << open_fraction;
  // Never starved: about one window per 32-64 iterations, plus the early ones (1, 2, 4, 8, 16).
  EXPECT_GE(opened, static_cast<int>(kIterations / (2 * kEvery)));
  EXPECT_LE(opened, static_cast<int>(kIterations / kEvery + 6));
}

}  // namespace
}  // namespace cuclimb::interposer
