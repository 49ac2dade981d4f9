// SPDX-License-Identifier: Apache-2.0
// Causes of climbing ranges, and the rank's verdict.
#include "analysis/causes.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/detection.h"
#include "analysis/machine.h"
#include "detect/stats.h"
#include "detect/trend.h"

namespace cuclimb::analysis::internal {
namespace {

constexpr size_t kSteadyBins = 16;
constexpr double kStepFit = 0.5;       // a step that leaves half of a hinge's squared error
constexpr double kCarriedShare = 0.5;  // of a range's growth, carried by a range inside it
constexpr double kGpuShare = 0.5;      // of the growth waiting on the GPU, for a "gpu" cause

// The range whose time is the iteration's: the boundary range, or the pseudo range.
const RangeReport* IterationRange(const RankReport& r) {
  for (const RangeReport& x : r.ranges) {
    if (x.name == "(iteration)")
      return &x;
  }
  const std::string& name = r.iterations.name;
  for (const RangeReport& x : r.ranges) {
    const bool in_domain = x.name.size() > name.size() + 2 &&
                           x.name.compare(x.name.size() - name.size(), name.size(), name) == 0 &&
                           x.name.compare(x.name.size() - name.size() - 2, 2, "::") == 0;
    if (x.name == name || in_domain)
      return &x;
  }
  return nullptr;
}

void ChooseWarmup(const Thresholds& th, const RangeReport* iteration, RankReport* report) {
  WarmupChoice& w = report->iterations.warmup;
  w.automatic = th.warmup < 0;
  w.max_share = th.max_warmup_share;
  if (iteration == nullptr)
    return;
  w.series = iteration->name;
  if (!w.automatic) {
    w.iterations = w.wanted = iteration->trend.warmup;
    w.why = absl::StrFormat("--warmup %d", th.warmup);
    return;
  }
  const WarmupCut cut = FindWarmup(iteration->total_ms, 0, th.max_warmup_share);
  w.iterations = cut.cut;
  w.wanted = cut.wanted;
  w.capped = cut.wanted > cut.cut;
  w.why =
      cut.wanted == 0
          ? absl::StrFormat("no iteration at the start of %s stands apart from the steady state",
                            iteration->name)
          : absl::StrFormat(
                "the first %d iterations of %s stand apart from the steady state "
                "that follows",
                cut.wanted, iteration->name);
  if (w.capped) {
    report->notes.push_back(absl::StrFormat(
        "the warm-up looks %d iterations long (%.0f%% of the run), more than the %.0f%% the "
        "automatic cut allows: %d were cut; set --warmup if the program really settles that late",
        cut.wanted,
        100.0 * static_cast<double>(cut.wanted) / static_cast<double>(iteration->total_ms.size()),
        100 * th.max_warmup_share, cut.cut));
  }
}

// A sustained rise, not a step: over bin medians of the clipped tested window, the best single
// step must not fit much better (kStepFit of the squared error) than the best hinge (a level,
// then a line: growth from the start or from a later onset).
bool Steady(const RangeReport& r) {
  const absl::Span<const double> all = r.total_ms;
  const size_t from = static_cast<size_t>(std::clamp<int64_t>(r.trend.warmup, 0, all.size()));
  const std::vector<double> w = stats::ClipOutliers(all.subspan(from));
  if (w.size() < 2 * kSteadyBins)
    return r.climbing;
  std::vector<double> x, bins;
  for (size_t b = 0; b < kSteadyBins; ++b) {
    const size_t lo = b * w.size() / kSteadyBins, hi = (b + 1) * w.size() / kSteadyBins;
    x.push_back(static_cast<double>(b));
    bins.push_back(stats::Median(absl::MakeConstSpan(w).subspan(lo, hi - lo)));
  }
  if (bins.back() <= bins.front())
    return false;
  const stats::HingeFit hinge = stats::BestHinge(x, bins, 1.0);
  const stats::StepFit step = stats::BestStep(bins);
  return !(step.sse < kStepFit * hinge.sse);
}

// The accumulator with the strongest verdict for the range: explains before likely_cause, then
// the larger share, then the accumulator order.
const Explanation* BestExplanation(const RangeReport& range, const std::vector<Accumulator>& accs,
                                   const Accumulator** which) {
  const Explanation* best = nullptr;
  for (const Accumulator& a : accs) {
    for (const Explanation& e : a.explanations) {
      if (e.range != range.name || (e.verdict != kExplains && e.verdict != kLikelyCause))
        continue;
      const bool better = best == nullptr ||
                          (e.verdict == kExplains && best->verdict != kExplains) ||
                          (e.verdict == best->verdict && e.share > best->share + 0.05);
      if (better) {
        best = &e;
        *which = &a;
      }
    }
  }
  return best;
}

// Launches or calls per iteration that rise: the program does more each iteration.
bool MoreWork(const RankReport& report, const Thresholds& th, std::string* what) {
  for (const StateSeries& s : report.state) {
    if (s.metric == "launches" && s.dimension == "total" && s.trend.rising &&
        s.trend.change_pct >= th.min_climb_pct) {
      *what =
          absl::StrFormat("the program launches %.0f%% more kernels per iteration (%.4g → %.4g)",
                          s.trend.change_pct, s.trend.first, s.trend.last);
      return true;
    }
  }
  return false;
}

const KernelRow* SlowingKernel(const RankReport& report, const RangeReport& r) {
  const Component* top = nullptr;
  for (const Component& k : r.decomposition.by_kernel) {
    if (k.delta_ms > 0 && (top == nullptr || k.delta_ms > top->delta_ms))
      top = &k;
  }
  if (top == nullptr)
    return nullptr;
  for (const KernelRow& k : report.kernels) {
    if (k.name == top->name && k.slowing)
      return &k;
  }
  return nullptr;
}

Cause ComponentCause(const RankReport& report, const RangeReport& r, const Thresholds& th) {
  const Decomposition& d = r.decomposition;
  Cause c;
  const double wall = std::max(d.wall.delta_ms, 1e-12);
  std::string work;
  if (MoreWork(report, th, &work)) {
    c.kind = kCauseWork;
    c.summary = absl::StrFormat("%s grows by %.3g ms over the run because %s", r.name,
                                d.wall.delta_ms, work);
    return c;
  }
  if (const KernelRow* k = SlowingKernel(report, r);
      k != nullptr && (d.sync.delta_ms >= kGpuShare * wall || d.gpu.delta_ms >= kGpuShare * wall)) {
    c.kind = kCauseGpu;
    c.summary = absl::StrFormat(
        "%s waits longer for the GPU (+%.3g ms over the run): %s takes %+.0f%% GPU time per "
        "launch with the same launches per iteration",
        r.name, d.wall.delta_ms, k->name, k->duration_trend.change_pct);
    return c;
  }
  struct Part {
    double delta;
    const char* kind;
  };
  const Part parts[] = {
      {d.host.delta_ms, kCauseHost}, {d.api.delta_ms, kCauseApi}, {d.sync.delta_ms, kCauseSync}};
  const Part* top = &parts[0];
  for (const Part& p : parts) {
    if (p.delta > top->delta)
      top = &p;
  }
  c.kind = top->delta > 0 ? top->kind : kCauseUnknown;
  if (c.kind == kCauseHost) {
    c.summary = absl::StrFormat(
        "%s grows by %.3g ms over the run, %.0f%% of it in host code between CUDA calls, and no "
        "growing state explains it",
        r.name, d.wall.delta_ms, 100 * d.host.delta_ms / wall);
  } else if (c.kind == kCauseApi) {
    const Component* api = nullptr;
    for (const Component& x : d.by_api) {
      if (api == nullptr || x.delta_ms > api->delta_ms)
        api = &x;
    }
    c.summary = absl::StrFormat(
        "%s grows by %.3g ms over the run, %.0f%% of it inside CUDA calls (most in %s), and no "
        "growing state explains it",
        r.name, d.wall.delta_ms, 100 * d.api.delta_ms / wall, api != nullptr ? api->name : "?");
  } else if (c.kind == kCauseSync) {
    c.summary = absl::StrFormat(
        "%s waits longer in synchronization (+%.3g ms over the run); kernel GPU times do not say "
        "why (record with CUCLIMB_KERNELS=all)",
        r.name, d.sync.delta_ms);
  } else {
    c.summary = absl::StrFormat("%s grows, and no part of its time carries the growth", r.name);
  }
  return c;
}

// A climbing range whose growth is mostly another climbing range's on the same thread (a step
// inside the iteration) has that range's accumulator cause.
const RangeReport* CarriedBy(const RankReport& report, const RangeReport& r) {
  const RangeReport* best = nullptr;
  for (const RangeReport& inner : report.ranges) {
    if (&inner == &r || !inner.climbing || inner.cause.kind != kCauseAccumulator ||
        inner.tid != r.tid || inner.trend.first >= r.trend.first)
      continue;
    if (inner.decomposition.wall.delta_ms < kCarriedShare * r.decomposition.wall.delta_ms)
      continue;
    if (best == nullptr || inner.decomposition.wall.delta_ms > best->decomposition.wall.delta_ms)
      best = &inner;
  }
  return best;
}

int Strength(const Cause& c) {
  if (c.kind == kCauseAccumulator)
    return c.verdict == kExplains ? 3 : 2;
  return c.kind.empty() || c.kind == kCauseMachine ? 0 : 1;
}

}  // namespace

void AssignCauses(Context& ctx, RankReport* report) {
  const Thresholds& th = ctx.th;
  const RangeReport* iteration = IterationRange(*report);
  ChooseWarmup(th, iteration, report);
  report->machine = DetectMachineDrift(*report, iteration, th);
  const double iteration_ms = iteration != nullptr ? std::max(iteration->trend.first, 1e-9) : 0;
  for (RangeReport& r : report->ranges) {
    const double growth =
        r.trend.tested ? r.trend.slope_per_iter * static_cast<double>(r.trend.n) : 0;
    r.iteration_share_pct = iteration_ms > 0 ? 100 * growth / iteration_ms : r.trend.change_pct;
    r.material = r.iteration_share_pct >= th.min_iteration_share_pct;
    r.steady = r.climbing && Steady(r);
    if (!r.climbing)
      continue;
    const Accumulator* acc = nullptr;
    if (const Explanation* e = BestExplanation(r, report->accumulators, &acc); e != nullptr) {
      r.cause.kind = kCauseAccumulator;
      r.cause.accumulator = acc->id;
      r.cause.verdict = e->verdict;
      r.cause.summary = absl::StrFormat(
          "%s %s %s's climb: %s", acc->id,
          e->verdict == kExplains ? "explains" : "is the likely cause of", r.name, e->reason);
    } else if (report->machine.scaling_together && r.trend.change_pct > 0 &&
               (ScalesEvenly(ViewOf(r)) ||
                r.decomposition.api.trend.first < 0.1 * r.decomposition.wall.trend.first)) {
      r.cause.kind = kCauseMachine;
      r.cause.summary = report->machine.summary;
    } else {
      r.cause = ComponentCause(*report, r, th);
    }
  }
  // Ranges carried by an inner range inherit its accumulator (after every range has its own).
  for (RangeReport& r : report->ranges) {
    if (!r.climbing || r.cause.kind == kCauseAccumulator)
      continue;
    if (const RangeReport* inner = CarriedBy(*report, r); inner != nullptr) {
      r.cause.kind = kCauseAccumulator;
      r.cause.accumulator = inner->cause.accumulator;
      r.cause.verdict = inner->cause.verdict;
      r.cause.summary = absl::StrFormat(
          "%s climbs because %s inside it does (%.0f%% of its growth): %s", r.name, inner->name,
          100 * inner->decomposition.wall.delta_ms / std::max(r.decomposition.wall.delta_ms, 1e-12),
          inner->cause.summary);
    }
  }
  // The verdict rests on the ranges whose climb is the program's, material and steady; the
  // rank's cause is the strongest of theirs (an accumulator first), then the largest growth.
  report->climbing = false;
  const RangeReport* lead = nullptr;
  for (RangeReport& r : report->ranges) {
    r.sets_verdict = r.climbing && r.material && r.steady && r.cause.kind != kCauseMachine;
    if (!r.sets_verdict)
      continue;
    report->climbing = true;
    if (lead == nullptr || Strength(r.cause) > Strength(lead->cause) ||
        (Strength(r.cause) == Strength(lead->cause) &&
         r.decomposition.wall.delta_ms > lead->decomposition.wall.delta_ms)) {
      lead = &r;
    }
  }
  if (lead != nullptr) {
    report->cause = lead->cause;
    report->cause.range = lead->name;
  } else if (report->machine.detected) {
    report->cause.kind = kCauseMachine;
    report->cause.range = iteration != nullptr ? iteration->name : "";
    report->cause.summary = report->machine.summary;
  }
}

}  // namespace cuclimb::analysis::internal
