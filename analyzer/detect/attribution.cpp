// SPDX-License-Identifier: Apache-2.0
// Step-time attribution to growing state.
#include "detect/attribution.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "absl/strings/str_format.h"
#include "detect/stats.h"

namespace cuclimb::analysis {
namespace {

constexpr double kUnrelatedR = 0.3;
constexpr double kHostSideMin = 0.5;
constexpr int kMaxLag = 3;

double RobustChange(absl::Span<const double> v) {
  const size_t n = v.size();
  const size_t edge = std::max<size_t>(std::min<size_t>(3, n), n / 10);
  if (n == 0)
    return 0;
  return stats::Median(v.subspan(n - edge)) - stats::Median(v.subspan(0, edge));
}

double MaxAbs(absl::Span<const double> v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

double ResidualSd(absl::Span<const double> t, absl::Span<const double> v,
                  const stats::OlsResult& fit) {
  double ss = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double r = v[i] - (fit.intercept + fit.slope * t[i]);
    ss += r * r;
  }
  return v.size() > 2 ? std::sqrt(ss / static_cast<double>(v.size() - 2)) : 0;
}

}  // namespace

double HostSideShare(const Decomposition& d) {
  const double wall = d.wall.delta_ms;
  if (wall <= 0)
    return 0;
  const double host = std::max(0.0, d.host.delta_ms) + std::max(0.0, d.api.delta_ms);
  return std::clamp(host / wall, 0.0, 1.0);
}

bool HasPath(const std::string& kind, const Decomposition& d) {
  if (kind == "nvtx_regions" || kind == "host_function")
    return true;
  auto any = [&](const std::function<bool(const std::string&)>& pred) {
    for (const auto* parts : {&d.by_api, &d.by_sync}) {
      for (const Component& c : *parts) {
        if (pred(c.name))
          return true;
      }
    }
    return false;
  };
  auto has = [](const std::string& s, const char* what) {
    return s.find(what) != std::string::npos;
  };
  if (kind == "events")
    return any([&](const std::string& n) { return has(n, "Event"); });
  if (kind == "streams") {
    return any([&](const std::string& n) { return has(n, "Stream") || has(n, "Launch"); });
  }
  if (kind == "modules") {
    return any([&](const std::string& n) {
      return has(n, "Launch") || has(n, "Module") || has(n, "Library");
    });
  }
  if (kind == "graphs")
    return any([&](const std::string& n) { return has(n, "Graph"); });
  // Memory kinds and pools: allocation, free, mapping or pool calls.
  return any([&](const std::string& n) {
    return has(n, "Alloc") || has(n, "Free") || has(n, "Malloc") || has(n, "MemMap") ||
           has(n, "MemCreate") || has(n, "MemPool") || has(n, "HostRegister");
  });
}

Explanation Explain(const RangeReport& range, const Accumulator& c, const Thresholds& th) {
  Explanation e;
  e.range = range.name;
  e.verdict = "unrelated";
  const size_t n = std::min(range.total_ms.size(), c.values.size());
  const size_t from = static_cast<size_t>(std::max<int64_t>(range.trend.warmup, c.trend.warmup));
  if (from + static_cast<size_t>(std::max<int64_t>(th.min_iterations, 6)) > n) {
    e.reason = "too few iterations after both warm-ups";
    return e;
  }
  const absl::Span<const double> y = absl::MakeConstSpan(range.total_ms).subspan(from, n - from);
  const absl::Span<const double> x = absl::MakeConstSpan(c.values).subspan(from, n - from);
  std::vector<double> t(x.size());
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(from + i);
  const stats::OlsResult fit = stats::Ols(x, y);
  e.r = fit.r;
  e.r_index = stats::Pearson(x, t);
  const stats::PartialResult partial = stats::PartialCorrelation(y, x, t);
  e.partial_r = partial.r;
  e.partial_p = partial.p;
  // Lag: the shift k (range trailing candidate) with the highest correlation.
  double best = fit.r;
  for (int k = 1; k <= kMaxLag && static_cast<size_t>(k) + 6 < x.size(); ++k) {
    const double r = stats::Pearson(x.subspan(0, x.size() - k), y.subspan(k));
    if (r > best + 1e-9) {
      best = r;
      e.lag = k;
    }
  }
  const double dr = RobustChange(y), dc = RobustChange(x);
  e.share = dr > 0 ? std::clamp(fit.slope * dc / dr, 0.0, 1.0) : 0.0;
  // How visible C's own shape would be in R if C drove R.
  const stats::OlsResult ct = stats::Ols(t, x), rt = stats::Ols(t, y);
  // Round-off floors: a straight line's residuals are ~1e-16 of its scale, not a shape.
  double sd_c = ResidualSd(t, x, ct), sd_r = ResidualSd(t, y, rt);
  if (sd_c < 1e-9 * MaxAbs(x))
    sd_c = 0;
  if (sd_r < 1e-12 * MaxAbs(y))
    sd_r = 0;
  const double bt = ct.slope > 0 ? rt.slope / ct.slope : 0;
  e.separation = sd_r > 0 ? std::fabs(bt) * sd_c / sd_r : (sd_c > 0 && bt != 0 ? 1e9 : 0);
  if (e.r < kUnrelatedR) {
    e.reason = absl::StrFormat("the range does not move with it (r = %.2f)", e.r);
    return e;
  }
  e.verdict = "correlated_only";
  if (e.share < th.min_share) {
    e.reason = absl::StrFormat("accounts for only %.0f%% of the range's growth", 100 * e.share);
    return e;
  }
  if (partial.defined && partial.r > 0 && partial.p < th.alpha) {
    e.verdict = "explains";
    e.reason = absl::StrFormat(
        "the range follows its ups and downs beyond the common trend (partial r = %.2f given the "
        "iteration, p = %.2g)",
        partial.r, partial.p);
    return e;
  }
  if (e.separation >= th.min_separation) {
    e.reason = absl::StrFormat(
        "both rise, but the range does not follow its steps (partial r = %.2f, p = %.2g), which "
        "would stand out %.1fx above the range's noise if it drove the range",
        partial.r, partial.p, e.separation);
    return e;
  }
  const double host = HostSideShare(range.decomposition);
  if (!HasPath(c.kind, range.decomposition)) {
    e.reason = absl::StrFormat(
        "both rise in straight lines, but the range makes no calls through which %s could cost "
        "it time",
        c.kind);
    return e;
  }
  if (host >= kHostSideMin) {
    e.verdict = "explains";
    e.reason = absl::StrFormat(
        "grows in step with the range (a straight line: statistics alone cannot separate it from "
        "time), and %.0f%% of the range's growth is host-side (host time and CUDA calls), where "
        "per-iteration state costs time",
        100 * host);
  } else {
    e.reason = absl::StrFormat(
        "both rise in straight lines, but only %.0f%% of the range's growth is host-side; the "
        "rest is synchronization wait or GPU time, which this state does not cause",
        100 * host);
  }
  return e;
}

}  // namespace cuclimb::analysis
