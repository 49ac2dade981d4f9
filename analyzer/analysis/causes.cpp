// SPDX-License-Identifier: Apache-2.0
// Causes of climbing ranges.
#include "analysis/causes.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuclimb::analysis::internal {
namespace {

// The range whose time is the iteration's: the boundary range, or the pseudo range.
const RangeReport* IterationRange(const RankReport& r) {
  for (const RangeReport& x : r.ranges) {
    if (x.name == "(iteration)")
      return &x;
  }
  const std::string& name = r.iterations.name;
  for (const RangeReport& x : r.ranges) {
    if (x.name == name || (x.name.size() > name.size() + 2 &&
                           x.name.compare(x.name.size() - name.size(), name.size(), name) == 0 &&
                           x.name.compare(x.name.size() - name.size() - 2, 2, "::") == 0)) {
      return &x;
    }
  }
  return nullptr;
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

Cause ComponentCause(const RangeReport& r) {
  const Decomposition& d = r.decomposition;
  Cause c;
  const double wall = std::max(d.wall.delta_ms, 1e-12);
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
  c.kind = top->kind;
  if (c.kind == kCauseSync && d.gpu.delta_ms > 0.5 * d.sync.delta_ms)
    c.kind = kCauseGpu;
  if (c.kind == kCauseHost) {
    c.summary = absl::StrFormat(
        "%s grows by %.3g ms over the run, %.0f%% of it in host code between CUDA calls, with no "
        "growing state to explain it",
        r.name, d.wall.delta_ms, 100 * d.host.delta_ms / wall);
  } else if (c.kind == kCauseApi) {
    c.summary = absl::StrFormat(
        "%s grows by %.3g ms over the run, %.0f%% of it inside CUDA calls, with no growing state "
        "to explain it",
        r.name, d.wall.delta_ms, 100 * d.api.delta_ms / wall);
  } else if (c.kind == kCauseGpu) {
    c.summary = absl::StrFormat(
        "%s waits longer for the GPU (+%.3g ms over the run): its kernels take %.3g ms more GPU "
        "time",
        r.name, d.sync.delta_ms, d.gpu.delta_ms);
  } else {
    c.summary = absl::StrFormat(
        "%s waits longer in synchronization (+%.3g ms over the run); kernel GPU times were not "
        "recorded to say why",
        r.name, d.sync.delta_ms);
  }
  return c;
}

}  // namespace

void AssignCauses(Context& ctx, RankReport* report) {
  const RangeReport* iteration = IterationRange(*report);
  WarmupChoice& w = report->iterations.warmup;
  w.automatic = ctx.th.warmup < 0;
  w.max_share = ctx.th.max_warmup_share;
  if (iteration != nullptr) {
    w.iterations = w.wanted = iteration->trend.warmup;
    w.series = iteration->name;
    w.why = w.automatic ? absl::StrFormat("the first %d iterations of %s stand apart from the rest",
                                          w.iterations, iteration->name)
                        : "set with --warmup";
  }
  const double iteration_ms = iteration != nullptr ? std::max(iteration->trend.first, 1e-9) : 0;
  for (RangeReport& r : report->ranges) {
    r.climb_start_iteration = r.trend.warmup;
    const double growth =
        r.trend.tested ? r.trend.slope_per_iter * static_cast<double>(r.trend.n) : 0;
    r.iteration_share_pct = iteration_ms > 0 ? 100 * growth / iteration_ms : r.trend.change_pct;
    r.material = r.iteration_share_pct >= ctx.th.min_iteration_share_pct;
    r.steady = r.climbing;
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
    } else {
      r.cause = ComponentCause(r);
    }
    r.sets_verdict = r.material && r.steady && r.cause.kind != kCauseMachine;
  }
  report->climbing = false;
  for (const RangeReport& r : report->ranges) {
    if (r.sets_verdict && !report->climbing) {
      report->climbing = true;
      report->cause = r.cause;
      report->cause.range = r.name;
    }
  }
}

}  // namespace cuclimb::analysis::internal
