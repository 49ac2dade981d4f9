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

// Splits y (at x = 0..n−1) into `bins` consecutive groups of near-equal size and returns the
// mean x and mean y of each. With n ≤ bins the points are returned unchanged.
void BinMeans(absl::Span<const double> y, size_t bins, std::vector<double>* x_out,
              std::vector<double>* y_out);

}  // namespace cuclimb::analysis::stats
