// SPDX-License-Identifier: Apache-2.0
// The trend of one per-iteration series: automatic warm-up cut, robust first/last levels,
// Theil–Sen slope and Mann–Kendall test (docs/report-schema.md, "Statistics").
#pragma once

#include <cstdint>

#include "absl/types/span.h"
#include "series/series.h"

namespace cuclimb::analysis {

// A trend test over a Series after the warm-up cut (detect/trend.h says how each is computed).
struct Trend {
  bool tested = false;             // false when fewer than min_iterations remain after warm-up
  int64_t warmup = 0;              // iterations [0, warmup) are excluded from the test
  int64_t n = 0;                   // points tested (after the cut; binned when very long)
  double first = 0;                // robust level: median of the first 10 % (≥ 3) tested points
  double last = 0;                 // median of the last 10 % (≥ 3)
  double change_pct = 0;           // 100 (last − first) / |first|; 0 when first is 0
  double slope_per_iter = 0;       // Theil–Sen slope, in the series' unit per iteration
  double intercept = 0;            // Theil–Sen intercept at iteration `warmup`
  double tail_slope_per_iter = 0;  // Theil–Sen slope over the last third (is growth still on?)
  double mk_z = 0;                 // Mann–Kendall Z (tie-corrected, continuity-corrected)
  double p_value = 1;              // two-sided Mann–Kendall p-value
  double tau = 0;                  // Kendall's tau against the iteration index
  bool rising = false;             // p < alpha and slope > 0
  bool falling = false;            // p < alpha and slope < 0
};

struct TrendOptions {
  double alpha = 0.01;
  int64_t min_iterations = 8;
  int64_t warmup = -1;  // −1: automatic (FindWarmup); otherwise a fixed cut
  // Smallest meaningful difference in the series' unit: 0.5 for counts, 0 for times. It floors
  // the noise scale of the warm-up cut so that a flat count series has no "outliers".
  double resolution = 0;
  size_t max_points = 1000;        // longer series are binned into this many means for the tests
  double max_warmup_share = 0.25;  // the automatic cut never exceeds this share of the series
};

// The automatic warm-up cut: the iterations at the start that stand apart from the steady state.
//
// A Theil–Sen line is fitted to the second half of the series (taken as steady state). Its
// residuals give a band: from their 5th percentile − 3σ to their 95th percentile + 3σ, σ =
// 1.4826 × their MAD floored by `resolution` and by 1e-6 of the series' scale. The percentiles
// make the band hold periodic spikes that are part of the steady state (an optimizer step every
// 4th iteration, an evaluation every 50th). A point of the first half is a warm-up point when it
// lies outside the band around the line extended backwards and
//  - above it, also above the level where the steady part begins (the median of the few points
//    after the cut) by more than the band: a slow start (JIT, cold caches). A flat stretch
//    before growth starts lies on that level and is not cut: it is growth that starts late;
//  - below it, only when the steady state does not itself rise (a ramp that levels off, as an
//    allocator filling its pools). A series that rises from zero and keeps rising, faster or
//    slower, is growth, not warm-up.
// The cut is the longest prefix in which at least half of the points are warm-up points, ending
// at its last one; `wanted` is that, `cut` the same capped at max_share of the series.
struct WarmupCut {
  int64_t cut = 0;
  int64_t wanted = 0;
};
WarmupCut FindWarmup(absl::Span<const double> y, double resolution, double max_share = 0.25);
// FindWarmup(y, resolution).cut.
int64_t AutoWarmup(absl::Span<const double> y, double resolution);

// Where growth starts in y[from, n): the knee of the continuous hinge (flat, then a straight
// line) that fits the series best by least squares, after clipping outliers (residuals from the
// series' own Theil–Sen line beyond 3 interquartile ranges of the quartiles) and binning into at
// most max_points means. `from` when the hinge does not fit at least 30 % better (in squared
// error) than a straight line over the whole window, or when the line after the knee falls.
int64_t GrowthOnset(absl::Span<const double> y, int64_t from, size_t max_points = 256);

// Computes the Trend of y (index = iteration). Tests only when at least min_iterations points
// remain after the cut.
Trend ComputeTrend(absl::Span<const double> y, const TrendOptions& options);

// Growth that has stopped: a rising trend whose last third (fitted on 32 bin means) has a
// Theil–Sen slope under a quarter of the whole tested window's slope.
bool GrowthStopped(const Trend& trend);

}  // namespace cuclimb::analysis
