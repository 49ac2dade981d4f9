// SPDX-License-Identifier: Apache-2.0
// Warm-up cut and trend tests for per-iteration series.
#include "detect/trend.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "detect/stats.h"

namespace cuclimb::analysis {
namespace {

constexpr double kOutlierSigmas = 4.0;
constexpr double kMadToSigma = 1.4826;
constexpr size_t kTailPoints = 32;

// Theil–Sen over y[lo, hi) with x = absolute index, binned when long.
stats::Line FitRange(absl::Span<const double> y, size_t lo, size_t hi, size_t max_points) {
  std::vector<double> bx, by;
  stats::BinMeans(y.subspan(lo, hi - lo), max_points, &bx, &by);
  for (double& x : bx) x += static_cast<double>(lo);
  return stats::TheilSen(bx, by);
}

double Scale(absl::Span<const double> y) {
  double m = 0;
  for (double v : y) m = std::max(m, std::fabs(v));
  return m;
}

}  // namespace

int64_t AutoWarmup(absl::Span<const double> y, double resolution) {
  const size_t n = y.size();
  if (n < 8)
    return 0;
  const size_t half = n / 2;
  const stats::Line line = FitRange(y, half, n, 128);
  std::vector<double> resid;
  resid.reserve(n - half);
  for (size_t i = half; i < n; ++i) resid.push_back(y[i] - (line.intercept + line.slope * i));
  const double sigma = std::max({kMadToSigma * stats::Mad(resid), resolution, 1e-6 * Scale(y)});
  if (sigma <= 0)
    return 0;
  // Longest prefix [0, i] with ≥ 50 % outliers, ending at its last outlier.
  size_t outliers = 0;
  int64_t cut = 0;
  for (size_t i = 0; i < half; ++i) {
    const bool out = std::fabs(y[i] - (line.intercept + line.slope * i)) > kOutlierSigmas * sigma;
    outliers += out ? 1 : 0;
    if (out && 2 * outliers >= i + 1)
      cut = static_cast<int64_t>(i) + 1;
  }
  return cut;
}

Trend ComputeTrend(absl::Span<const double> y, const TrendOptions& options) {
  Trend t;
  const int64_t n = static_cast<int64_t>(y.size());
  if (n > 0 && std::all_of(y.begin(), y.end(), [&](double v) { return v == y[0]; })) {
    // A constant series: no warm-up, no trend (the common case for most state series).
    t.n = n;
    t.first = t.last = t.intercept = y[0];
    t.tested = n >= std::max<int64_t>(options.min_iterations, 3);
    return t;
  }
  int64_t warmup = options.warmup >= 0 ? options.warmup : AutoWarmup(y, options.resolution);
  warmup = std::clamp<int64_t>(warmup, 0, n);
  t.warmup = warmup;
  const int64_t m = n - warmup;
  t.n = m;
  if (m <= 0)
    return t;
  const absl::Span<const double> w = y.subspan(warmup);
  const int64_t edge = std::max<int64_t>(std::min<int64_t>(3, m), m / 10);
  t.first = stats::Median(w.subspan(0, edge));
  t.last = stats::Median(w.subspan(m - edge));
  t.change_pct = t.first != 0 ? 100.0 * (t.last - t.first) / std::fabs(t.first) : 0;
  if (m < std::max<int64_t>(options.min_iterations, 3))
    return t;
  t.tested = true;
  std::vector<double> bx, by;
  stats::BinMeans(w, options.max_points, &bx, &by);
  const stats::Line line = stats::TheilSen(bx, by);
  t.slope_per_iter = line.slope;
  t.intercept = line.intercept;
  const stats::MannKendallResult mk = stats::MannKendall(by);
  t.mk_z = mk.z;
  t.p_value = mk.p;
  t.tau = mk.tau;
  const size_t tail = static_cast<size_t>(m) - static_cast<size_t>(m) / 3 * 2;
  const size_t tail_from = static_cast<size_t>(m) - std::max<size_t>(tail, 3);
  // Binned into 32 means: on sampled counts (0–4 host samples an iteration) a Theil–Sen slope
  // of the raw points is 0 from ties alone, and growth would look stopped.
  t.tail_slope_per_iter = FitRange(w, tail_from, static_cast<size_t>(m), kTailPoints).slope;
  t.rising = t.p_value < options.alpha && t.slope_per_iter > 0;
  t.falling = t.p_value < options.alpha && t.slope_per_iter < 0;
  // A significant Mann–Kendall with a zero Theil–Sen slope (mostly-tied counts that step up a
  // few times) is still growth; use the robust levels to give it a direction.
  if (t.p_value < options.alpha && t.slope_per_iter == 0 && t.last != t.first) {
    t.slope_per_iter = (t.last - t.first) / static_cast<double>(std::max<int64_t>(m - edge, 1));
    t.rising = t.slope_per_iter > 0;
    t.falling = t.slope_per_iter < 0;
  }
  return t;
}

bool GrowthStopped(const Trend& trend) {
  return trend.rising && trend.tail_slope_per_iter < 0.25 * trend.slope_per_iter;
}

}  // namespace cuclimb::analysis
