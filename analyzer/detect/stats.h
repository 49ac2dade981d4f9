// SPDX-License-Identifier: Apache-2.0
// Robust statistics for per-iteration series: medians, Theil–Sen, Mann–Kendall, correlations.
//
// All functions are deterministic (no sampling) and allocation-light; x values are iteration
// indexes unless a function takes them explicitly.
#pragma once

#include <cstddef>
#include <vector>

#include "absl/types/span.h"

namespace cuclimb::analysis::stats {

// Median of v (the mean of the two middle values for even sizes); 0 for an empty span.
double Median(absl::Span<const double> v);
// Median absolute deviation from the median (not scaled).
double Mad(absl::Span<const double> v);
// The q-quantile (0 ≤ q ≤ 1) of v, interpolating linearly between order statistics; 0 when empty.
double Quantile(absl::Span<const double> v, double q);

struct Line {
  double slope = 0;
  double intercept = 0;  // value at x = 0
};

// Theil–Sen: the median of the pairwise slopes (y_j − y_i) / (x_j − x_i), i < j, and the
// median of y − slope·x as intercept. O(n²) pairs: callers bin long series first (BinMeans).
Line TheilSen(absl::Span<const double> x, absl::Span<const double> y);

struct MannKendallResult {
  double s = 0;    // Σ sign(y_j − y_i), i < j
  double var = 0;  // variance of S under H0, corrected for ties
  double z = 0;    // (S ∓ 1) / √var, continuity-corrected
  double p = 1;    // two-sided, normal approximation
  double tau = 0;  // S / (n (n − 1) / 2)
};

// Mann–Kendall trend test with the tie correction
//   var(S) = [n(n−1)(2n+5) − Σ_t t(t−1)(2t+5)] / 18
// over groups of t equal values, and the normal approximation (valid from n ≈ 10; used from 4).
MannKendallResult MannKendall(absl::Span<const double> y);

// Two-sided p-value of a standard normal deviate.
double NormalTwoSidedP(double z);

// Ordinary least squares y = a + b x; r is Pearson's correlation (0 when either is constant).
struct OlsResult {
  double slope = 0, intercept = 0, r = 0;
};
OlsResult Ols(absl::Span<const double> x, absl::Span<const double> y);
double Pearson(absl::Span<const double> x, absl::Span<const double> y);

// Partial correlation of x and y given z, and its two-sided p-value (Fisher z with n − 4
// degrees of freedom). Returns {0, 1} when x or y is (almost) collinear with z.
struct PartialResult {
  double r = 0, p = 1;
  bool defined = false;
};
PartialResult PartialCorrelation(absl::Span<const double> x, absl::Span<const double> y,
                                 absl::Span<const double> z);

// y with its outliers replaced: a point whose residual from the median of its 9-point window
// (centred, shifted inwards at the ends) lies beyond both [Q10 − 3 (Q90 − Q10), Q90 + 3 (Q90 −
// Q10)] of all residuals and 5 local standard deviations (1.4826 × the window's MAD) becomes
// that median. A GC pause, a checkpoint or an evaluation every N iterations is replaced;
// periodic patterns that fill a tenth or more of the points (gradient accumulation) widen the
// quantiles and stay; steps and bends of the series itself stay.
std::vector<double> ClipOutliers(absl::Span<const double> y);

// The continuous hinge y = a + b·max(0, x − knee) that fits best by least squares, over knees at
// x[1..] up to `max_knee_share` of the points; a rising line after the knee (b > 0) only.
// `line_sse` is the straight line's squared error (the hinge with its knee before x[0]); `knee`
// is NaN when no hinge with b > 0 beats the line.
struct HingeFit {
  double knee = 0, slope = 0, sse = 0, line_sse = 0;
};
HingeFit BestHinge(absl::Span<const double> x, absl::Span<const double> y,
                   double max_knee_share = 0.9);

// The best single step of y: two levels (the means of y[0, at) and y[at, n)) with the least
// squared error, over 1 ≤ at < n.
struct StepFit {
  size_t at = 0;
  double sse = 0;
};
StepFit BestStep(absl::Span<const double> y);

// Splits y (at x = 0..n−1) into `bins` consecutive groups of near-equal size and returns the
// mean x and mean y of each. With n ≤ bins the points are returned unchanged.
void BinMeans(absl::Span<const double> y, size_t bins, std::vector<double>* x_out,
              std::vector<double>* y_out);

}  // namespace cuclimb::analysis::stats
