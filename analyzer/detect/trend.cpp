// SPDX-License-Identifier: Apache-2.0
// Warm-up cut and trend tests for per-iteration series.
#include "detect/trend.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "detect/stats.h"

namespace cuclimb::analysis {
namespace {

constexpr double kBandSigmas = 3.0;  // the warm-up band beyond the residuals' 5th–95th percentile
constexpr double kMadToSigma = 1.4826;
constexpr size_t kTailPoints = 32;
constexpr double kOnsetGain = 0.7;  // a hinge must leave at most 70 % of a line's squared error

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

WarmupCut FindWarmup(absl::Span<const double> y, double resolution, double max_share) {
  WarmupCut w;
  const size_t n = y.size();
  if (n < 8)
    return w;
  const size_t half = n / 2;
  const stats::Line line = FitRange(y, half, n, 128);
  auto at = [&](size_t i) { return line.intercept + line.slope * static_cast<double>(i); };
  std::vector<double> resid;
  resid.reserve(n - half);
  for (size_t i = half; i < n; ++i) resid.push_back(y[i] - at(i));
  const double sigma = std::max({kMadToSigma * stats::Mad(resid), resolution, 1e-6 * Scale(y)});
  if (sigma <= 0)
    return w;
  const double band_lo = stats::Quantile(resid, 0.05) - kBandSigmas * sigma;
  const double band_hi = stats::Quantile(resid, 0.95) + kBandSigmas * sigma;
  // Does the steady state itself rise over the second half, beyond the band?
  const bool steady_rises = line.slope * static_cast<double>(n - half) > std::max(band_hi, sigma);
  // Points outside the band, above (+1) or below (−1) the line extended backwards.
  std::vector<int> side(half, 0);
  for (size_t i = 0; i < half; ++i) {
    const double e = y[i] - at(i);
    side[i] = e > band_hi ? 1 : (e < band_lo && !steady_rises ? -1 : 0);
  }
  // The steady part begins where a stretch of `span` points starts inside the band and stays
  // mostly (3 in 4) inside; its
  // level is their median. A warm-up point stands apart from that level on the same side.
  const size_t span = std::max<size_t>(5, n / 50);
  size_t steady = half;
  for (size_t c = 0; c < half; ++c) {
    if (side[c] != 0)
      continue;
    size_t inside = 0;
    for (size_t i = c; i < c + span; ++i) inside += (i >= half || side[i] == 0) ? 1 : 0;
    if (4 * inside >= 3 * span) {
      steady = c;
      break;
    }
  }
  if (steady == 0)
    return w;
  const double level = stats::Median(y.subspan(steady, std::min(span, n - steady)));
  size_t count = 0;
  for (size_t i = 0; i < steady; ++i) {
    const double d = y[i] - level;
    const bool warm = (side[i] > 0 && d > band_hi) || (side[i] < 0 && d < band_lo);
    count += warm ? 1 : 0;
    if (warm && 2 * count >= i + 1)
      w.wanted = static_cast<int64_t>(i) + 1;
  }
  const int64_t cap = static_cast<int64_t>(std::floor(max_share * static_cast<double>(n)));
  w.cut = std::min(w.wanted, cap);
  return w;
}

int64_t AutoWarmup(absl::Span<const double> y, double resolution) {
  return FindWarmup(y, resolution).cut;
}

int64_t GrowthOnset(absl::Span<const double> y, int64_t from, size_t max_points) {
  const int64_t n = static_cast<int64_t>(y.size());
  if (from < 0 || n - from < 8)
    return std::max<int64_t>(from, 0);
  const std::vector<double> clipped = stats::ClipOutliers(y.subspan(static_cast<size_t>(from)));
  std::vector<double> x, v;
  stats::BinMeans(clipped, max_points, &x, &v);
  const size_t m = x.size();
  const stats::HingeFit hinge = stats::BestHinge(x, v);
  // A straight line fits to round-off: there is no knee to find.
  double mean = 0, total = 0;
  for (double e : v) mean += e / static_cast<double>(m);
  for (double e : v) total += (e - mean) * (e - mean);
  if (std::isnan(hinge.knee) || hinge.sse > kOnsetGain * hinge.line_sse ||
      hinge.line_sse <= 1e-9 * total)
    return from;
  const double best_k = hinge.knee;
  return from + static_cast<int64_t>(std::llround(best_k));
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
  int64_t warmup = options.warmup >= 0
                       ? options.warmup
                       : FindWarmup(y, options.resolution, options.max_warmup_share).cut;
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
