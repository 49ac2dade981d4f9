// SPDX-License-Identifier: Apache-2.0
// Robust statistics and trend tests against hand-computed values.
#include "detect/stats.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "detect/trend.h"

namespace cuclimb::analysis {
namespace {

std::vector<double> Line(int n, double a, double b) {
  std::vector<double> y;
  for (int i = 0; i < n; ++i) y.push_back(a + b * i);
  return y;
}

// A deterministic "noise" sequence in [-1, 1].
double Wiggle(int i) {
  return std::sin(i * 12.9898) * 0.5 + std::sin(i * 78.233) * 0.5;
}

TEST(Stats, MedianAndMad) {
  const std::vector<double> v = {5, 1, 3, 2, 4};
  EXPECT_DOUBLE_EQ(stats::Median(v), 3);
  const std::vector<double> even = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(stats::Median(even), 2.5);
  EXPECT_DOUBLE_EQ(stats::Mad(v), 1);  // |dev| = 2,2,0,1,1
  EXPECT_DOUBLE_EQ(stats::Median({}), 0);
}

TEST(Stats, TheilSenRecoversALineDespiteOutliers) {
  std::vector<double> x, y = Line(50, 10, 0.5);
  for (int i = 0; i < 50; ++i) x.push_back(i);
  y[3] = 1000;
  y[40] = -1000;
  const stats::Line l = stats::TheilSen(x, y);
  EXPECT_NEAR(l.slope, 0.5, 1e-9);
  EXPECT_NEAR(l.intercept, 10, 1e-9);
}

TEST(Stats, MannKendallMonotonicTen) {
  // S = 45, var = 10·9·25/18 = 125, Z = 44/√125 = 3.9355, p = 8.30e-5.
  const stats::MannKendallResult r = stats::MannKendall(Line(10, 0, 1));
  EXPECT_DOUBLE_EQ(r.s, 45);
  EXPECT_DOUBLE_EQ(r.var, 125);
  EXPECT_NEAR(r.z, 3.93548, 1e-4);
  EXPECT_NEAR(r.p, 8.30e-5, 1e-6);
  EXPECT_DOUBLE_EQ(r.tau, 1);
}

TEST(Stats, MannKendallTieCorrection) {
  // 1 1 2 2 3 3: S = 12; ties: three groups of 2 → Σ 2·1·9 = 54; var = (6·5·17 − 54)/18 = 25.33.
  const std::vector<double> y = {1, 1, 2, 2, 3, 3};
  const stats::MannKendallResult r = stats::MannKendall(y);
  EXPECT_DOUBLE_EQ(r.s, 12);
  EXPECT_NEAR(r.var, (6.0 * 5 * 17 - 54) / 18, 1e-12);
  EXPECT_NEAR(r.z, 11 / std::sqrt(r.var), 1e-12);
}

TEST(Stats, MannKendallConstantIsNotATrend) {
  const stats::MannKendallResult r = stats::MannKendall(std::vector<double>(30, 7.0));
  EXPECT_EQ(r.s, 0);
  EXPECT_EQ(r.p, 1);
}

TEST(Stats, OlsAndPartialCorrelation) {
  std::vector<double> t, x, y;
  for (int i = 0; i < 200; ++i) {
    t.push_back(i);
    x.push_back(i + 20 * Wiggle(i));  // rises with t, with its own wiggles
    y.push_back(3 * x.back() + 5);    // follows x exactly
  }
  const stats::OlsResult fit = stats::Ols(x, y);
  EXPECT_NEAR(fit.slope, 3, 1e-9);
  EXPECT_NEAR(fit.r, 1, 1e-12);
  const stats::PartialResult p = stats::PartialCorrelation(y, x, t);
  EXPECT_TRUE(p.defined);
  EXPECT_GT(p.r, 0.99);
  EXPECT_LT(p.p, 1e-10);
  // A second line that rises with t but not with x's wiggles: no partial correlation.
  std::vector<double> z;
  for (int i = 0; i < 200; ++i) z.push_back(2.0 * i + 5 * Wiggle(i + 1000));
  const stats::PartialResult q = stats::PartialCorrelation(z, x, t);
  EXPECT_LT(std::fabs(q.r), 0.3);
}

TEST(Stats, BinMeans) {
  std::vector<double> x, y;
  stats::BinMeans(Line(10, 0, 1), 5, &x, &y);
  ASSERT_EQ(y.size(), 5u);
  EXPECT_DOUBLE_EQ(x[0], 0.5);
  EXPECT_DOUBLE_EQ(y[4], 8.5);
  stats::BinMeans(Line(3, 0, 1), 5, &x, &y);
  EXPECT_EQ(y.size(), 3u);
}

TrendOptions Options() {
  TrendOptions o;
  o.resolution = 0.5;
  return o;
}

TEST(Trend, LinearGrowthFromTheStartHasNoWarmup) {
  const Trend t = ComputeTrend(Line(200, 10, 2), Options());
  EXPECT_TRUE(t.tested);
  EXPECT_EQ(t.warmup, 0);
  EXPECT_NEAR(t.slope_per_iter, 2, 1e-9);
  EXPECT_TRUE(t.rising);
  EXPECT_FALSE(GrowthStopped(t));
}

TEST(Trend, JitSlowStartIsCut) {
  std::vector<double> y(150, 100.0);
  for (int i = 0; i < 150; ++i) y[i] += Wiggle(i);
  for (int i = 0; i < 12; ++i) y[i] = 500 - 20 * i;
  const Trend t = ComputeTrend(y, Options());
  EXPECT_EQ(t.warmup, 12);
  EXPECT_FALSE(t.rising);
  EXPECT_FALSE(t.falling);
  EXPECT_NEAR(t.first, 100, 1.5);
}

TEST(Trend, RampThatLevelsOffIsWarmup) {
  std::vector<double> y;
  for (int i = 0; i < 200; ++i) y.push_back(std::min(i, 40) * 3.0);
  const Trend t = ComputeTrend(y, Options());
  EXPECT_GE(t.warmup, 38);
  EXPECT_LE(t.warmup, 41);
  EXPECT_FALSE(t.rising);
}

TEST(Trend, GrowthThatStartsLateIsNotWarmupAndIsFoundWithItsStart) {
  std::vector<double> y;
  for (int i = 0; i < 300; ++i) y.push_back(i < 60 ? 10 : 10 + (i - 60));
  const Trend t = ComputeTrend(y, Options());
  EXPECT_EQ(t.warmup, 0) << "the flat stretch is where the growth starts from, not warm-up";
  EXPECT_TRUE(t.rising);
  EXPECT_NEAR(static_cast<double>(GrowthOnset(y, t.warmup)), 60, 3);
  TrendOptions from_onset = Options();
  from_onset.warmup = GrowthOnset(y, t.warmup);
  EXPECT_NEAR(ComputeTrend(y, from_onset).slope_per_iter, 1, 1e-9);
}

TEST(Trend, LateGrowthOnANoisyTimeIsFoundWithItsStart) {
  std::vector<double> y;
  for (int i = 0; i < 800; ++i) {
    double v = 20 + 0.4 * Wiggle(i) + (i >= 300 ? 0.02 * (i - 300) : 0);
    if (i % 50 == 49)
      v += 15;  // an evaluation every 50 iterations
    if (i % 250 == 249)
      v += 60;  // a checkpoint every 250
    y.push_back(v);
  }
  const Trend t = ComputeTrend(y, Options());
  EXPECT_LE(t.warmup, 2);
  EXPECT_TRUE(t.rising);
  EXPECT_NEAR(static_cast<double>(GrowthOnset(y, t.warmup)), 300, 25);
}

TEST(Trend, LineFromTheStartHasItsOnsetAtTheStart) {
  std::vector<double> y;
  for (int i = 0; i < 300; ++i) y.push_back(5 + 0.1 * i + 0.5 * Wiggle(i));
  EXPECT_EQ(GrowthOnset(y, 0), 0);
  EXPECT_EQ(GrowthOnset(y, 10), 10);
}

TEST(Trend, PeriodicSpikesAreSteadyStateNotWarmup) {
  // Gradient accumulation: the optimizer runs every 4th iteration and doubles its time; JIT
  // makes the first 3 iterations slow.
  std::vector<double> y;
  for (int i = 0; i < 400; ++i) {
    double v = 10 + 0.2 * Wiggle(i) + 0.01 * i;
    if (i % 4 == 3)
      v += 10;
    if (i < 3)
      v += 80;
    y.push_back(v);
  }
  const WarmupCut w = FindWarmup(y, 0);
  EXPECT_EQ(w.cut, 3);
  EXPECT_EQ(w.wanted, 3);
  const Trend t = ComputeTrend(y, Options());
  EXPECT_TRUE(t.rising);
}

TEST(Trend, SeriesRisingFromZeroIsNotCut) {
  // Host samples of a function that starts at zero and rises, slower and slower (concave) or
  // faster and faster (convex): growth from the first iteration, never warm-up.
  std::vector<double> concave, convex;
  for (int i = 0; i < 800; ++i) {
    concave.push_back(std::floor(std::sqrt(i) * 0.5 + 0.5 * (1 + Wiggle(i))));
    convex.push_back(std::floor(i * i / 40000.0 + 0.6 * (1 + Wiggle(i))));
  }
  EXPECT_EQ(FindWarmup(concave, 0.5).wanted, 0);
  EXPECT_EQ(FindWarmup(convex, 0.5).wanted, 0);
  EXPECT_TRUE(ComputeTrend(concave, Options()).rising);
  EXPECT_TRUE(ComputeTrend(convex, Options()).rising);
}

TEST(Trend, WarmupIsCappedAtItsShare) {
  // A slow start over 60 % of the run: the cut stops at the cap and says what it wanted.
  std::vector<double> y;
  for (int i = 0; i < 200; ++i) y.push_back((i < 90 ? 50 : 10) + 0.1 * Wiggle(i));
  const WarmupCut w = FindWarmup(y, 0, 0.25);
  EXPECT_EQ(w.cut, 50);
  EXPECT_EQ(w.wanted, 90);
}

TEST(Trend, GrowthThatStopsLateIsStopped) {
  std::vector<double> y;
  for (int i = 0; i < 300; ++i) y.push_back(std::min(i, 180));
  const Trend t = ComputeTrend(y, Options());
  EXPECT_TRUE(t.rising);
  EXPECT_TRUE(GrowthStopped(t));
}

TEST(Trend, NoisyFlatSeriesIsFlat) {
  std::vector<double> y;
  for (int i = 0; i < 500; ++i) y.push_back(100 + 10 * Wiggle(i));
  const Trend t = ComputeTrend(y, Options());
  EXPECT_FALSE(t.rising);
  EXPECT_FALSE(t.falling);
  EXPECT_LT(std::fabs(t.change_pct), 5);
}

TEST(Trend, LongSeriesAreBinned) {
  const Trend t = ComputeTrend(Line(100000, 0, 0.01), Options());
  EXPECT_TRUE(t.rising);
  EXPECT_NEAR(t.slope_per_iter, 0.01, 1e-6);
  EXPECT_EQ(t.n, 100000);
}

TEST(Trend, TooShortIsNotTested) {
  const Trend t = ComputeTrend(Line(5, 0, 1), Options());
  EXPECT_FALSE(t.tested);
  EXPECT_FALSE(t.rising);
  EXPECT_DOUBLE_EQ(t.first, 1);  // median of the first 3
}

TEST(Trend, FixedWarmupOverridesAuto) {
  TrendOptions o = Options();
  o.warmup = 50;
  const Trend t = ComputeTrend(Line(100, 0, 1), o);
  EXPECT_EQ(t.warmup, 50);
  EXPECT_EQ(t.n, 50);
}

}  // namespace
}  // namespace cuclimb::analysis
