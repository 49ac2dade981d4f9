// SPDX-License-Identifier: Apache-2.0
// The handle, NVTX region, pool and host function families.
#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/candidates.h"
#include "analysis/flow.h"

namespace cuclimb::analysis::internal {
namespace {

constexpr size_t kFunctionSeries = 32;

std::optional<AccumulatorKind> KindOfHandle(uint8_t type) {
  switch (static_cast<format::HandleType>(type)) {
    case format::HandleType::kStream:
      return AccumulatorKind::kStreams;
    case format::HandleType::kEvent:
      return AccumulatorKind::kEvents;
    case format::HandleType::kModule:
    case format::HandleType::kLibrary:
      return AccumulatorKind::kModules;
    case format::HandleType::kGraph:
    case format::HandleType::kGraphExec:
      return AccumulatorKind::kGraphs;
    default:
      return std::nullopt;
  }
}

}  // namespace

void AddStateSeries(Context& ctx, RankReport* report, std::string metric, std::string dimension,
                    std::string key, std::string unit, Series values) {
  StateSeries s{std::move(metric), std::move(dimension), std::move(key),
                std::move(unit),   std::move(values),    {}};
  s.trend = ctx.TrendOf(s.values, 0.5);
  report->state.push_back(std::move(s));
}

void HandleCandidates(Context& ctx, RankReport* report, std::vector<Candidate>* out) {
  const Aggregates& a = ctx.a;
  const Folder& f = ctx.fold;
  const size_t n = static_cast<size_t>(f.count());
  std::map<std::string, Flow> by_type;
  std::vector<Candidate> groups;
  std::vector<Flow> flows;
  absl::flat_hash_map<std::string, int> group_of;
  std::vector<int> group_of_key(a.handle_keys.size(), -1);
  for (size_t k = 0; k < a.handle_keys.size(); ++k) {
    const HandleKey& key = a.handle_keys[k];
    const Flow fl = FoldFlow(f, a.handle_series[k].creates, a.handle_series[k].destroys);
    by_type[HandleTypeName(key.type)].Add(fl);
    const auto kind = KindOfHandle(key.type);
    if (!kind)
      continue;
    const char* kind_name = Info(*kind).name;
    // Keyed by the call site's label, as allocations are.
    const std::string gid = key.stack != 0 ? absl::StrCat(kind_name, "|s", ctx.SiteLabel(key.stack))
                                           : absl::StrCat(kind_name, "|t", key.type, "|a", key.api);
    auto [it, inserted] = group_of.try_emplace(gid, static_cast<int>(groups.size()));
    if (inserted) {
      Candidate c;
      c.kind = *kind;
      c.site = ctx.Site(key.stack);
      c.key = key.stack != 0 ? c.site.label
                             : (key.api != 0 ? ctx.ApiName(key.api) : HandleTypeName(key.type));
      groups.push_back(std::move(c));
      flows.emplace_back();
    }
    flows[static_cast<size_t>(it->second)].Add(fl);
    group_of_key[k] = it->second;
  }
  for (const auto& [type, fl] : by_type) {
    AddStateSeries(ctx, report, "live_handles", "handle_type", type, "handles", fl.Level(n));
    AddStateSeries(ctx, report, "creates", "handle_type", type, "calls", fl.in);
    AddStateSeries(ctx, report, "destroys", "handle_type", type, "calls", fl.out);
  }
  // Survivors of the loop: handles live at the end of the trace (leaks), and those destroyed
  // only in the epilogue (tear-down; free_iteration = n).
  auto survivor = [&](const LiveAlloc& live, uint64_t id, int64_t freed) {
    const int gi = live.key < group_of_key.size() ? group_of_key[live.key] : -1;
    if (gi < 0)
      return;
    groups[static_cast<size_t>(gi)].live.push_back({id, live.serial, 0, a.handle_keys[live.key].api,
                                                    f.IterationOf(live.slot), live.ts, freed});
  };
  for (const auto& [id, live] : a.live_handles) {
    ++report->leaks.handles_by_type[HandleTypeName(id.first)];
    survivor(live, id.second, -2);
  }
  for (const Aggregates::FreedAlloc& freed : a.recent_frees) {
    if (freed.handle_type >= 0 && f.IterationOf(freed.free_slot) == -2 &&
        f.IterationOf(freed.live.slot) >= 0) {
      survivor(freed.live, freed.addr, static_cast<int64_t>(n));
    }
  }
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    groups[gi].values = flows[gi].Level(n);
    out->push_back(std::move(groups[gi]));
  }
}

