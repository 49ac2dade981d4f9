// SPDX-License-Identifier: Apache-2.0
// The allocation family: census series by memory kind, API and size class; candidates by call
// site; leaks at exit.
#include <algorithm>
#include <map>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/candidates.h"
#include "analysis/flow.h"

namespace cuclimb::analysis::internal {
namespace {

constexpr size_t kLeakSites = 20;
constexpr size_t kLeakExamples = 3;

struct Group {
  AccumulatorKind kind;
  std::string key;
  uint32_t stack = 0;
  Flow handles, bytes;
  std::vector<uint32_t> keys;  // allocation keys in the group
  uint64_t leak_handles = 0, leak_bytes = 0;
  std::vector<LiveHandle> live;
};

struct KeyedSeries {
  std::map<std::string, Flow> handles, bytes;
  std::map<std::string, Series> allocs, frees;
};

AccumulatorKind KindOf(uint8_t memory_kind) {
  switch (static_cast<format::MemoryKind>(memory_kind)) {
    case format::MemoryKind::kPinned:
    case format::MemoryKind::kHostRegistered:
      return AccumulatorKind::kPinnedAllocations;
    case format::MemoryKind::kManaged:
      return AccumulatorKind::kManagedAllocations;
    case format::MemoryKind::kVmm:
      return AccumulatorKind::kVmmMappings;
    default:
      return memory_kind == kVmmMappingKind ? AccumulatorKind::kVmmMappings
                                            : AccumulatorKind::kDeviceAllocations;
  }
}

// The oldest (smallest serial) k handles, oldest first.
std::vector<HandleExample> Oldest(const Context& ctx, std::vector<LiveHandle> live, size_t k) {
  const size_t keep = std::min(k, live.size());
  std::partial_sort(live.begin(), live.begin() + static_cast<std::ptrdiff_t>(keep), live.end(),
                    [](const LiveHandle& x, const LiveHandle& y) { return x.serial < y.serial; });
  std::vector<HandleExample> out;
  for (size_t i = 0; i < keep; ++i) {
    const LiveHandle& h = live[i];
    out.push_back(
        {h.address, h.serial, h.size_bytes, ctx.ApiName(h.api), h.born, h.ts_ns, h.freed});
  }
  return out;
}

}  // namespace

void AllocationCandidates(Context& ctx, RankReport* report, std::vector<Candidate>* out) {
  const Aggregates& a = ctx.a;
  const Folder& f = ctx.fold;
  const size_t n = static_cast<size_t>(f.count());
  Flow total_h, total_b;
  Series allocs_total(n, 0.0), frees_total(n, 0.0), alloc_bytes_total(n, 0.0), temps(n, 0.0);
  std::map<std::string, KeyedSeries> dims;  // dimension → key → flows
  std::vector<Group> groups;
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
    const AccumulatorKind acc_kind = KindOf(key.kind);
    const char* kind_name = Info(acc_kind).name;
    // Call sites are keyed by their label, so stacks that differ only inside framework or CUDA
    // frames are one group (Symbolizer::SiteLabel); the first stack is the evidence.
    const std::string gid = key.stack != 0
                                ? absl::StrCat(kind_name, "|s", ctx.SiteLabel(key.stack))
                                : absl::StrCat(kind_name, "|a", key.api, "|c", key.size_class);
    auto [it, inserted] = group_of.try_emplace(gid, static_cast<int>(groups.size()));
    if (inserted) {
      Group g;
      g.kind = acc_kind;
      g.stack = key.stack;
      g.key = key.stack != 0 ? ctx.SiteLabel(key.stack) : absl::StrCat(api, " ", cls);
      groups.push_back(std::move(g));
    }
    Group& g = groups[static_cast<size_t>(it->second)];
    g.handles.Add(h);
    g.bytes.Add(b);
    g.keys.push_back(static_cast<uint32_t>(k));
    group_of_key[k] = it->second;
  }
  if (!a.alloc_keys.empty()) {
    AddStateSeries(ctx, report, "live_handles", "total", "all", "handles", total_h.Level(n));
    AddStateSeries(ctx, report, "live_bytes", "total", "all", "bytes", total_b.Level(n));
    AddStateSeries(ctx, report, "allocs", "total", "all", "calls", allocs_total);
    AddStateSeries(ctx, report, "frees", "total", "all", "calls", frees_total);
    AddStateSeries(ctx, report, "alloc_bytes", "total", "all", "bytes", alloc_bytes_total);
    AddStateSeries(ctx, report, "temporaries", "total", "all", "handles", temps);
  }
  for (const auto& [dim, ks] : dims) {
    for (const auto& [name, flow] : ks.handles) {
      AddStateSeries(ctx, report, "live_handles", dim, name, "handles", flow.Level(n));
      AddStateSeries(ctx, report, "live_bytes", dim, name, "bytes", ks.bytes.at(name).Level(n));
      AddStateSeries(ctx, report, "allocs", dim, name, "calls", ks.allocs.at(name));
      AddStateSeries(ctx, report, "frees", dim, name, "calls", ks.frees.at(name));
    }
  }
  // The survivors of the loop, every group's: live at the end of the trace (leaks, and the
  // evidence of candidates), or freed only in the epilogue (tear-down; free_iteration = n).
  auto visit = [&](const LiveAlloc& live, uint64_t addr, bool freed_at_teardown) {
    const int gi = group_of_key[live.key];
    if (gi < 0)
      return;
    Group& g = groups[static_cast<size_t>(gi)];
    if (!freed_at_teardown) {
      ++g.leak_handles;
      g.leak_bytes += live.size;
    }
    g.live.push_back({addr, live.serial, live.size, a.alloc_keys[live.key].api,
                      f.IterationOf(live.slot), live.ts,
                      freed_at_teardown ? static_cast<int64_t>(n) : -2});
  };
  for (const auto& [addr, live] : a.live_allocs) visit(live, addr, false);
  for (const auto& [addr, live] : a.live_maps) visit(live, addr, false);
  for (const Aggregates::FreedAlloc& freed : a.recent_frees) {
    if (freed.handle_type < 0 && f.IterationOf(freed.free_slot) == -2 &&
        f.IterationOf(freed.live.slot) >= 0) {
      visit(freed.live, freed.addr, true);
    }
  }
  for (Group& g : groups) {
    const std::string site_key = absl::StrCat(Info(g.kind).name, ": ", g.key);
    Candidate c;
    c.kind = g.kind;
    c.key = g.key;
    c.values = g.handles.Level(n);
    c.bytes = g.bytes.Level(n);
    c.site = ctx.Site(g.stack);
    const CandidateSeriesNames& names = Info(g.kind).series;
    AddStateSeries(ctx, report, names.metric, names.dimension, site_key, "handles", c.values);
    AddStateSeries(ctx, report, names.bytes_metric, names.dimension, site_key, "bytes", c.bytes);
    AddStateSeries(ctx, report, "allocs", names.dimension, site_key, "calls", g.handles.in);
    for (uint32_t k : g.keys) {
      c.apis.push_back(ctx.ApiName(a.alloc_keys[k].api));
      c.size_classes.push_back(SizeClassLabel(a.alloc_keys[k].size_class));
    }
    for (auto* v : {&c.apis, &c.size_classes}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    if (g.leak_handles > 0) {
      std::vector<LiveHandle> leaked;
      for (const LiveHandle& h : g.live) {
        if (h.freed == -2)
          leaked.push_back(h);
      }
      LeakSite ls{std::string(Info(g.kind).name),
                  g.key,
                  g.leak_handles,
                  g.leak_bytes,
                  c.site,
                  Oldest(ctx, std::move(leaked), kLeakExamples)};
      report->leaks.handles += ls.handles;
      report->leaks.bytes += ls.bytes;
      report->leaks.by_site.push_back(std::move(ls));
    }
    c.live = std::move(g.live);
    out->push_back(std::move(c));
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

}  // namespace cuclimb::analysis::internal
