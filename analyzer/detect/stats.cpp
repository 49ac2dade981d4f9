// SPDX-License-Identifier: Apache-2.0
// Robust statistics for per-iteration series.
#include "detect/stats.h"

#include <algorithm>
#include <cmath>

namespace cuclimb::analysis::stats {
namespace {

double SelectMedian(std::vector<double>& v) {
  if (v.empty())
    return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  const double hi = v[mid];
  if (v.size() % 2 == 1)
    return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + mid);
  return 0.5 * (lo + hi);
}

// Scratch buffer for the O(n²) pairwise slopes; reused to avoid an allocation per series.
std::vector<double>& Scratch() {
  thread_local std::vector<double> buffer;
  return buffer;
}

}  // namespace

double Median(absl::Span<const double> v) {
  std::vector<double> copy(v.begin(), v.end());
  return SelectMedian(copy);
}

double Mad(absl::Span<const double> v) {
  const double m = Median(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - m));
  return SelectMedian(dev);
}

Line TheilSen(absl::Span<const double> x, absl::Span<const double> y) {
  Line line;
  const size_t n = std::min(x.size(), y.size());
  if (n == 0)
    return line;
  if (n == 1) {
    line.intercept = y[0];
    return line;
  }
  std::vector<double>& slopes = Scratch();
  slopes.clear();
  slopes.reserve(n * (n - 1) / 2);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      const double dx = x[j] - x[i];
      if (dx != 0)
        slopes.push_back((y[j] - y[i]) / dx);
    }
  }
  line.slope = SelectMedian(slopes);
  slopes.clear();
  for (size_t i = 0; i < n; ++i) slopes.push_back(y[i] - line.slope * x[i]);
  line.intercept = SelectMedian(slopes);
  return line;
}

double NormalTwoSidedP(double z) {
  return std::erfc(std::fabs(z) / std::sqrt(2.0));
}

MannKendallResult MannKendall(absl::Span<const double> y) {
  MannKendallResult r;
  const size_t n = y.size();
  if (n < 3)
    return r;
  int64_t s = 0;
  for (size_t i = 0; i < n; ++i) {
    const double yi = y[i];
    for (size_t j = i + 1; j < n; ++j) s += (y[j] > yi) - (y[j] < yi);
  }
  std::vector<double> sorted(y.begin(), y.end());
  std::sort(sorted.begin(), sorted.end());
  double ties = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && sorted[j] == sorted[i]) ++j;
    const double t = static_cast<double>(j - i);
    if (t > 1)
      ties += t * (t - 1) * (2 * t + 5);
    i = j;
  }
  const double dn = static_cast<double>(n);
  r.s = static_cast<double>(s);
  r.var = (dn * (dn - 1) * (2 * dn + 5) - ties) / 18.0;
  r.tau = r.s / (dn * (dn - 1) / 2);
  if (r.var <= 0)
    return r;
  if (s > 0)
    r.z = (r.s - 1) / std::sqrt(r.var);
  if (s < 0)
    r.z = (r.s + 1) / std::sqrt(r.var);
  r.p = NormalTwoSidedP(r.z);
  return r;
}

OlsResult Ols(absl::Span<const double> x, absl::Span<const double> y) {
  OlsResult r;
  const size_t n = std::min(x.size(), y.size());
  if (n == 0)
    return r;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxx = 0, syy = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) {
    const double dx = x[i] - mx, dy = y[i] - my;
    sxx += dx * dx;
    syy += dy * dy;
    sxy += dx * dy;
  }
  r.slope = sxx > 0 ? sxy / sxx : 0;
  r.intercept = my - r.slope * mx;
  // Relative floors keep round-off on a constant series from looking like a correlation.
  const double eps = 1e-24;
  r.r = (sxx > eps * (mx * mx + 1) * n && syy > eps * (my * my + 1) * n)
            ? sxy / std::sqrt(sxx * syy)
            : 0;
  r.r = std::clamp(r.r, -1.0, 1.0);
  return r;
}

double Pearson(absl::Span<const double> x, absl::Span<const double> y) {
  return Ols(x, y).r;
}

PartialResult PartialCorrelation(absl::Span<const double> x, absl::Span<const double> y,
                                 absl::Span<const double> z) {
  PartialResult out;
  const size_t n = std::min({x.size(), y.size(), z.size()});
  if (n < 6)
    return out;
  const double rxy = Pearson(x, y), rxz = Pearson(x, z), ryz = Pearson(y, z);
  const double den = (1 - rxz * rxz) * (1 - ryz * ryz);
  if (den < 1e-10)
    return out;
  out.r = std::clamp((rxy - rxz * ryz) / std::sqrt(den), -0.999999, 0.999999);
  out.defined = true;
  const double fz = std::atanh(out.r) * std::sqrt(static_cast<double>(n) - 4);
  out.p = NormalTwoSidedP(fz);
  return out;
}

void BinMeans(absl::Span<const double> y, size_t bins, std::vector<double>* x_out,
              std::vector<double>* y_out) {
  x_out->clear();
  y_out->clear();
  const size_t n = y.size();
  if (n <= bins || bins == 0) {
    for (size_t i = 0; i < n; ++i) {
      x_out->push_back(static_cast<double>(i));
      y_out->push_back(y[i]);
    }
    return;
  }
  for (size_t b = 0; b < bins; ++b) {
    const size_t lo = b * n / bins, hi = (b + 1) * n / bins;
    double sx = 0, sy = 0;
    for (size_t i = lo; i < hi; ++i) {
      sx += static_cast<double>(i);
      sy += y[i];
    }
    const double k = static_cast<double>(hi - lo);
    x_out->push_back(sx / k);
    y_out->push_back(sy / k);
  }
}

}  // namespace cuclimb::analysis::stats