void RegionCandidates(Context& ctx, RankReport* report, std::vector<Candidate>* out) {
  const Aggregates& a = ctx.a;
  const Folder& f = ctx.fold;
  const size_t n = static_cast<size_t>(f.count());
  Flow all_h, all_b;
  for (const HeapSeries& hs : a.heaps) {
    const Flow fh = FoldFlow(f, hs.regions, hs.frees), fb = FoldFlow(f, hs.bytes, hs.free_bytes);
    all_h.Add(fh);
    all_b.Add(fb);
    Candidate c;
    c.kind = AccumulatorKind::kNvtxRegions;
    c.key = absl::StrFormat("heap 0x%x", hs.heap);
    if (hs.name != 0)
      absl::StrAppend(&c.key, " (", ctx.Str(hs.name), ")");
    c.values = fh.Level(n);
    c.bytes = fb.Level(n);
    const CandidateSeriesNames& names = Info(c.kind).series;
    AddStateSeries(ctx, report, names.metric, names.dimension, c.key, "regions", c.values);
    AddStateSeries(ctx, report, names.bytes_metric, names.dimension, c.key, "bytes", c.bytes);
    c.live_api = "nvtxMemRegionsRegister";
    if (auto it = a.live_regions.find(hs.heap); it != a.live_regions.end()) {
      for (const auto& [addr, live] : it->second)
        c.live.push_back({addr, live.serial, live.size, 0, f.IterationOf(live.slot), live.ts});
    }
    out->push_back(std::move(c));
  }
  if (!a.heaps.empty()) {
    AddStateSeries(ctx, report, "live_regions", "total", "all", "regions", all_h.Level(n));
    AddStateSeries(ctx, report, "live_region_bytes", "total", "all", "bytes", all_b.Level(n));
  }
}

void PoolCandidates(Context& ctx, RankReport* /*report*/, std::vector<Candidate>* out) {
  const Aggregates& a = ctx.a;
  for (size_t g = 0; g < a.gauges.size(); ++g) {
    if (ctx.in.reader->Str(a.gauge_keys[g].name) != "pool.reserved")
      continue;
    Candidate c;
    c.kind = AccumulatorKind::kPoolReserved;
    c.key = a.gauge_keys[g].pool != 0 ? absl::StrFormat("pool 0x%x", a.gauge_keys[g].pool)
                                      : absl::StrCat("device ", a.gauge_keys[g].device);
    c.values = ctx.fold.Gauge(a.gauges[g]);
    out->push_back(std::move(c));
  }
}

void LeafSampleSeries(Context& ctx, RankReport* report) {
  const Aggregates& a = ctx.a;
  std::vector<std::pair<double, size_t>> order;
  std::vector<Series> per(a.functions.size());
  for (size_t i = 0; i < a.functions.size(); ++i) {
    per[i] = ctx.fold.Sum(a.function_samples[i]);
    double t = 0;
    for (double v : per[i]) t += v;
    order.emplace_back(-t, i);
  }
  std::sort(order.begin(), order.end(), [&](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : a.functions[x.second] < a.functions[y.second];
  });
  for (size_t j = 0; j < order.size() && j < kFunctionSeries; ++j) {
    const size_t i = order[j].second;
    AddStateSeries(ctx, report, "samples", "function", a.functions[i], "samples", per[i]);
  }
}

}  // namespace cuclimb::analysis::internal
