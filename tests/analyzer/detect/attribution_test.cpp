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

TEST(Attribution, LinearLeakWithHostSideGrowthExplains) {
  const Accumulator c = Candidate(Linear(0, 2, 0));
  const RangeReport r = Range(Linear(10, 0.05, 0.05), true);
  const Explanation e = Explain(r, c, Thresholds{});
  EXPECT_EQ(e.verdict, "explains") << e.reason;
  EXPECT_GT(e.share, 0.9);
  EXPECT_GT(std::fabs(e.r_index), 0.98);
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
