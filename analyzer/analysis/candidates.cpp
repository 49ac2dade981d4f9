// SPDX-License-Identifier: Apache-2.0
// Assembly, part 2: memory, handle, region, pool and host-sample series; accumulator candidates,
// their attribution to climbing ranges and their evidence; leaks at exit.
#include <algorithm>
#include <cmath>
#include <map>
#include <queue>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/assemble.h"
#include "analysis/flow.h"
#include "detect/accumulators.h"
#include "detect/attribution.h"

namespace cuclimb::analysis::internal {
namespace {

constexpr size_t kExamples = 5;
constexpr size_t kLeakSites = 20;
constexpr size_t kFunctionSeries = 32;

struct Group {
  std::string kind, key;
  uint32_t stack = 0;
  Flow handles, bytes, allocs_flow;
  std::vector<uint32_t> keys;  // allocation or handle keys in the group
  int accumulator = -1;        // index into the accepted list
};

struct KeyedSeries {
  std::map<std::string, Flow> handles, bytes;
  std::map<std::string, Series> allocs, frees;
};

void AddSeries(Context& ctx, RankReport* r, std::string metric, std::string dimension,
               std::string key, std::string unit, Series values) {
  StateSeries s{std::move(metric), std::move(dimension), std::move(key),
                std::move(unit),   std::move(values),    {}};
  s.trend = ctx.TrendOf(s.values, 0.5);
  r->state.push_back(std::move(s));
}

std::string UniqueKey(std::map<std::string, int>& used, const std::string& kind, std::string key,
                      uint32_t stack) {
  if (used[kind + "\n" + key]++ > 0)
    key = absl::StrCat(key, " (stack ", stack, ")");
  return key;
}

// Keeps the k smallest serials.
struct Oldest {
  std::priority_queue<std::pair<uint64_t, HandleExample>,
                      std::vector<std::pair<uint64_t, HandleExample>>,
                      bool (*)(const std::pair<uint64_t, HandleExample>&,
                               const std::pair<uint64_t, HandleExample>&)>
      heap{[](const std::pair<uint64_t, HandleExample>& x,
              const std::pair<uint64_t, HandleExample>& y) { return x.first < y.first; }};
  void Offer(const HandleExample& e, size_t k) {
    heap.emplace(e.serial, e);
    if (heap.size() > k)
      heap.pop();
  }
  std::vector<HandleExample> Sorted() {
    std::vector<HandleExample> out;
    while (!heap.empty()) {
      out.push_back(heap.top().second);
      heap.pop();
    }
    std::reverse(out.begin(), out.end());
    return out;
  }
};

std::string Evidence(const Accumulator& a) {
  std::string s = absl::StrFormat("+%.3g %s/iter", a.growth_per_iter, a.unit);
  if (a.unit == "bytes")
    s = absl::StrFormat("+%s/iter", FormatBytes(a.growth_per_iter));
  if (a.bytes_per_iter > 0)
    absl::StrAppendFormat(&s, " (+%s/iter)", FormatBytes(a.bytes_per_iter));
  absl::StrAppendFormat(&s, " since iteration %d, p=%.2g", a.growth_start_iteration, a.p_value);
  if (!a.site.frames.empty() && a.site.label != a.key)
    absl::StrAppend(&s, "; at ", a.site.label);
  if (!a.examples.empty()) {
    const HandleExample& e = a.examples.front();
    const bool handle =
        a.kind == "streams" || a.kind == "events" || a.kind == "modules" || a.kind == "graphs";
    const bool region = a.kind == "nvtx_regions";
    const char* freed = handle ? "destroyed" : region ? "unregistered" : "freed";
    absl::StrAppendFormat(&s, "; e.g. 0x%x %s in iteration %d, %s", e.address,
                          handle   ? "created"
                          : region ? "registered"
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

}  // namespace

void BuildCandidates(Context& ctx, RankReport* report) {
  const Aggregates& a = ctx.a;
  const Folder& f = ctx.fold;
  const size_t n = static_cast<size_t>(f.count());
  std::vector<Accumulator> accepted;
  std::vector<Group> groups;
  std::map<std::string, int> used_keys;

  auto consider = [&](Accumulator acc, int group) {
    std::string why;
    acc.trend = ctx.TrendOf(acc.values, acc.unit == "handles" || acc.unit == "samples" ? 0.5 : 1.0);
    if (!IsAccumulator(acc.kind, acc.values, acc.trend, ctx.th, &why))
      return;
    acc.id = absl::StrCat(acc.kind, ":", acc.key);
    // Growth that starts after the warm-up is dated from its onset, and its rate is measured
    // from there (a leak that begins at iteration 300 leaks at its own rate, not at the average
    // over the run).
    const double resolution = acc.unit == "handles" || acc.unit == "samples" ? 0.5 : 1.0;
    acc.growth_start_iteration = GrowthOnset(acc.values, acc.trend.warmup);
    acc.growth_per_iter = acc.trend.slope_per_iter;
    acc.p_value = acc.trend.p_value;
    if (acc.growth_start_iteration > acc.trend.warmup) {
      const Trend from_onset =
          ComputeTrend(acc.values, ctx.Options(resolution, acc.growth_start_iteration));
      if (from_onset.tested && from_onset.rising) {
        acc.growth_per_iter = from_onset.slope_per_iter;
        acc.p_value = from_onset.p_value;
      } else {
        acc.growth_start_iteration = acc.trend.warmup;
      }
    }
    if (!acc.bytes.empty()) {
      acc.bytes_per_iter =
          ComputeTrend(acc.bytes, ctx.Options(1.0, acc.trend.warmup)).slope_per_iter;
    }
    if (group >= 0)
      groups[static_cast<size_t>(group)].accumulator = static_cast<int>(accepted.size());
    accepted.push_back(std::move(acc));
  };

  // Allocations: totals and groupings, then groups by (kind, call site) or (kind, API, class).
  {
    Flow total_h, total_b;
    Series allocs_total(n, 0.0), frees_total(n, 0.0), alloc_bytes_total(n, 0.0), temps(n, 0.0);
    std::map<std::string, KeyedSeries> dims;  // dimension → key → flows
    absl::flat_hash_map<std::string, int> group_of;
    std::vector<int> group_of_key(a.alloc_keys.size(), -1);
    for (size_t k = 0; k < a.alloc_keys.size(); ++k) {
      const AllocKey& key = a.alloc_keys[k];
      const AllocSeries& s = a.alloc_series[k];
      const Flow h = FoldFlow(f, s.allocs, s.frees), b = FoldFlow(f, s.alloc_bytes, s.free_bytes);
      const std::string kind = MemoryKindName(key.kind), api = ctx.ApiName(key.api),
                        cls = SizeClassLabel(key.size_class);
      for (const auto& [dim, name] : {std::pair<std::string, std::string>{"memory_kind", kind},
                                      {"api", api},
                                      {"size_class", cls}}) {
        KeyedSeries& ks = dims[dim];
        ks.handles[name].Add(h);
        ks.bytes[name].Add(b);
        ks.allocs[name] = Sum(ks.allocs[name], h.in);
        ks.frees[name] = Sum(ks.frees[name], h.out);
      }
      if (key.kind !=
          kVmmMappingKind) {  // mappings are not allocations: their memory is the handle's
        total_h.Add(h);
        total_b.Add(b);
        allocs_total = Sum(allocs_total, h.in);
        frees_total = Sum(frees_total, h.out);
        alloc_bytes_total = Sum(alloc_bytes_total, b.in);
        temps = Sum(temps, f.Sum(s.temps));
      }
      const std::string acc_kind = AllocationKind(key.kind);
      // Call sites are keyed by their label, so stacks that differ only inside framework or
      // CUDA frames are one group (Symbolizer::SiteLabel); the first stack is the evidence.
      const std::string gid = key.stack != 0
                                  ? absl::StrCat(acc_kind, "|s", ctx.SiteLabel(key.stack))
                                  : absl::StrCat(acc_kind, "|a", key.api, "|c", key.size_class);
      auto [it, inserted] = group_of.try_emplace(gid, static_cast<int>(groups.size()));
      if (inserted) {
        Group g;
        g.kind = acc_kind;
        g.stack = key.stack;
        g.key = key.stack != 0 ? ctx.Site(key.stack).label : absl::StrCat(api, " ", cls);
        g.key = UniqueKey(used_keys, acc_kind, g.key, key.stack);
        groups.push_back(std::move(g));
      }
      Group& g = groups[static_cast<size_t>(it->second)];
      g.handles.Add(h);
      g.bytes.Add(b);
      g.allocs_flow.Add(h);
      g.keys.push_back(static_cast<uint32_t>(k));
      group_of_key[k] = it->second;
    }
    if (!a.alloc_keys.empty()) {
      AddSeries(ctx, report, "live_handles", "total", "all", "handles", total_h.Level(n));
      AddSeries(ctx, report, "live_bytes", "total", "all", "bytes", total_b.Level(n));
      AddSeries(ctx, report, "allocs", "total", "all", "calls", allocs_total);
      AddSeries(ctx, report, "frees", "total", "all", "calls", frees_total);
      AddSeries(ctx, report, "alloc_bytes", "total", "all", "bytes", alloc_bytes_total);
      AddSeries(ctx, report, "temporaries", "total", "all", "handles", temps);
    }
    for (const auto& [dim, ks] : dims) {
      for (const auto& [name, flow] : ks.handles) {
        AddSeries(ctx, report, "live_handles", dim, name, "handles", flow.Level(n));
        AddSeries(ctx, report, "live_bytes", dim, name, "bytes", ks.bytes.at(name).Level(n));
        AddSeries(ctx, report, "allocs", dim, name, "calls", ks.allocs.at(name));
        AddSeries(ctx, report, "frees", dim, name, "calls", ks.frees.at(name));
      }
    }
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      Group& g = groups[gi];
      const std::string site_key = absl::StrCat(g.kind, ": ", g.key);
      AddSeries(ctx, report, "live_handles", "call_site", site_key, "handles", g.handles.Level(n));
      AddSeries(ctx, report, "live_bytes", "call_site", site_key, "bytes", g.bytes.Level(n));
      AddSeries(ctx, report, "allocs", "call_site", site_key, "calls", g.allocs_flow.in);
      Accumulator acc;
      acc.kind = g.kind;
      acc.key = g.key;
      acc.unit = "handles";
      acc.values = g.handles.Level(n);
      acc.bytes = g.bytes.Level(n);
      acc.site = ctx.Site(g.stack);
      consider(std::move(acc), static_cast<int>(gi));
    }
    // Evidence and leaks from what is live at the end.
    std::vector<Oldest> examples(groups.size()), leak_examples(groups.size());
    std::vector<uint64_t> leak_handles(groups.size(), 0), leak_bytes(groups.size(), 0);
    std::vector<Series> survivors(groups.size());
    // A survivor of the loop is live at its end: still live at the end of the trace (a leak), or
    // freed only in the epilogue (tear-down; free_iteration = n).
    auto visit = [&](const LiveAlloc& live, uint64_t addr, bool freed_at_teardown) {
      const int gi = group_of_key[live.key];
      if (gi < 0)
        return;
      const Group& g = groups[static_cast<size_t>(gi)];
      const int64_t born = f.IterationOf(live.slot);
      HandleExample e{addr,
                      live.serial,
                      live.size,
                      ctx.ApiName(a.alloc_keys[live.key].api),
                      born,
                      live.ts,
                      freed_at_teardown ? static_cast<int64_t>(n) : -2};
      if (!freed_at_teardown) {
        ++leak_handles[static_cast<size_t>(gi)];
        leak_bytes[static_cast<size_t>(gi)] += live.size;
        leak_examples[static_cast<size_t>(gi)].Offer(e, 3);
      }
      if (g.accumulator < 0)
        return;
      Series& sv = survivors[static_cast<size_t>(gi)];
      if (sv.empty())
        sv.assign(n, 0.0);
      if (born >= 0 && born < static_cast<int64_t>(n))
        sv[static_cast<size_t>(born)] += 1;
      if (born >= accepted[static_cast<size_t>(g.accumulator)].growth_start_iteration) {
        examples[static_cast<size_t>(gi)].Offer(e, kExamples);
      }
    };
    for (const auto& [addr, live] : a.live_allocs) visit(live, addr, false);
    for (const auto& [addr, live] : a.live_maps) visit(live, addr, false);
    for (const Aggregates::FreedAlloc& freed : a.recent_frees) {
      if (freed.handle_type < 0 && f.IterationOf(freed.free_slot) == -2 &&
          f.IterationOf(freed.live.slot) >= 0) {
        visit(freed.live, freed.addr, true);
      }
    }
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      const Group& g = groups[gi];
      if (g.accumulator >= 0) {
        Accumulator& acc = accepted[static_cast<size_t>(g.accumulator)];
        acc.examples = examples[gi].Sorted();
        acc.survivors_by_alloc_iteration = survivors[gi].empty() ? Series(n, 0.0) : survivors[gi];
        for (uint32_t k : g.keys) {
          const std::string api = ctx.ApiName(a.alloc_keys[k].api),
                            cls = SizeClassLabel(a.alloc_keys[k].size_class);
          if (std::find(acc.apis.begin(), acc.apis.end(), api) == acc.apis.end())
            acc.apis.push_back(api);
          if (std::find(acc.size_classes.begin(), acc.size_classes.end(), cls) ==
              acc.size_classes.end()) {
            acc.size_classes.push_back(cls);
          }
        }
        std::sort(acc.apis.begin(), acc.apis.end());
        std::sort(acc.size_classes.begin(), acc.size_classes.end());
      }
      if (leak_handles[gi] > 0) {
        LeakSite ls{g.kind,
                    g.key,
                    leak_handles[gi],
                    leak_bytes[gi],
                    ctx.Site(g.stack),
                    leak_examples[gi].Sorted()};
        report->leaks.handles += ls.handles;
        report->leaks.bytes += ls.bytes;
        report->leaks.by_site.push_back(std::move(ls));
      }
    }
    std::sort(report->leaks.by_site.begin(), report->leaks.by_site.end(),
              [](const LeakSite& x, const LeakSite& y) {
                if (x.bytes != y.bytes)
                  return x.bytes > y.bytes;
                if (x.handles != y.handles)
                  return x.handles > y.handles;
                return x.kind + x.key < y.kind + y.key;
              });
    if (report->leaks.by_site.size() > kLeakSites)
      report->leaks.by_site.resize(kLeakSites);
    report->leaks.unmatched_frees = a.unmatched_frees + a.unmatched_unmaps;
    report->leaks.replaced_allocations = a.replaced_allocations;
    report->leaks.activity_duplicates = a.activity_duplicates;
  }

  // Handles: streams, events, modules, graphs.
  {
    std::map<std::string, Flow> by_type;
    std::vector<Group> hgroups;
    absl::flat_hash_map<std::string, int> hgroup_of;
    std::vector<int> hgroup_of_key(a.handle_keys.size(), -1);
    for (size_t k = 0; k < a.handle_keys.size(); ++k) {
      const HandleKey& key = a.handle_keys[k];
      const Flow fl = FoldFlow(f, a.handle_series[k].creates, a.handle_series[k].destroys);
      by_type[HandleTypeName(key.type)].Add(fl);
      const std::string kind = HandleKind(key.type);
      if (kind.empty())
        continue;
      const std::string gid = key.stack != 0 ? absl::StrCat(kind, "|s", ctx.SiteLabel(key.stack))
                                             : absl::StrCat(kind, "|t", key.type, "|a", key.api);
      auto [it, inserted] = hgroup_of.try_emplace(gid, static_cast<int>(hgroups.size()));
      if (inserted) {
        Group g;
        g.kind = kind;
        g.stack = key.stack;
        g.key = key.stack != 0 ? ctx.Site(key.stack).label
                               : (key.api != 0 ? ctx.ApiName(key.api) : HandleTypeName(key.type));
        g.key = UniqueKey(used_keys, kind, g.key, key.stack);
        hgroups.push_back(std::move(g));
      }
      hgroups[static_cast<size_t>(it->second)].handles.Add(fl);
      hgroup_of_key[k] = it->second;
    }
    for (const auto& [type, fl] : by_type) {
      AddSeries(ctx, report, "live_handles", "handle_type", type, "handles", fl.Level(n));
      AddSeries(ctx, report, "creates", "handle_type", type, "calls", fl.in);
      AddSeries(ctx, report, "destroys", "handle_type", type, "calls", fl.out);
    }
    std::vector<int> acc_of_hgroup(hgroups.size(), -1);
    for (size_t gi = 0; gi < hgroups.size(); ++gi) {
      Accumulator acc;
      acc.kind = hgroups[gi].kind;
      acc.key = hgroups[gi].key;
      acc.unit = "handles";
      acc.values = hgroups[gi].handles.Level(n);
      acc.site = ctx.Site(hgroups[gi].stack);
      const size_t before = accepted.size();
      consider(std::move(acc), -1);
      if (accepted.size() > before)
        acc_of_hgroup[gi] = static_cast<int>(before);
    }
    std::vector<Oldest> ex(hgroups.size());
    // Survivors of the loop: handles live at the end of the trace (leaks), and those destroyed
    // only in the epilogue (tear-down; free_iteration = n).
    std::vector<std::tuple<std::pair<uint8_t, uint64_t>, LiveAlloc, bool>> survivors;
    for (const auto& [id, live] : a.live_handles) {
      ++report->leaks.handles_by_type[HandleTypeName(id.first)];
      survivors.emplace_back(id, live, false);
    }
    for (const Aggregates::FreedAlloc& freed : a.recent_frees) {
      if (freed.handle_type >= 0 && f.IterationOf(freed.free_slot) == -2 &&
          f.IterationOf(freed.live.slot) >= 0) {
        survivors.emplace_back(std::pair<uint8_t, uint64_t>{freed.handle_type, freed.addr},
                               freed.live, true);
      }
    }
    for (const auto& [id, live, at_teardown] : survivors) {
      const int gi = live.key < hgroup_of_key.size() ? hgroup_of_key[live.key] : -1;
      if (gi < 0 || acc_of_hgroup[static_cast<size_t>(gi)] < 0)
        continue;
      Accumulator& acc = accepted[static_cast<size_t>(acc_of_hgroup[static_cast<size_t>(gi)])];
      const int64_t born = f.IterationOf(live.slot);
      if (acc.survivors_by_alloc_iteration.empty())
        acc.survivors_by_alloc_iteration.assign(n, 0.0);
      if (born >= 0 && born < static_cast<int64_t>(n))
        acc.survivors_by_alloc_iteration[static_cast<size_t>(born)] += 1;
      if (born >= acc.growth_start_iteration) {
        ex[static_cast<size_t>(gi)].Offer(
            {id.second, live.serial, 0, ctx.ApiName(a.handle_keys[live.key].api), born, live.ts,
             at_teardown ? static_cast<int64_t>(n) : -2},
            kExamples);
      }
    }
    for (size_t gi = 0; gi < hgroups.size(); ++gi) {
      if (acc_of_hgroup[gi] >= 0)
        accepted[static_cast<size_t>(acc_of_hgroup[gi])].examples = ex[gi].Sorted();
    }
  }

  // NVTX memory regions, per heap.
  {
    Flow all_h, all_b;
    for (size_t h = 0; h < a.heaps.size(); ++h) {
      const HeapSeries& hs = a.heaps[h];
      const Flow fh = FoldFlow(f, hs.regions, hs.frees), fb = FoldFlow(f, hs.bytes, hs.free_bytes);
      all_h.Add(fh);
      all_b.Add(fb);
      std::string key = absl::StrFormat("heap 0x%x", hs.heap);
      if (hs.name != 0)
        absl::StrAppend(&key, " (", ctx.Str(hs.name), ")");
      AddSeries(ctx, report, "live_regions", "heap", key, "regions", fh.Level(n));
      AddSeries(ctx, report, "live_region_bytes", "heap", key, "bytes", fb.Level(n));
      Accumulator acc;
      acc.kind = "nvtx_regions";
      acc.key = key;
      acc.unit = "handles";
      acc.values = fh.Level(n);
      acc.bytes = fb.Level(n);
      const size_t before = accepted.size();
      consider(std::move(acc), -1);
      if (accepted.size() > before) {
        Accumulator& acc2 = accepted.back();
        Oldest ex;
        acc2.survivors_by_alloc_iteration.assign(n, 0.0);
        if (auto it = a.live_regions.find(hs.heap); it != a.live_regions.end()) {
          for (const auto& [addr, live] : it->second) {
            const int64_t born = f.IterationOf(live.slot);
            if (born >= 0 && born < static_cast<int64_t>(n))
              acc2.survivors_by_alloc_iteration[static_cast<size_t>(born)] += 1;
            if (born >= acc2.growth_start_iteration)
              ex.Offer({addr, live.serial, live.size, "nvtxMemRegionsRegister", born, live.ts, -2},
                       kExamples);
          }
        }
        acc2.examples = ex.Sorted();
      }
    }
    if (!a.heaps.empty()) {
      AddSeries(ctx, report, "live_regions", "total", "all", "regions", all_h.Level(n));
      AddSeries(ctx, report, "live_region_bytes", "total", "all", "bytes", all_b.Level(n));
    }
  }

  // Pool reserved bytes (sampled gauges).
  for (size_t g = 0; g < a.gauges.size(); ++g) {
    if (ctx.in.reader->Str(a.gauge_keys[g].name) != "pool.reserved")
      continue;
    Accumulator acc;
    acc.kind = "pool_reserved";
    acc.key = a.gauge_keys[g].pool != 0 ? absl::StrFormat("pool 0x%x", a.gauge_keys[g].pool)
                                        : absl::StrCat("device ", a.gauge_keys[g].device);
    acc.unit = "bytes";
    acc.values = f.Gauge(a.gauges[g]);
    consider(std::move(acc), -1);
  }

  // Host samples per leaf function.
  {
    std::vector<std::pair<double, size_t>> order;
    std::vector<Series> per(a.functions.size());
    for (size_t i = 0; i < a.functions.size(); ++i) {
      per[i] = f.Sum(a.function_samples[i]);
      double t = 0;
      for (double v : per[i]) t += v;
      order.emplace_back(-t, i);
    }
    std::sort(order.begin(), order.end(), [&](const auto& x, const auto& y) {
      return x.first != y.first ? x.first < y.first : a.functions[x.second] < a.functions[y.second];
    });
    for (size_t j = 0; j < order.size(); ++j) {
      const size_t i = order[j].second;
      if (j < kFunctionSeries)
        AddSeries(ctx, report, "samples", "function", a.functions[i], "samples", per[i]);
      Accumulator acc;
      acc.kind = "host_function";
      acc.key = a.functions[i];
      acc.unit = "samples";
      acc.values = per[i];
      consider(std::move(acc), -1);
    }
  }

  // Attribution to climbing ranges, ranking, evidence.
  std::vector<const Accumulator*> candidates;
  for (const Accumulator& acc : accepted) candidates.push_back(&acc);
  for (RangeReport& r : report->ranges) {
    if (!r.climbing)
      continue;
    std::vector<Explanation> explanations;
    for (const Accumulator* acc : candidates) explanations.push_back(Measure(r, *acc, ctx.th));
    GradeRange(r, candidates, &explanations);
    for (size_t i = 0; i < accepted.size(); ++i) {
      Accumulator& acc = accepted[i];
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
      r.where_time_goes = absl::StrCat("not explained by any accumulator; ", r.where_time_goes);
    }
  }
  report->accumulators = std::move(accepted);
}

}  // namespace cuclimb::analysis::internal
