// SPDX-License-Identifier: Apache-2.0
// Step-time attribution to growing state.
#include "detect/attribution.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "detect/accumulator_kind.h"
#include "detect/stats.h"

namespace cuclimb::analysis {
namespace {

constexpr double kUnrelatedR = 0.3;
constexpr double kHostSideMin = 0.5;
constexpr double kCallsMin = 0.25;        // share of the growth inside the family's calls
constexpr double kOnsetTolerance = 0.05;  // of the window, at least kOnsetMinTolerance
constexpr int64_t kOnsetMinTolerance = 3;
constexpr double kMidRun = 0.1;  // an onset beyond this share of the window is informative
constexpr int kMaxLag = 3;
constexpr size_t kRBin = 8;              // iterations per bin for r
constexpr double kEvenRatio = 0.5;       // host and call growth within 2x of each other
constexpr double kEvenCallsShare = 0.1;  // of the range's time, inside CUDA calls
// Above this many iterations the pair is binned into means (cost, not robustness).
constexpr size_t kMaxPoints = 4096;

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

// Growth of the range inside calls of the candidate's API family (0 for kinds without one).
double FamilyCallsDelta(const AccumulatorKindInfo& info, const RangeView& r) {
  if (info.apis.front().empty())
    return 0;
  double delta = 0;
  for (const RangeView::Part& c : r.calls) {
    if (InApiFamily(info, c.name))
      delta += std::max(0.0, c.delta_ms);
  }
  return delta;
}

struct Onsets {
  int64_t candidate = 0, range = 0, tolerance = 0;
  bool informative = false, aligned = false;
};

Onsets OnsetsOf(const RangeView& range, const CandidateView& c, int64_t from, int64_t n) {
  Onsets o;
  const int64_t window = std::max<int64_t>(n - from, 1);
  o.candidate = std::max(c.growth_start, from);
  o.range = std::max(range.climb_start, from);
  o.tolerance = std::max<int64_t>(kOnsetMinTolerance, std::llround(kOnsetTolerance * window));
  const int64_t mid = std::max<int64_t>(5, std::llround(kMidRun * window));
  o.informative = o.candidate - from > mid || o.range - from > mid;
  o.aligned = std::llabs(o.candidate - o.range) <= o.tolerance;
  return o;
}

std::string Where(const Explanation& e, const RangeView& r, const AccumulatorKindInfo& info) {
  if (e.mechanism == "calls") {
    return absl::StrFormat("the range's extra time sits in %s calls (%.0f%% of its growth)",
                           info.name,
                           100 * FamilyCallsDelta(info, r) / std::max(r.wall_delta, 1e-12));
  }
  return absl::StrFormat(
      "the range's extra time sits in host code next to the calls that make it (%.0f%% of the "
      "growth is host-side)",
      100 * HostSideShare(r));
}

}  // namespace

double HostSideShare(const RangeView& r) {
  if (r.wall_delta <= 0)
    return 0;
  const double host = std::max(0.0, r.host_delta) + std::max(0.0, r.api_delta);
  return std::clamp(host / r.wall_delta, 0.0, 1.0);
}

bool HasPath(AccumulatorKind kind, const RangeView& r) {
  const AccumulatorKindInfo& info = Info(kind);
  if (info.apis.front().empty())
    return true;
  for (const RangeView::Part& c : r.calls) {
    if (InApiFamily(info, c.name))
      return true;
  }
  return false;
}

bool ScalesEvenly(const RangeView& r) {
  if (!r.parts_tested || r.host_change_pct <= 0 || r.api_first < kEvenCallsShare * r.wall_first)
    return false;
  return r.api_change_pct >= kEvenRatio * r.host_change_pct &&
         r.host_change_pct >= kEvenRatio * r.api_change_pct;
}

Explanation Measure(const RangeView& range, const CandidateView& c, const Thresholds& th) {
  Explanation e;
  e.range = range.name;
  e.verdict = kUnrelated;
  const size_t n = std::min(range.total_ms.size(), c.values.size());
  const size_t from = static_cast<size_t>(std::max<int64_t>(range.warmup, c.warmup));
  if (from + static_cast<size_t>(std::max<int64_t>(th.min_iterations, 6)) > n) {
    e.reason = "too few iterations after both warm-ups";
    return e;
  }
  // Clipped, so that a few slow iterations (a GC pause, a checkpoint) cannot carry the verdict.
  std::vector<double> y = stats::ClipOutliers(range.total_ms.subspan(from, n - from));
  std::vector<double> x = stats::ClipOutliers(c.values.subspan(from, n - from));
  std::vector<double> t(x.size());
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(from + i);
  if (x.size() > kMaxPoints) {
    std::vector<double> bx, by, bt, unused;
    stats::BinMeans(x, kMaxPoints, &unused, &bx);
    stats::BinMeans(y, kMaxPoints, &unused, &by);
    stats::BinMeans(t, kMaxPoints, &unused, &bt);
    x = std::move(bx);
    y = std::move(by);
    t = std::move(bt);
  }
  const stats::OlsResult fit = stats::Ols(x, y);
  // Whether R moves with C at all is judged on means of bins of at least kRBin iterations: a
  // periodic pattern (an optimizer step every 4th iteration) averages out instead of drowning
  // the common movement.
  {
    const size_t bins = std::max<size_t>(1, x.size() / kRBin);
    std::vector<double> bx, by, unused;
    stats::BinMeans(x, bins, &unused, &bx);
    stats::BinMeans(y, bins, &unused, &by);
    e.r = bx.size() >= 6 ? stats::Pearson(bx, by) : fit.r;
  }
  e.r_index = stats::Pearson(x, t);
  const stats::PartialResult partial = stats::PartialCorrelation(y, x, t);
  e.partial_r = partial.r;
  e.partial_p = partial.p;
  // Lag: the shift k (range trailing candidate) with the highest correlation.
  double best = fit.r;
  for (int k = 1; k <= kMaxLag && static_cast<size_t>(k) + 6 < x.size(); ++k) {
    const double r = stats::Pearson(absl::MakeConstSpan(x).subspan(0, x.size() - k),
                                    absl::MakeConstSpan(y).subspan(k));
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
  // Evidence beyond the statistics.
  const AccumulatorKindInfo& info = Info(c.kind);
  if (range.wall_delta > 0 && FamilyCallsDelta(info, range) >= kCallsMin * range.wall_delta)
    e.mechanism = "calls";
  else if (HostSideShare(range) >= kHostSideMin && HasPath(c.kind, range) && !ScalesEvenly(range))
    e.mechanism = "host";
  const Onsets on = OnsetsOf(range, c, static_cast<int64_t>(from), static_cast<int64_t>(n));
  e.onset_aligned = on.informative && on.aligned;

  if (e.r < kUnrelatedR) {
    e.reason = absl::StrFormat("the range does not move with it (r = %.2f)", e.r);
    return e;
  }
  e.verdict = kCorrelatedOnly;
  if (e.share < th.min_share) {
    e.reason = absl::StrFormat("accounts for only %.0f%% of the range's growth", 100 * e.share);
    return e;
  }
  if (partial.defined && partial.r > 0 && partial.p < th.alpha) {
    e.verdict = kExplains;
    e.grounds.push_back("shape");
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
  if (on.informative && !on.aligned) {
    e.reason = absl::StrFormat(
        "it starts growing at iteration %d but the range climbs from iteration %d: the climb has "
        "another start",
        on.candidate, on.range);
    return e;
  }
  if (e.mechanism.empty()) {
    if (HostSideShare(range) >= kHostSideMin && HasPath(c.kind, range)) {
      e.reason = absl::StrFormat(
          "both rise in straight lines, but the range's host code and its CUDA calls grew by the "
          "same proportion (%+.0f%% and %+.0f%%), as when the machine slows down, not as when "
          "state costs host time next to some calls",
          range.host_change_pct, range.api_change_pct);
    } else if (!HasPath(c.kind, range)) {
      e.reason = absl::StrFormat(
          "both rise in straight lines, but the range makes no calls through which %s could cost "
          "it time",
          info.name);
    } else {
      e.reason = absl::StrFormat(
          "both rise in straight lines, but only %.0f%% of the range's growth is host-side; the "
          "rest is synchronization wait or GPU time, which this state does not cause",
          100 * HostSideShare(range));
    }
    return e;
  }
  e.verdict.clear();  // a straight line with a mechanism: GradeRange decides
  return e;
}

void GradeRange(const RangeView& range, const std::vector<CandidateView>& candidates,
                std::vector<Explanation>* explanations) {
  // Rivals: candidates that rise with the range, could account for its growth and are not
  // ruled out by its shape, its onset or the lack of a way to cost the range time.
  int states = 0, hosts = 0;
  auto rival = [](const Explanation& e) { return e.verdict.empty() || e.verdict == kExplains; };
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Explanation& e = (*explanations)[i];
    if (!rival(e))
      continue;
    const AccumulatorKindInfo& info = Info(candidates[i].kind);
    if (info.is_state)
      ++states;
    else if (info.kind == AccumulatorKind::kHostFunction)
      ++hosts;
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    Explanation& e = (*explanations)[i];
    const CandidateView& c = candidates[i];
    const AccumulatorKindInfo& info = Info(c.kind);
    if (rival(e)) {
      if (info.kind == AccumulatorKind::kHostFunction)
        e.unique = hosts == 1;
      else if (info.is_state)
        e.unique = states == 1;
      else
        e.unique = states == 0;  // pool reserve follows the allocations in it
    }
    // Grounds in a fixed order; the shape verdict keeps the other evidence as support.
    const bool shape = e.verdict == kExplains;
    e.grounds.clear();
    if (shape)
      e.grounds.push_back("shape");
    if (e.onset_aligned)
      e.grounds.push_back("onset");
    if (e.unique)
      e.grounds.push_back("unique");
    if (!e.mechanism.empty())
      e.grounds.push_back("mechanism");
    if (e.dose)
      e.grounds.push_back("dose");
    if (!e.verdict.empty())
      continue;
    const std::string where = Where(e, range, info);
    if (e.onset_aligned || e.dose) {
      e.verdict = kExplains;
      e.reason = absl::StrCat(
          e.onset_aligned
              ? absl::StrFormat("its growth and the range's climb start together (iteration %d)",
                                std::max(c.growth_start, range.climb_start))
              : "ranks where it grows faster climb faster",
          ", and ", where);
    } else if (e.unique || e.mechanism == "calls") {
      e.verdict = kLikelyCause;
      e.reason = absl::StrCat(
          e.unique ? "the only state that grows with the range, and "
                   : "one of several states that grow with the range, but ",
          where, "; both rise in straight lines, so statistics alone cannot separate it from time");
    } else {
      e.verdict = kCorrelatedOnly;
      e.reason = absl::StrFormat(
          "one of %d states that rise in straight lines with the range and nothing tells them "
          "apart: %s, but not in its own calls",
          info.kind == AccumulatorKind::kHostFunction ? hosts : states, where);
    }
  }
}

Explanation Explain(const RangeView& range, const CandidateView& candidate,
                    const Thresholds& thresholds) {
  std::vector<Explanation> e{Measure(range, candidate, thresholds)};
  GradeRange(range, {candidate}, &e);
  return e[0];
}

}  // namespace cuclimb::analysis
