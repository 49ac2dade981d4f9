// SPDX-License-Identifier: Apache-2.0
// Robust statistics for per-iteration series.
#include "detect/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

double Quantile(absl::Span<const double> v, double q) {
  if (v.empty())
    return 0;
  std::vector<double> sorted(v.begin(), v.end());
  std::sort(sorted.begin(), sorted.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

std::vector<double> ClipOutliers(absl::Span<const double> y) {
  constexpr size_t kWindow = 9;
  constexpr double kLocalSigmas = 5;
  std::vector<double> out(y.begin(), y.end());
  const size_t n = y.size();
  if (n < kWindow)
    return out;
  std::vector<double> local(n), spread(n), resid(n), window;
  for (size_t i = 0; i < n; ++i) {
    // Centred windows, shifted inwards at the ends.
    const size_t lo = std::min(i >= kWindow / 2 ? i - kWindow / 2 : 0, n - kWindow);
    window.assign(y.begin() + static_cast<std::ptrdiff_t>(lo),
                  y.begin() + static_cast<std::ptrdiff_t>(lo + kWindow));
    local[i] = SelectMedian(window);
    for (double& v : window) v = std::fabs(v - local[i]);
    spread[i] = 1.4826 * SelectMedian(window);
    resid[i] = y[i] - local[i];
  }
  const double q10 = Quantile(resid, 0.10), q90 = Quantile(resid, 0.90);
  const double lo = q10 - 3 * (q90 - q10), hi = q90 + 3 * (q90 - q10);
  for (size_t i = 0; i < n; ++i) {
    // An outlier lies beyond both the global bounds and its window's own spread (a point beside
    // a step, or the end of a line, differs from its window's median without being one). It is
    // replaced by that median; every other point is kept as it is.
    const double local_bound = kLocalSigmas * spread[i];
    if (resid[i] > std::max(hi, local_bound) || resid[i] < std::min(lo, -local_bound))
      out[i] = local[i];
  }
  return out;
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

HingeFit BestHinge(absl::Span<const double> x, absl::Span<const double> y, double max_knee_share) {
  HingeFit best;
  const size_t m = std::min(x.size(), y.size());
  best.knee = std::nan("");
  if (m < 3)
    return best;
  // Least squares of y on (1, max(0, x − k)).
  auto fit = [&](double k, double* slope) {
    double s1 = 0, sh = 0, shh = 0, sv = 0, shv = 0;
    for (size_t i = 0; i < m; ++i) {
      const double h = std::max(0.0, x[i] - k);
      s1 += 1;
      sh += h;
      shh += h * h;
      sv += y[i];
      shv += h * y[i];
    }
    const double det = s1 * shh - sh * sh;
    if (det <= 1e-12 * s1 * shh || det <= 0) {
      *slope = 0;
      return std::numeric_limits<double>::infinity();
    }
    const double b = (s1 * shv - sh * sv) / det;
    const double a = (sv - b * sh) / s1;
    double sse = 0;
    for (size_t i = 0; i < m; ++i) {
      const double r = y[i] - a - b * std::max(0.0, x[i] - k);
      sse += r * r;
    }
    *slope = b;
    return sse;
  };
  best.line_sse = fit(x[0] - 1, &best.slope);
  best.sse = best.line_sse;
  for (size_t j = 1; j < m && static_cast<double>(j) < max_knee_share * static_cast<double>(m);
       ++j) {
    double slope = 0;
    const double sse = fit(x[j], &slope);
    if (slope > 0 && sse < best.sse) {
      best.sse = sse;
      best.slope = slope;
      best.knee = x[j];
    }
  }
  return best;
}

StepFit BestStep(absl::Span<const double> y) {
  StepFit best;
  const size_t n = y.size();
  if (n < 2)
    return best;
  double total = 0, total_sq = 0;
  for (double v : y) {
    total += v;
    total_sq += v * v;
  }
  best.sse = std::numeric_limits<double>::infinity();
  double left = 0, left_sq = 0;
  for (size_t at = 1; at < n; ++at) {
    left += y[at - 1];
    left_sq += y[at - 1] * y[at - 1];
    const double nl = static_cast<double>(at), nr = static_cast<double>(n - at);
    const double right = total - left, right_sq = total_sq - left_sq;
    const double sse =
        std::max(0.0, left_sq - left * left / nl) + std::max(0.0, right_sq - right * right / nr);
    if (sse < best.sse) {
      best.sse = sse;
      best.at = at;
    }
  }
  return best;
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
