// SPDX-License-Identifier: Apache-2.0
// The trend of one per-iteration series: automatic warm-up cut, robust first/last levels,
// Theil–Sen slope and Mann–Kendall test (docs/report-schema.md, "Statistics").
#pragma once

#include <cstdint>

#include "absl/types/span.h"
#include "report/report.h"

namespace cuclimb::analysis {

struct TrendOptions {
  double alpha = 0.01;
  int64_t min_iterations = 8;
  int64_t warmup = -1;  // −1: automatic (AutoWarmup); otherwise a fixed cut
  // Smallest meaningful difference in the series' unit: 0.5 for counts, 0 for times. It floors
  // the noise scale of the warm-up cut so that a flat count series has no "outliers".
  double resolution = 0;
  size_t max_points = 1000;  // longer series are binned into this many means for the tests
};

// The automatic warm-up cut. A Theil–Sen line is fitted to the second half of the series (taken
// as steady state) and extended backwards; points of the first half farther than 4σ from it
// (σ = 1.4826 × MAD of the second half's residuals, floored by `resolution` and by 1e-6 of the
// series' scale) are outliers. The warm-up is the longest prefix in which at least half of the
// points are outliers, ending at its last outlier. It never exceeds half of the series. A JIT-slow
// start, an allocation ramp that levels off, or growth that only starts later are cut; a line
// that runs from the first iteration is not.
int64_t AutoWarmup(absl::Span<const double> y, double resolution);

// Computes the Trend of y (index = iteration). Tests only when at least min_iterations points
// remain after the cut.
Trend ComputeTrend(absl::Span<const double> y, const TrendOptions& options);

// Growth that has stopped: a rising trend whose last third (fitted on 32 bin means) has a
// Theil–Sen slope under a quarter of the whole tested window's slope.
bool GrowthStopped(const Trend& trend);

}  // namespace cuclimb::analysis
