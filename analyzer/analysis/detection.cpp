// SPDX-License-Identifier: Apache-2.0
// The detection pipeline.
#include "analysis/detection.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/candidates.h"
#include "analysis/ranking.h"
#include "detect/accumulators.h"
#include "util/parallel_for.h"

namespace cuclimb::analysis::internal {
namespace {

constexpr size_t kExamples = 5;

// The accepted accumulator of a candidate, or nothing: trend over the warm-up window, acceptance,
// then the onset and the rate from it (a leak that begins at iteration 300 leaks at its own rate,
// not at the average over the run).
std::optional<Accumulator> Accept(const Context& ctx, Candidate& c) {
  const AccumulatorKindInfo& info = Info(c.kind);
  Accumulator acc;
  acc.trend = ctx.TrendOf(c.values, info.resolution);
  std::string why;
  if (!IsAccumulator(c.kind, c.values, acc.trend, ctx.th, &why))
    return std::nullopt;
  acc.kind = std::string(info.name);
  acc.key = std::move(c.key);
  acc.id = absl::StrCat(acc.kind, ":", acc.key);
  acc.unit = std::string(info.unit);
  acc.growth_start_iteration = GrowthOnset(c.values, acc.trend.warmup);
  acc.growth_per_iter = acc.trend.slope_per_iter;
  acc.p_value = acc.trend.p_value;
  if (acc.growth_start_iteration > acc.trend.warmup) {
    const Trend from_onset =
        ComputeTrend(c.values, ctx.Options(info.resolution, acc.growth_start_iteration));
    if (from_onset.tested && from_onset.rising) {
      acc.growth_per_iter = from_onset.slope_per_iter;
      acc.p_value = from_onset.p_value;
    } else {
      acc.growth_start_iteration = acc.trend.warmup;
    }
  }
  if (!c.bytes.empty()) {
    acc.bytes_per_iter = ComputeTrend(c.bytes, ctx.Options(1.0, acc.trend.warmup)).slope_per_iter;
  }
  acc.values = std::move(c.values);
  acc.bytes = std::move(c.bytes);
  acc.site = std::move(c.site);
  acc.apis = std::move(c.apis);
  acc.size_classes = std::move(c.size_classes);
  // Evidence from what is live at the end: the oldest handles made after the growth started, and
  // how many survivors each iteration made (kinds without handles have no survivors).
  const size_t n = acc.values.size();
  if (info.nature != HandleNature::kNone)
    acc.survivors_by_alloc_iteration.assign(n, 0.0);
  std::vector<const LiveHandle*> after;
  for (const LiveHandle& h : c.live) {
    if (h.born >= 0 && h.born < static_cast<int64_t>(acc.survivors_by_alloc_iteration.size()))
      acc.survivors_by_alloc_iteration[static_cast<size_t>(h.born)] += 1;
    if (h.born >= acc.growth_start_iteration)
      after.push_back(&h);
  }
  const size_t keep = std::min(kExamples, after.size());
  std::partial_sort(after.begin(), after.begin() + static_cast<std::ptrdiff_t>(keep), after.end(),
                    [](const LiveHandle* x, const LiveHandle* y) { return x->serial < y->serial; });
  for (size_t i = 0; i < keep; ++i) {
    const LiveHandle& h = *after[i];
    acc.examples.push_back({h.address, h.serial, h.size_bytes,
                            h.api != 0 ? ctx.ApiName(h.api) : c.live_api, h.born, h.ts_ns,
                            h.freed});
  }
  return acc;
}

std::string Evidence(const Accumulator& a) {
  std::string s = absl::StrFormat("+%.3g %s/iter", a.growth_per_iter, a.unit);
  if (a.unit == "bytes")
    s = absl::StrFormat("+%s/iter", FormatBytes(a.growth_per_iter));
  if (a.bytes_per_iter > 0)
    absl::StrAppendFormat(&s, " (+%s/iter)", FormatBytes(a.bytes_per_iter));
  absl::StrAppendFormat(&s, " since iteration %d, p=%.2g", a.growth_start_iteration, a.p_value);
  if (!a.site.frames.empty() && a.site.label != a.key)
    absl::StrAppend(&s, "; at ", a.site.label);
  const auto kind = AccumulatorKindNamed(a.kind);
  const HandleNature nature = kind ? Info(*kind).nature : HandleNature::kNone;
  if (!a.examples.empty() && nature != HandleNature::kNone) {
    const HandleExample& e = a.examples.front();
    const char* freed = nature == HandleNature::kHandle   ? "destroyed"
                        : nature == HandleNature::kRegion ? "unregistered"
                                                          : "freed";
    absl::StrAppendFormat(&s, "; e.g. 0x%x %s in iteration %d, %s", e.address,
                          nature == HandleNature::kHandle   ? "created"
                          : nature == HandleNature::kRegion ? "registered"
                                                            : "allocated",
                          e.alloc_iteration,
                          e.free_iteration == -2 ? absl::StrCat("never ", freed)
                                                 : absl::StrCat(freed, " only at tear-down"));
  }
  for (const char* verdict : {kExplains, kLikelyCause}) {
    bool first = true;
    for (const Explanation& x : a.explanations) {
      if (x.verdict != verdict)
        continue;
      absl::StrAppendFormat(
          &s, "%s%s (%.0f%%)",
          first ? (verdict == kExplains ? "; explains " : "; likely cause of ") : ", ", x.range,
          100 * x.share);
      first = false;
    }
  }
  if (a.explains.empty() && a.likely_cause_of.empty()) {
    for (const Explanation& x : a.explanations) {
      if (x.verdict == kCorrelatedOnly) {
        absl::StrAppend(&s, "; rises with ", x.range, " but is not its cause");
        break;
      }
    }
  }
  return s;
}

// Each accepted accumulator against each climbing range.
void Attribute(const Thresholds& th, std::vector<Accumulator>* accepted, RankReport* report) {
  std::vector<CandidateView> views;
  for (const Accumulator& acc : *accepted) views.push_back(ViewOf(acc));
  for (RangeReport& r : report->ranges) {
    if (!r.climbing)
      continue;
    const RangeView range = ViewOf(r);
    std::vector<Explanation> explanations;
    for (const CandidateView& c : views) explanations.push_back(Measure(range, c, th));
    GradeRange(range, views, &explanations);
    for (size_t i = 0; i < accepted->size(); ++i) {
      Accumulator& acc = (*accepted)[i];
      Explanation& e = explanations[i];
      if (e.verdict == kExplains) {
        acc.explains.push_back(r.name);
        r.explained_by.push_back(acc.id);
      } else if (e.verdict == kLikelyCause) {
        acc.likely_cause_of.push_back(r.name);
      }
      acc.explanations.push_back(std::move(e));
    }
  }
}

}  // namespace

RangeView ViewOf(const RangeReport& r) {
  const Decomposition& d = r.decomposition;
  RangeView v;
  v.name = r.name;
  v.total_ms = r.total_ms;
  v.warmup = r.trend.warmup;
  v.climb_start = r.climb_start_iteration;
  v.wall_delta = d.wall.delta_ms;
  v.host_delta = d.host.delta_ms;
  v.api_delta = d.api.delta_ms;
  v.wall_first = d.wall.trend.first;
  v.api_first = d.api.trend.first;
  v.host_change_pct = d.host.trend.change_pct;
  v.api_change_pct = d.api.trend.change_pct;
  v.parts_tested = d.host.trend.tested && d.api.trend.tested;
  for (const auto* parts : {&d.by_api, &d.by_sync}) {
    for (const Component& c : *parts) v.calls.push_back({c.name, c.delta_ms});
  }
  return v;
}

CandidateView ViewOf(const Accumulator& a) {
  CandidateView v;
  v.kind = AccumulatorKindNamed(a.kind).value_or(AccumulatorKind::kDeviceAllocations);
  v.values = a.values;
  v.warmup = a.trend.warmup;
  v.growth_start = a.growth_start_iteration;
  return v;
}

void DetectAccumulators(Context& ctx, RankReport* report) {
  std::vector<Candidate> candidates;
  AllocationCandidates(ctx, report, &candidates);
  HandleCandidates(ctx, report, &candidates);
  RegionCandidates(ctx, report, &candidates);
  PoolCandidates(ctx, report, &candidates);
  LeafSampleSeries(ctx, report);
  HostFunctionCandidates(ctx, report, &candidates);
  std::vector<std::optional<Accumulator>> tried(candidates.size());
  util::ParallelFor(candidates.size(), ctx.in.jobs,
                    [&](size_t i) { tried[i] = Accept(ctx, candidates[i]); });
  std::vector<Accumulator> accepted;
  for (std::optional<Accumulator>& acc : tried) {
    if (acc.has_value())
      accepted.push_back(*std::move(acc));
  }
  Attribute(ctx.th, &accepted, report);
  RankAccumulators(&accepted);
  const size_t top =
      ctx.in.options->top > 0 ? static_cast<size_t>(ctx.in.options->top) : accepted.size();
  if (accepted.size() > top)
    accepted.resize(top);
  for (Accumulator& acc : accepted) acc.evidence = Evidence(acc);
  for (RangeReport& r : report->ranges) {
    std::vector<std::string> kept;
    for (const std::string& id : r.explained_by) {
      for (const Accumulator& acc : accepted) {
        if (acc.id == id)
          kept.push_back(id);
      }
    }
    r.explained_by = std::move(kept);
    if (r.climbing && r.explained_by.empty()) {
      // A likely cause is not an explanation, but the line must not deny it either.
      std::string likely;
      for (const Accumulator& acc : accepted) {
        if (std::find(acc.likely_cause_of.begin(), acc.likely_cause_of.end(), r.name) !=
            acc.likely_cause_of.end()) {
          likely = acc.id;
          break;
        }
      }
      r.where_time_goes =
          likely.empty() ? absl::StrCat("not explained by any accumulator; ", r.where_time_goes)
                         : absl::StrCat("most likely caused by ", likely, "; ", r.where_time_goes);
    }
  }
  report->accumulators = std::move(accepted);
}

}  // namespace cuclimb::analysis::internal
