// SPDX-License-Identifier: Apache-2.0
// Assembly, part 3: temporaries and lifetimes, peak memory, fragmentation, profiler overhead.
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/assemble.h"
#include "analysis/flow.h"
#include "util/saturating.h"

namespace cuclimb::analysis::internal {

void BuildLeaksAndMemory(Context& ctx, RankReport* report) {
  const Aggregates& a = ctx.a;
  const Folder& f = ctx.fold;
  const size_t n = static_cast<size_t>(f.count());
  // Temporaries and lifetimes.
  Temporaries& t = report->temporaries;
  t.count.assign(n, 0.0);
  t.bytes.assign(n, 0.0);
  for (size_t k = 0; k < a.alloc_series.size(); ++k) {
    if (a.alloc_keys[k].kind == kVmmMappingKind)
      continue;
    t.count = Sum(t.count, f.Sum(a.alloc_series[k].temps));
    t.bytes = Sum(t.bytes, f.Sum(a.alloc_series[k].temp_bytes));
  }
  double total = 0, total_bytes = 0;  // as double: hostile sizes overflow uint64
  for (double v : t.count) total += v;
  for (double v : t.bytes) total_bytes += v;
  t.total = util::SaturatingUInt64(total);
  t.total_bytes = util::SaturatingUInt64(total_bytes);
  for (const auto& [age, count] : a.lifetime_iterations) {
    std::string bucket;
    if (age < 0)
      bucket = "from_prologue";
    else if (age == 0)
      bucket = "same";
    else if (age == 1)
      bucket = "1";
    else {
      const int lo = 1 << (31 - __builtin_clz(static_cast<unsigned>(age)));
      bucket = absl::StrCat(lo, "-", 2 * lo - 1);
    }
    t.lifetime_histogram[bucket] += count;
  }
  t.lifetime_histogram["never"] = a.live_allocs.size() + a.live_maps.size();
  // Peak.
  Peak& p = report->peak;
  p.live_bytes = static_cast<uint64_t>(std::max<int64_t>(a.peak_bytes, 0));
  p.ts_ns = a.peak_ts;
  p.iteration = a.peak_bytes > 0 ? f.IterationOf(a.peak_slot) : 0;
  for (int k = 0; k < 16; ++k) {
    if (a.peak_by_kind[k] > 0)
      p.by_kind[MemoryKindName(static_cast<uint8_t>(k))] = static_cast<uint64_t>(a.peak_by_kind[k]);
  }
  p.live_bytes_per_iter = f.Max(a.peak_per_slot);
  for (const StateSeries& s : report->state) {
    if (s.metric == "live_bytes" && s.dimension == "total") {
      for (size_t i = 0; i < n; ++i)
        p.live_bytes_per_iter[i] = std::max(p.live_bytes_per_iter[i], s.values[i]);
    }
  }
  // Fragmentation: pools from gauges, heaps from registered size vs live regions.
  std::map<uint64_t, PoolFragmentation> pools;
  for (size_t g = 0; g < a.gauges.size(); ++g) {
    const std::string name(ctx.in.reader->Str(a.gauge_keys[g].name));
    if (name != "pool.reserved" && name != "pool.used")
      continue;
    PoolFragmentation& pf = pools[a.gauge_keys[g].pool];
    pf.pool = absl::StrFormat("0x%x", a.gauge_keys[g].pool);
    (name == "pool.reserved" ? pf.reserved_bytes : pf.used_bytes) = f.Gauge(a.gauges[g]);
  }
  for (auto& [pool, pf] : pools) {
    if (pf.reserved_bytes.empty())
      pf.reserved_bytes.assign(n, 0.0);
    if (pf.used_bytes.empty())
      pf.used_bytes.assign(n, 0.0);
    if (n > 0 && pf.reserved_bytes.back() > 0)
      pf.last_fragmentation = 1 - pf.used_bytes.back() / pf.reserved_bytes.back();
    report->fragmentation.pools.push_back(std::move(pf));
  }
  for (const HeapSeries& hs : a.heaps) {
    if (hs.size == 0)
      continue;
    PoolFragmentation pf;
    pf.pool = absl::StrFormat("0x%x", hs.heap);
    pf.reserved_bytes.assign(n, static_cast<double>(hs.size));
    pf.used_bytes = FoldFlow(f, hs.bytes, hs.free_bytes).Level(n);
    if (n > 0)
      pf.last_fragmentation = 1 - pf.used_bytes.back() / static_cast<double>(hs.size);
    report->fragmentation.heaps.push_back(std::move(pf));
  }
  // Overhead and drops.
  Overhead& o = report->overhead;
  o.self_ms = Scale(f.Sum(a.overhead_ns), 1e-6);
  a.overhead_ns.ForEach([&](uint32_t, double v) { o.self_ms_total += v * 1e-6; });
  double recorded = 0;  // summed as double: per-slot counts of a hostile trace reach 2^64
  a.overhead_events.ForEach([&](uint32_t, double v) { recorded += v; });
  o.recorded_events = util::SaturatingUInt64(recorded);
  // Differences of timestamps in double: a trace's timestamps may span more than int64 holds.
  double wall_ms = 0;
  for (const IterationSpan& s : report->iterations.spans)
    wall_ms += (static_cast<double>(s.end_ns) - static_cast<double>(s.start_ns)) * 1e-6;
  if (wall_ms <= 0)
    wall_ms = (static_cast<double>(report->trace.last_ts_ns) -
               static_cast<double>(report->trace.first_ts_ns)) *
              1e-6;
  o.self_pct_of_wall = wall_ms > 0 ? 100.0 * o.self_ms_total / wall_ms : 0;
  o.dropped = ctx.in.reader->trailer() ? ctx.in.reader->trailer()->value : 0;
  for (const auto& [reason, count] : a.drops_by_reason) o.drops_by_reason[ctx.Str(reason)] += count;
  o.drops = f.Sum(a.drops);
  o.recording_pauses = a.recording_pauses;
  // The cost per recorded event, not per iteration: a program whose iterations make more calls
  // costs the profiler more per iteration without the profiler getting any slower.
  const Series events = f.Sum(a.overhead_events), self_ns = f.Sum(a.overhead_ns);
  o.self_ns_per_event.assign(n, 0.0);
  double last = -1;
  for (size_t i = 0; i < n; ++i) {
    if (events[i] > 0)
      last = self_ns[i] / events[i];
    o.self_ns_per_event[i] = last;
  }
  const auto known = std::find_if(o.self_ns_per_event.begin(), o.self_ns_per_event.end(),
                                  [](double v) { return v >= 0; });
  const double first_known = known != o.self_ns_per_event.end() ? *known : 0;
  for (double& v : o.self_ns_per_event) v = v < 0 ? first_known : v;
  if (o.self_ms_total > 0 && o.recorded_events > 0) {
    const Trend tr = ctx.TrendOf(o.self_ns_per_event, 0);
    o.ns_per_event_first = tr.first;
    o.ns_per_event_last = tr.last;
    // Material only when the extra cost per event, times the events of an iteration, is a
    // material share of the iteration's time (as for a range's climb).
    double mean_events = 0;
    for (double v : events) mean_events += v / static_cast<double>(std::max<size_t>(n, 1));
    const double extra_ms = (tr.last - tr.first) * mean_events * 1e-6;
    const double iteration_ms = n > 0 ? wall_ms / static_cast<double>(n) : 0;
    o.overhead_climbing = tr.rising && tr.change_pct >= ctx.th.min_climb_pct &&
                          extra_ms >= ctx.th.min_iteration_share_pct / 100 * iteration_ms;
    if (o.overhead_climbing) {
      report->notes.push_back(absl::StrFormat(
          "cuclimb's own cost per recorded event climbs %.0f%% (%.3g → %.3g ns, %.3g ms more per "
          "iteration): check that the climb is not the profiler's",
          tr.change_pct, tr.first, tr.last, extra_ms));
    }
  }
  if (o.dropped > 0) {
    report->notes.push_back(absl::StrFormat(
        "%d events were dropped while recording: counts are lower bounds", o.dropped));
  }
}

}  // namespace cuclimb::analysis::internal
