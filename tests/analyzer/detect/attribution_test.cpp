// SPDX-License-Identifier: Apache-2.0
// Attribution: an accumulator explains a climbing range only with evidence beyond "both rise".
#include "detect/attribution.h"

#include <cmath>

#include <gtest/gtest.h>

#include "detect/trend.h"

namespace cuclimb::analysis {
namespace {

constexpr int kN = 200;

double Wiggle(int i) {
  return std::sin(i * 12.9898) * 0.5 + std::sin(i * 78.233) * 0.5;
}

Component Comp(const Series& s) {
  Component c;
  c.ms = s;
  TrendOptions o;
  o.warmup = 0;
  c.trend = ComputeTrend(s, o);
  c.delta_ms = c.trend.slope_per_iter * static_cast<double>(c.trend.n);
  return c;
}

// A range whose growth lies in `host` (host-side) or `sync` (waiting for the GPU).
RangeReport Range(const Series& total, bool host_side) {
  RangeReport r;
  r.name = "P/step";
  r.total_ms = total;
  TrendOptions o;
  o.warmup = 0;
  r.trend = ComputeTrend(total, o);
  r.climbing = true;
  Series flat(total.size(), 1.0), rest(total.size());
  for (size_t i = 0; i < total.size(); ++i) rest[i] = total[i] - 1.0;
  r.decomposition.wall = Comp(total);
  r.decomposition.api = Comp(flat);
  r.decomposition.host = Comp(host_side ? rest : flat);
  r.decomposition.sync = Comp(host_side ? flat : rest);
  r.decomposition.gpu = Comp(host_side ? flat : rest);
  Component alloc = Comp(flat);
  alloc.name = "cuMemAllocAsync";
  r.decomposition.by_api.push_back(alloc);
  return r;
}

Accumulator Candidate(const Series& values) {
  Accumulator a;
  a.kind = "device_allocations";
  a.key = "reserve";
  a.id = "device_allocations:reserve";
  a.values = values;
  TrendOptions o;
  o.warmup = 0;
  o.resolution = 0.5;
  a.trend = ComputeTrend(values, o);
  return a;
}

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

TEST(Attribution, LinearLeakWithHostSideGrowthIsTheLikelyCause) {
  // The textbook leak: +2 handles per iteration, the step time linear with it from iteration 0.
  // No statistic can tell it from time; the only growing state with host-side growth is named.
  const Accumulator c = Candidate(Linear(0, 2, 0));
  const RangeReport r = Range(Linear(10, 0.05, 0.05), true);
  const Explanation e = Explain(r, c, Thresholds{});
  EXPECT_EQ(e.verdict, "likely_cause") << e.reason;
  EXPECT_EQ(e.grounds, (std::vector<std::string>{"unique", "mechanism"}));
  EXPECT_EQ(e.mechanism, "host");
  EXPECT_TRUE(e.unique);
  EXPECT_GT(e.share, 0.9);
  EXPECT_GT(std::fabs(e.r_index), 0.98);
  EXPECT_NE(e.reason.find("the only state that grows"), std::string::npos) << e.reason;
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

TEST(Attribution, OutliersCannotFlipTheVerdict) {
  const Accumulator linear = Candidate(Linear(0, 2, 0));
  const RangeReport climb = Range(Dirty(Linear(10, 0.05, 0.05)), true);
  EXPECT_EQ(Explain(climb, linear, Thresholds{}).verdict, "likely_cause");
  const Series steps = Steps();
  Series total;
  for (int i = 0; i < kN; ++i) total.push_back(10 + 0.01 * steps[i] + 0.002 * Wiggle(i));
  const Explanation shape = Explain(Range(Dirty(total), false), Candidate(steps), Thresholds{});
  EXPECT_EQ(shape.verdict, "explains") << shape.reason;
  Series flat;
  for (int i = 0; i < kN; ++i) flat.push_back(10 + 0.1 * Wiggle(i));
  EXPECT_EQ(Explain(Range(Dirty(flat), true), linear, Thresholds{}).verdict, "unrelated");
}

// 0 until `from`, then `rate` per iteration.
Series Late(int from, double base, double rate, double noise) {
  Series s;
  for (int i = 0; i < kN; ++i) s.push_back(base + rate * std::max(0, i - from) + noise * Wiggle(i));
  return s;
}

TEST(Attribution, LateLeakAndClimbStartingTogetherExplains) {
  Accumulator c = Candidate(Late(80, 0, 2, 0));
  c.growth_start_iteration = GrowthOnset(c.values, 0);
  RangeReport r = Range(Late(80, 10, 0.05, 0.05), true);
  r.climb_start_iteration = GrowthOnset(r.total_ms, 0);
  EXPECT_NEAR(static_cast<double>(c.growth_start_iteration), 80, 2);
  EXPECT_NEAR(static_cast<double>(r.climb_start_iteration), 80, 6);
  const Explanation e = Explain(r, c, Thresholds{});
  EXPECT_EQ(e.verdict, "explains") << e.reason;
  EXPECT_TRUE(e.onset_aligned);
  EXPECT_EQ(e.grounds, (std::vector<std::string>{"shape", "onset", "unique", "mechanism"}));
}

TEST(Attribution, LateLeakUnderAClimbFromTheStartIsNotItsCause) {
  // The machine (or anything else) makes the range climb from iteration 0; a leak that starts at
  // 80 is not its cause, even though both rise and the growth is host-side.
  Accumulator c = Candidate(Late(80, 0, 2, 0));
  c.growth_start_iteration = GrowthOnset(c.values, 0);
  RangeReport r = Range(Linear(10, 0.05, 0.05), true);
  r.climb_start_iteration = GrowthOnset(r.total_ms, 0);
  EXPECT_EQ(r.climb_start_iteration, 0);
  const Explanation e = Explain(r, c, Thresholds{});
  EXPECT_EQ(e.verdict, "correlated_only") << e.reason;
  EXPECT_FALSE(e.onset_aligned);
}

TEST(Attribution, TwoStraightLineStatesCannotBeToldApart) {
  Accumulator a = Candidate(Linear(0, 2, 0)), b = Candidate(Linear(5, 1, 0));
  b.kind = "pinned_allocations";
  b.id = "pinned_allocations:x";
  const RangeReport r = Range(Linear(10, 0.05, 0.05), true);
  std::vector<Explanation> e{Measure(r, a, Thresholds{}), Measure(r, b, Thresholds{})};
  GradeRange(r, {&a, &b}, &e);
  for (const Explanation& x : e) {
    EXPECT_EQ(x.verdict, "correlated_only") << x.reason;
    EXPECT_FALSE(x.unique);
    EXPECT_NE(x.reason.find("one of 2 states"), std::string::npos) << x.reason;
  }
}

TEST(Attribution, GrowthInsideTheFamilysCallsIsTheLikelyCauseDespiteRivals) {
  // The extra time sits in cuMemAllocAsync itself: the allocation state is named even though
  // another state rises in a straight line too.
  Accumulator a = Candidate(Linear(0, 2, 0)), b = Candidate(Linear(5, 1, 0));
  b.kind = "nvtx_regions";
  b.id = "nvtx_regions:heap";
  RangeReport r = Range(Linear(10, 0.05, 0.05), true);
  r.decomposition.by_api[0] = Comp(Linear(1, 0.05, 0));
  r.decomposition.by_api[0].name = "cuMemAllocAsync";
  std::vector<Explanation> e{Measure(r, a, Thresholds{}), Measure(r, b, Thresholds{})};
  GradeRange(r, {&a, &b}, &e);
  EXPECT_EQ(e[0].verdict, "likely_cause") << e[0].reason;
  EXPECT_EQ(e[0].mechanism, "calls");
  EXPECT_EQ(e[1].verdict, "correlated_only") << e[1].reason;
}

TEST(Attribution, LinearLeakWithGpuSideGrowthIsOnlyCorrelated) {
  const Accumulator c = Candidate(Linear(0, 2, 0));
  const RangeReport r = Range(Linear(10, 0.05, 0.05), false);
  const Explanation e = Explain(r, c, Thresholds{});
  EXPECT_EQ(e.verdict, "correlated_only") << e.reason;
  EXPECT_NE(e.reason.find("synchronization wait or GPU time"), std::string::npos);
}

TEST(Attribution, RangeFollowingTheStepsOfABurstyLeakExplains) {
  const Series steps = Steps();
  Series total;
  for (int i = 0; i < kN; ++i) total.push_back(10 + 0.01 * steps[i] + 0.002 * Wiggle(i));
  // Even with the growth on the GPU side: the shape match is the evidence here.
  const Explanation e = Explain(Range(total, false), Candidate(steps), Thresholds{});
  EXPECT_EQ(e.verdict, "explains") << e.reason;
  EXPECT_GT(e.partial_r, 0.5);
}

TEST(Attribution, SmoothClimbBesideABurstyLeakIsOnlyCorrelated) {
  const Explanation e =
      Explain(Range(Linear(10, 0.01, 0.002), true), Candidate(Steps()), Thresholds{});
  EXPECT_EQ(e.verdict, "correlated_only") << e.reason;
}

TEST(Attribution, LinearLeakWithoutAPathIsOnlyCorrelated) {
  Accumulator c = Candidate(Linear(0, 2, 0));
  c.kind = "events";  // the range makes no event calls
  const Explanation e = Explain(Range(Linear(10, 0.05, 0.05), true), c, Thresholds{});
  EXPECT_EQ(e.verdict, "correlated_only") << e.reason;
  EXPECT_NE(e.reason.find("no calls through which events"), std::string::npos) << e.reason;
}

TEST(Attribution, FlatRangeIsUnrelated) {
  Series flat;
  for (int i = 0; i < kN; ++i) flat.push_back(10 + 0.1 * Wiggle(i));
  RangeReport r = Range(flat, true);
  const Explanation e = Explain(r, Candidate(Linear(0, 2, 0)), Thresholds{});
  EXPECT_EQ(e.verdict, "unrelated") << e.reason;
}

TEST(Attribution, HostSideShare) {
  RangeReport r = Range(Linear(10, 0.05, 0), true);
  EXPECT_NEAR(HostSideShare(r.decomposition), 1.0, 1e-6);
  r = Range(Linear(10, 0.05, 0), false);
  EXPECT_NEAR(HostSideShare(r.decomposition), 0.0, 1e-6);
}

}  // namespace
}  // namespace cuclimb::analysis
