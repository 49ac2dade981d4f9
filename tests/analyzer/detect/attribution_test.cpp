// SPDX-License-Identifier: Apache-2.0
// Attribution: an accumulator explains a climbing range, or is its likely cause, only with
// evidence beyond "both rise".
#include "detect/attribution.h"

#include <cmath>
#include <memory>

#include <gtest/gtest.h>

#include "detect/trend.h"

namespace cuclimb::analysis {
namespace {

constexpr int kN = 200;

double Wiggle(int i) {
  return std::sin(i * 12.9898) * 0.5 + std::sin(i * 78.233) * 0.5;
}

Trend TrendOf(const Series& s) {
  TrendOptions o;
  o.warmup = 0;
  return ComputeTrend(s, o);
}

double Delta(const Series& s) {
  const Trend t = TrendOf(s);
  return t.slope_per_iter * static_cast<double>(t.n);
}

// A range whose growth lies in host code (host_side) or in waiting for the GPU; its CUDA calls
// (one cuMemAllocAsync part) stay flat. The view points into `total`.
struct Range {
  Series total;
  RangeView view;
  Range(Series t, bool host_side) : total(std::move(t)) {
    view.name = "P/step";
    view.total_ms = total;
    Series rest(total.size());
    for (size_t i = 0; i < total.size(); ++i) rest[i] = total[i] - 1.0;
    const Trend tt = TrendOf(total), rt = TrendOf(rest);
    view.wall_delta = Delta(total);
    view.host_delta = host_side ? Delta(rest) : 0;
    view.api_delta = 0;
    view.wall_first = tt.first;
    view.api_first = 1.0;
    view.host_change_pct = host_side ? rt.change_pct : 0;
    view.api_change_pct = 0;
    view.parts_tested = true;
    view.calls.push_back({"cuMemAllocAsync", 0});
    view.climb_start = GrowthOnset(total, 0);
  }
  Range(const Range&) = delete;
};

struct Candidate {
  Series values;
  CandidateView view;
  explicit Candidate(Series v, AccumulatorKind kind = AccumulatorKind::kDeviceAllocations)
      : values(std::move(v)) {
    view.kind = kind;
    view.values = values;
    view.growth_start = GrowthOnset(values, 0);
  }
  Candidate(const Candidate&) = delete;
};

Series Linear(double a, double b, double noise, int seed = 0) {
  Series s;
  for (int i = 0; i < kN; ++i) s.push_back(a + b * i + noise * Wiggle(i + seed));
  return s;
}

// 10 handles every 10th iteration: not a straight line in the index.
Series Steps() {
  Series s;
  for (int i = 0; i < kN; ++i) s.push_back(10.0 * (i / 10));
  return s;
}

// `base` until `from`, then `rate` per iteration.
Series Late(int from, double base, double rate, double noise) {
  Series s;
  for (int i = 0; i < kN; ++i) s.push_back(base + rate * std::max(0, i - from) + noise * Wiggle(i));
  return s;
}

// A loop with a GC pause every 100 iterations, an evaluation every 50 and a checkpoint every
// 250: a few iterations far slower than the rest.
Series Dirty(Series s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (i % 100 == 37)
      s[i] *= 6;
    if (i % 50 == 49)
      s[i] *= 1.8;
    if (i % 250 == 249)
      s[i] *= 12;
  }
  return s;
}

Series StepsTotal() {
  const Series steps = Steps();
  Series total;
  for (int i = 0; i < kN; ++i) total.push_back(10 + 0.01 * steps[i] + 0.002 * Wiggle(i));
  return total;
}

TEST(Attribution, LinearLeakWithHostSideGrowthIsTheLikelyCause) {
  // The textbook leak: +2 handles per iteration, the step time linear with it from iteration 0.
  // No statistic can tell it from time; the only growing state with host-side growth is named.
  const Candidate c(Linear(0, 2, 0));
  const Range r(Linear(10, 0.05, 0.05), true);
  const Explanation e = Explain(r.view, c.view, Thresholds{});
  EXPECT_EQ(e.verdict, "likely_cause") << e.reason;
  EXPECT_EQ(e.grounds, (std::vector<std::string>{"unique", "mechanism"}));
  EXPECT_EQ(e.mechanism, "host");
  EXPECT_TRUE(e.unique);
  EXPECT_GT(e.share, 0.9);
  EXPECT_GT(std::fabs(e.r_index), 0.98);
  EXPECT_NE(e.reason.find("the only state that grows"), std::string::npos) << e.reason;
}

TEST(Attribution, OutliersCannotFlipTheVerdict) {
  const Candidate linear(Linear(0, 2, 0));
  const Range climb(Dirty(Linear(10, 0.05, 0.05)), true);
  EXPECT_EQ(Explain(climb.view, linear.view, Thresholds{}).verdict, "likely_cause");
  const Candidate steps(Steps());
  const Range follows(Dirty(StepsTotal()), false);
  const Explanation shape = Explain(follows.view, steps.view, Thresholds{});
  EXPECT_EQ(shape.verdict, "explains") << shape.reason;
  Series flat;
  for (int i = 0; i < kN; ++i) flat.push_back(10 + 0.1 * Wiggle(i));
  const Range noisy(Dirty(flat), true);
  EXPECT_EQ(Explain(noisy.view, linear.view, Thresholds{}).verdict, "unrelated");
}

TEST(Attribution, LateLeakAndClimbStartingTogetherExplains) {
  const Candidate c(Late(80, 0, 2, 0));
  const Range r(Late(80, 10, 0.05, 0.05), true);
  EXPECT_NEAR(static_cast<double>(c.view.growth_start), 80, 2);
  EXPECT_NEAR(static_cast<double>(r.view.climb_start), 80, 6);
  const Explanation e = Explain(r.view, c.view, Thresholds{});
  EXPECT_EQ(e.verdict, "explains") << e.reason;
  EXPECT_TRUE(e.onset_aligned);
  EXPECT_EQ(e.grounds, (std::vector<std::string>{"shape", "onset", "unique", "mechanism"}));
}

TEST(Attribution, LateLeakUnderAClimbFromTheStartIsNotItsCause) {
  // Something else makes the range climb from iteration 0; a leak that starts at 80 is not its
  // cause, even though both rise and the growth is host-side.
  const Candidate c(Late(80, 0, 2, 0));
  const Range r(Linear(10, 0.05, 0.05), true);
  EXPECT_EQ(r.view.climb_start, 0);
  const Explanation e = Explain(r.view, c.view, Thresholds{});
  EXPECT_EQ(e.verdict, "correlated_only") << e.reason;
  EXPECT_FALSE(e.onset_aligned);
}

TEST(Attribution, TwoStraightLineStatesCannotBeToldApart) {
  const Candidate a(Linear(0, 2, 0)), b(Linear(5, 1, 0), AccumulatorKind::kPinnedAllocations);
  const Range r(Linear(10, 0.05, 0.05), true);
  std::vector<Explanation> e{Measure(r.view, a.view, Thresholds{}),
                             Measure(r.view, b.view, Thresholds{})};
  GradeRange(r.view, {a.view, b.view}, &e);
  for (const Explanation& x : e) {
    EXPECT_EQ(x.verdict, "correlated_only") << x.reason;
    EXPECT_FALSE(x.unique);
    EXPECT_NE(x.reason.find("one of 2 states"), std::string::npos) << x.reason;
  }
}

TEST(Attribution, GrowthInsideTheFamilysCallsIsTheLikelyCauseDespiteRivals) {
  // The extra time sits in cuMemAllocAsync itself: the allocation state is named even though
  // another state rises in a straight line too.
  const Candidate a(Linear(0, 2, 0)), b(Linear(5, 1, 0), AccumulatorKind::kNvtxRegions);
  Range r(Linear(10, 0.05, 0.05), true);
  r.view.calls[0].delta_ms = r.view.wall_delta;
  std::vector<Explanation> e{Measure(r.view, a.view, Thresholds{}),
                             Measure(r.view, b.view, Thresholds{})};
  GradeRange(r.view, {a.view, b.view}, &e);
  EXPECT_EQ(e[0].verdict, "likely_cause") << e[0].reason;
  EXPECT_EQ(e[0].mechanism, "calls");
  EXPECT_EQ(e[1].verdict, "correlated_only") << e[1].reason;
}

TEST(Attribution, EvenGrowthOfHostCodeAndCallsIsTheMachinesNotTheStates) {
  const Candidate c(Linear(0, 2, 0));
  Range r(Linear(10, 0.05, 0.05), true);
  r.view.api_change_pct = r.view.host_change_pct;  // every call slowed as much as host code
  r.view.api_first = 0.5 * r.view.wall_first;
  const Explanation e = Explain(r.view, c.view, Thresholds{});
  EXPECT_EQ(e.verdict, "correlated_only") << e.reason;
  EXPECT_NE(e.reason.find("same proportion"), std::string::npos) << e.reason;
  EXPECT_TRUE(ScalesEvenly(r.view));
}

TEST(Attribution, LinearLeakWithGpuSideGrowthIsOnlyCorrelated) {
  const Candidate c(Linear(0, 2, 0));
  const Range r(Linear(10, 0.05, 0.05), false);
  const Explanation e = Explain(r.view, c.view, Thresholds{});
  EXPECT_EQ(e.verdict, "correlated_only") << e.reason;
  EXPECT_NE(e.reason.find("synchronization wait or GPU time"), std::string::npos);
}

TEST(Attribution, RangeFollowingTheStepsOfABurstyLeakExplains) {
  // Even with the growth on the GPU side: the shape match is the evidence here.
  const Candidate c(Steps());
  const Range r(StepsTotal(), false);
  const Explanation e = Explain(r.view, c.view, Thresholds{});
  EXPECT_EQ(e.verdict, "explains") << e.reason;
  EXPECT_GT(e.partial_r, 0.5);
}

TEST(Attribution, SmoothClimbBesideABurstyLeakIsOnlyCorrelated) {
  const Candidate c(Steps());
  const Range r(Linear(10, 0.01, 0.002), true);
  EXPECT_EQ(Explain(r.view, c.view, Thresholds{}).verdict, "correlated_only");
}

TEST(Attribution, LinearLeakWithoutAPathIsOnlyCorrelated) {
  const Candidate c(Linear(0, 2, 0), AccumulatorKind::kEvents);  // the range makes no event calls
  const Range r(Linear(10, 0.05, 0.05), true);
  const Explanation e = Explain(r.view, c.view, Thresholds{});
  EXPECT_EQ(e.verdict, "correlated_only") << e.reason;
  EXPECT_NE(e.reason.find("no calls through which events"), std::string::npos) << e.reason;
}

TEST(Attribution, FlatRangeIsUnrelated) {
  Series flat;
  for (int i = 0; i < kN; ++i) flat.push_back(10 + 0.1 * Wiggle(i));
  const Range r(flat, true);
  const Candidate c(Linear(0, 2, 0));
  EXPECT_EQ(Explain(r.view, c.view, Thresholds{}).verdict, "unrelated");
}

TEST(Attribution, HostSideShare) {
  const Range host(Linear(10, 0.05, 0), true), gpu(Linear(10, 0.05, 0), false);
  EXPECT_NEAR(HostSideShare(host.view), 1.0, 1e-6);
  EXPECT_NEAR(HostSideShare(gpu.view), 0.0, 1e-6);
}

}  // namespace
}  // namespace cuclimb::analysis
