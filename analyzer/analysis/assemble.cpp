// SPDX-License-Identifier: Apache-2.0
// Assembly, part 1: identity, iterations, ranges with their decomposition, kernels, APIs and
// the per-iteration state series.
#include "analysis/assemble.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/causes.h"
#include "analysis/detection.h"
#include "interposer/format/trace_format.h"
#include "trace/reader.h"
#include "util/parallel_for.h"
#include "util/saturating.h"

namespace cuclimb::analysis {
namespace internal {

std::string Context::ApiName(uint32_t id) const {
  if (id == kLaunchApiId)
    return "cuLaunchKernel";
  if (id == 0)
    return "(unnamed)";
  return Str(id);
}

TrendOptions Context::Options(double resolution, int64_t warmup) const {
  TrendOptions o;
  o.alpha = th.alpha;
  o.min_iterations = th.min_iterations;
  o.warmup = warmup == -2 ? th.warmup : warmup;
  o.resolution = resolution;
  o.max_points = 256;
  o.max_warmup_share = th.max_warmup_share;
  return o;
}

CallSite Context::Site(uint32_t stack) const {
  CallSite s;
  s.stack_id = stack;
  if (stack == 0) {
    s.label = "(no stack)";
    return s;
  }
  const auto frames = in.reader->stacks().Get(stack);
  s.frames = sym.Frames(frames, in.reader->strings());
  s.label = sym.SiteLabel(frames, in.reader->strings());
  return s;
}

std::string Context::SiteLabel(uint32_t stack) const {
  if (stack == 0)
    return "(no stack)";
  return sym.SiteLabel(in.reader->stacks().Get(stack), in.reader->strings());
}

std::string FormatBytes(double bytes) {
  const double a = std::fabs(bytes);
  if (a < 1024)
    return absl::StrFormat("%.0f B", bytes);
  if (a < 1024.0 * 1024)
    return absl::StrFormat("%.3g KiB", bytes / 1024);
  if (a < 1024.0 * 1024 * 1024)
    return absl::StrFormat("%.3g MiB", bytes / (1024.0 * 1024));
  return absl::StrFormat("%.3g GiB", bytes / (1024.0 * 1024 * 1024));
}

std::string SizeClassLabel(uint8_t c) {
  if (c == 0)
    return "(0 B, 1 B]";
  const double hi = std::ldexp(1.0, c), lo = hi / 2;
  return absl::StrCat("(", FormatBytes(lo), ", ", FormatBytes(hi), "]");
}

std::string MemoryKindName(uint8_t kind) {
  if (kind == kVmmMappingKind)
    return "vmm_mapping";
  if (kind < static_cast<uint8_t>(format::MemoryKind::kCount))
    return format::kMemoryKindNames[kind];
  return "unknown";
}

std::string HandleTypeName(uint8_t type) {
  if (type < static_cast<uint8_t>(format::HandleType::kCount))
    return format::kHandleTypeNames[type];
  return "unknown";
}

}  // namespace internal

namespace {

using internal::Context;

void Identity(Context& ctx, RankReport* r) {
  const trace::TraceReader& rd = *ctx.in.reader;
  const Aggregates& a = ctx.a;
  TraceInfo& t = r->trace;
  t.path = ctx.in.path;
  t.form = rd.header().form == trace::TraceForm::kBinary ? "binary" : "jsonl";
  t.format = absl::StrCat(rd.header().format_major, ".", rd.header().format_minor);
  t.producer = rd.header().producer;
  t.clock = trace::ClockName(rd.header().clock);
  t.base_realtime_ns = rd.header().base_realtime_ns;
  t.status = trace::StopReasonName(rd.status().reason);
  t.status_message = rd.status().message;
  t.partial = rd.status().partial();
  t.events = rd.status().events;
  t.skipped_records = rd.status().skipped_records;
  t.first_ts_ns = a.events > 0 ? a.first_ts : 0;
  t.last_ts_ns = a.events > 0 ? a.last_ts : 0;
  t.repassed = ctx.in.repassed;
  ProcessInfo& p = r->process;
  p.pid = a.process.pid;
  p.rank = a.process.rank;
  p.cmd = ctx.Str(a.process.cmd);
  p.host = ctx.Str(a.process.host);
  p.exe = ctx.Str(a.process.exe);
  p.driver_version = a.process.driver;
  p.cupti_version = a.process.cupti;
  for (const DeviceRecord& d : a.devices) {
    p.devices.push_back({d.ordinal, ctx.Str(d.name), ctx.Str(d.uuid), d.total, d.cc});
  }
  std::sort(p.devices.begin(), p.devices.end(),
            [](const DeviceInfo& x, const DeviceInfo& y) { return x.ordinal < y.ordinal; });
  for (const auto& [tid, tr] : a.threads) {
    r->threads.push_back({tid, ctx.Str(tr.name), tr.events, tr.cuda_calls});
  }
  std::sort(r->threads.begin(), r->threads.end(), [](const ThreadInfo& x, const ThreadInfo& y) {
    return x.cuda_calls != y.cuda_calls ? x.cuda_calls > y.cuda_calls : x.tid < y.tid;
  });
}

void IterationsOf(Context& ctx, RankReport* r) {
  const SegmentChoice& c = *ctx.in.choice;
  Iterations& it = r->iterations;
  it.source = SourceName(c.source);
  it.name = c.source == IterationSource::kNone ? "" : ctx.Str(c.name);
  if (c.source == IterationSource::kLaunch && c.launch.anchor_next != 0) {
    it.name = absl::StrCat(it.name, " + ", ctx.Str(c.launch.anchor_next));
  }
  it.user_chosen = c.user;
  it.tid = c.tid;
  it.count = ctx.fold.count();
  it.period_launches = c.launch.period;
  it.spans = ctx.in.boundaries->Spans();
  if (c.source == IterationSource::kNone && !it.spans.empty()) {
    it.spans[0].start_ns = r->trace.first_ts_ns;
    it.spans[0].end_ns = r->trace.last_ts_ns;
  }
  double pro = 0, epi = 0;
  ctx.fold.Sum(ctx.a.events_per_slot, &pro, &epi);
  it.prologue_events = static_cast<uint64_t>(pro);
  it.epilogue_events = static_cast<uint64_t>(epi);
  it.why = c.why;
  for (const SegmentCandidate& sc : c.candidates) {
    IterationCandidate ic;
    ic.source = SourceName(sc.source);
    ic.name = ctx.Str(sc.name);
    if (sc.source == IterationSource::kLaunch && sc.name == c.launch.anchor &&
        c.launch.anchor_next != 0) {
      ic.name = absl::StrCat(ic.name, " + ", ctx.Str(c.launch.anchor_next));
    }
    if (sc.domain != 0)
      ic.name = absl::StrCat(ctx.Str(sc.domain), "::", ic.name);
    if (sc.source != IterationSource::kLaunch) {
      ic.origin = OriginName(sc.origin.origin);
      ic.library = sc.origin.library;
    }
    ic.tid = sc.tid;
    ic.instances = sc.instances;
    ic.depth = sc.depth;
    ic.coverage = sc.coverage;
    ic.chosen = sc.chosen;
    ic.reason = sc.reason;
    it.candidates.push_back(std::move(ic));
  }
}

Component MakeComponent(const Context& ctx, std::string name, Series ms, int64_t warmup) {
  Component c;
  c.name = std::move(name);
  c.ms = std::move(ms);
  c.trend = ComputeTrend(c.ms, ctx.Options(0, warmup));
  c.delta_ms = c.trend.tested ? c.trend.slope_per_iter * static_cast<double>(c.trend.n) : 0;
  return c;
}

double Total(const Series& s) {
  double t = 0;
  for (double v : s) t += v;
  return t;
}

void SortParts(std::vector<Component>* parts, size_t keep) {
  std::sort(parts->begin(), parts->end(), [](const Component& x, const Component& y) {
    const double tx = Total(x.ms), ty = Total(y.ms);
    if (tx != ty)
      return tx > ty;
    return x.name < y.name;
  });
  if (parts->size() <= keep)
    return;
  // Keep the largest, plus whatever grows most among the rest.
  std::vector<Component> rest(parts->begin() + static_cast<std::ptrdiff_t>(keep), parts->end());
  parts->resize(keep);
  std::sort(rest.begin(), rest.end(), [](const Component& x, const Component& y) {
    return x.delta_ms != y.delta_ms ? x.delta_ms > y.delta_ms : x.name < y.name;
  });
  for (size_t i = 0; i < rest.size() && i < 4 && rest[i].delta_ms > 0; ++i)
    parts->push_back(rest[i]);
}

std::string WhereTimeGoes(const RangeReport& r) {
  const Decomposition& d = r.decomposition;
  const double wall = d.wall.delta_ms;
  if (wall <= 0)
    return "";
  std::vector<std::pair<double, std::string>> parts;
  parts.emplace_back(d.host.delta_ms, "host time between CUDA calls");
  for (const Component& c : d.by_api)
    parts.emplace_back(c.delta_ms, absl::StrCat("inside ", c.name));
  for (const Component& c : d.by_sync)
    parts.emplace_back(c.delta_ms, absl::StrCat("waiting in ", c.name));
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string out = absl::StrFormat("of its +%.3g ms growth over the run:", wall);
  int shown = 0;
  for (const auto& [delta, what] : parts) {
    if (delta <= 0.05 * wall || shown == 3)
      break;
    absl::StrAppendFormat(&out, "%s %s +%.3g ms (%.0f%%)", shown ? "," : "", what, delta,
                          100 * delta / wall);
    ++shown;
  }
  if (shown == 0)
    absl::StrAppend(&out, " spread thinly over host time and CUDA calls");
  if (d.gpu.delta_ms > 0.05 * wall) {
    absl::StrAppendFormat(&out, "; GPU time of its kernels +%.3g ms", d.gpu.delta_ms);
    const Component* top = nullptr;
    for (const Component& k : d.by_kernel) {
      if (top == nullptr || k.delta_ms > top->delta_ms)
        top = &k;
    }
    if (top != nullptr && top->delta_ms > 0) {
      absl::StrAppendFormat(&out, " (%s +%.3g ms: a kernel getting slower on the GPU)", top->name,
                            top->delta_ms);
    }
  }
  return out;
}

// The report of range ri, or nothing when it is not reported (too rare, or no iterations).
std::optional<RangeReport> RangeOf(const Context& ctx, uint32_t ri,
                                   const std::vector<IterationSpan>& spans) {
  const Aggregates& a = ctx.a;
  const int64_t n = ctx.fold.count();
  const SegmentChoice& choice = *ctx.in.choice;
  const RangeSeries& rs = a.ranges[ri];
  RangeReport r;
  const bool pseudo = static_cast<int32_t>(ri) == a.iteration_range;
  if (pseudo) {
    // Iterations from marks or the launch period: the iteration's own span is the "range".
    r.name = "(iteration)";
    r.tid = choice.tid;
    r.count.assign(static_cast<size_t>(n), 1.0);
    for (const IterationSpan& s : spans) {
      r.total_ms.push_back(static_cast<double>(s.end_ns - s.start_ns) * 1e-6);
    }
    r.total_ms.resize(static_cast<size_t>(n), 0.0);
    if (n == 0)
      return std::nullopt;
  } else {
    r.count = ctx.fold.Sum(rs.count);
    int64_t present = 0;
    for (double c : r.count) present += c > 0;
    const bool boundary = choice.source == IterationSource::kRange && rs.name == choice.name &&
                          rs.domain == choice.domain;
    if (n == 0 || present == 0 || (!boundary && 2 * present < n))
      return std::nullopt;
    r.name = rs.domain != 0 ? absl::StrCat(ctx.Str(rs.domain), "::", ctx.Str(rs.name))
                            : ctx.Str(rs.name);
    uint64_t most = 0;
    for (const auto& [tid, cnt] : rs.instances_by_tid) {
      if (cnt > most || (cnt == most && tid < r.tid)) {
        most = cnt;
        r.tid = tid;
      }
    }
    r.total_ms = Scale(ctx.fold.Sum(rs.total_ns), 1e-6);
  }
  r.trend = ctx.TrendOf(r.total_ms, 0);
  r.climbing = r.trend.tested && r.trend.rising && r.trend.change_pct >= ctx.th.min_climb_pct;
  const int64_t w = r.trend.warmup;
  r.climb_start_iteration = r.climbing ? GrowthOnset(r.total_ms, w) : w;
  Decomposition& d = r.decomposition;
  const Series api = Scale(ctx.fold.Sum(rs.api_ns), 1e-6),
               sync = Scale(ctx.fold.Sum(rs.sync_ns), 1e-6);
  d.wall = MakeComponent(ctx, "wall", r.total_ms, w);
  d.api = MakeComponent(ctx, "api", api, w);
  d.sync = MakeComponent(ctx, "sync", sync, w);
  d.host = MakeComponent(ctx, "host", Remainder(r.total_ms, api, sync), w);
  d.gpu = MakeComponent(ctx, "gpu", Scale(ctx.fold.Sum(rs.gpu_ns), 1e-6), w);
  for (const Aggregates::Part& p : a.range_apis) {
    if (p.range == ri)
      d.by_api.push_back(
          MakeComponent(ctx, ctx.ApiName(p.name), Scale(ctx.fold.Sum(p.ns), 1e-6), w));
  }
  for (const Aggregates::Part& p : a.range_syncs) {
    if (p.range == ri)
      d.by_sync.push_back(
          MakeComponent(ctx, ctx.ApiName(p.name), Scale(ctx.fold.Sum(p.ns), 1e-6), w));
  }
  for (const Aggregates::Part& p : a.range_kernels) {
    if (p.range == ri)
      d.by_kernel.push_back(
          MakeComponent(ctx, ctx.KernelName(p.name), Scale(ctx.fold.Sum(p.ns), 1e-6), w));
  }
  SortParts(&d.by_api, 24);
  SortParts(&d.by_sync, 12);
  SortParts(&d.by_kernel, 24);
  return r;
}

void Ranges(Context& ctx, RankReport* report) {
  std::vector<std::optional<RangeReport>> ranges(ctx.a.ranges.size());
  util::ParallelFor(ranges.size(), ctx.in.jobs, [&](size_t ri) {
    ranges[ri] = RangeOf(ctx, static_cast<uint32_t>(ri), report->iterations.spans);
  });
  for (std::optional<RangeReport>& r : ranges) {
    if (r.has_value())
      report->ranges.push_back(*std::move(r));
  }
  std::sort(report->ranges.begin(), report->ranges.end(),
            [](const RangeReport& x, const RangeReport& y) {
              if (x.climbing != y.climbing)
                return x.climbing;
              if (x.trend.first != y.trend.first)
                return x.trend.first > y.trend.first;
              return x.name < y.name;
            });
  for (RangeReport& r : report->ranges) {
    if (r.climbing)
      r.where_time_goes = WhereTimeGoes(r);
  }
}

// Kernel rows in the report: the most GPU time (then launches) first. A row holds series per
// iteration, so a trace with a million distinct kernel names (JIT-generated ones) would make a
// report of gigabytes (issue #14): only the first kMaxKernelRows are listed, and a note says so.
constexpr size_t kMaxKernelRows = 2000;

bool KernelFirst(const KernelRow& x, const KernelRow& y) {
  if (x.gpu_ms != y.gpu_ms)
    return x.gpu_ms > y.gpu_ms;
  if (x.launches != y.launches)
    return x.launches > y.launches;
  return x.name < y.name;
}

void KernelsAndApis(Context& ctx, RankReport* report) {
  const Aggregates& a = ctx.a;
  // First the name and totals of every kernel (for the choice), then the series of those listed.
  std::vector<std::pair<KernelRow, size_t>> ranked(a.kernels.size());
  for (size_t k = 0; k < a.kernels.size(); ++k) {
    const KernelSeries& ks = a.kernels[k];
    KernelRow& row = ranked[k].first;
    ranked[k].second = k;
    row.name = ctx.KernelName(a.kernel_names[k]);
    double launches = 0, executions = 0;  // as double: hostile counts overflow uint64
    ks.launches.ForEach([&](uint32_t, double v) { launches += v; });
    ks.executions.ForEach([&](uint32_t, double v) { executions += v; });
    row.launches = util::SaturatingUInt64(launches);
    row.executions = util::SaturatingUInt64(executions);
    ks.gpu_ns.ForEach([&](uint32_t, double v) { row.gpu_ms += v * 1e-6; });
  }
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& x, const auto& y) { return KernelFirst(x.first, y.first); });
  if (ranked.size() > kMaxKernelRows) {
    report->notes.push_back(absl::StrFormat(
        "%d distinct kernels: the %d with the most GPU time (then launches) are listed",
        ranked.size(), kMaxKernelRows));
    ranked.resize(kMaxKernelRows);
  }
  util::ParallelFor(ranked.size(), ctx.in.jobs, [&](size_t i) {
    auto& [row, k] = ranked[i];
    const KernelSeries& ks = a.kernels[k];
    double pro = 0, epi = 0, pro2 = 0, epi2 = 0;
    row.launches_per_iter = ctx.fold.Sum(ks.launches, &pro, &epi);
    const Series execs = ctx.fold.Sum(ks.executions, &pro2, &epi2);
    const Series gpu_ns = ctx.fold.Sum(ks.gpu_ns);
    row.gpu_ms_per_iter = Scale(gpu_ns, 1e-6);
    row.mean_us.assign(gpu_ns.size(), 0.0);
    double last = -1;
    for (size_t j = 0; j < gpu_ns.size(); ++j) {
      if (execs[j] > 0)
        last = gpu_ns[j] / execs[j] / 1000.0;
      row.mean_us[j] = last;
    }
    double first_known = 0;
    for (double v : row.mean_us) {
      if (v >= 0) {
        first_known = v;
        break;
      }
    }
    for (double& v : row.mean_us) {
      if (v < 0)
        v = first_known;
    }
    if (row.executions > 0) {
      row.duration_trend = ctx.TrendOf(row.mean_us, 0);
      row.slowing =
          row.duration_trend.rising && row.duration_trend.change_pct >= ctx.th.min_climb_pct;
    }
  });
  for (auto& ranked_row : ranked) report->kernels.push_back(std::move(ranked_row.first));
  auto add_api = [&](const std::vector<uint32_t>& names, const std::vector<ApiSeries>& series) {
    const size_t from = report->apis.size();
    report->apis.resize(from + series.size());
    util::ParallelFor(series.size(), ctx.in.jobs, [&](size_t i) {
      ApiRow& row = report->apis[from + i];
      row.name = ctx.ApiName(names[i]);
      double calls = 0;
      series[i].calls.ForEach([&](uint32_t, double v) { calls += v; });
      row.calls = util::SaturatingUInt64(calls);
      series[i].ns.ForEach([&](uint32_t, double v) { row.ms += v * 1e-6; });
      row.calls_per_iter = ctx.fold.Sum(series[i].calls);
      row.ms_per_iter = Scale(ctx.fold.Sum(series[i].ns), 1e-6);
      row.trend = ctx.TrendOf(row.ms_per_iter, 0);
    });
  };
  add_api(a.api_names, a.apis);
  add_api(a.sync_names, a.syncs);
  std::sort(report->apis.begin(), report->apis.end(), [](const ApiRow& x, const ApiRow& y) {
    return x.ms != y.ms ? x.ms > y.ms : x.name < y.name;
  });
}

// Per-iteration state series that are not accumulator candidates themselves (the candidate
// sources of analysis/candidates.h build those): kernels seen, samples, copies, gauges, VMM,
// overhead.
void OtherState(Context& ctx, RankReport* report) {
  const Aggregates& a = ctx.a;
  const int64_t n = ctx.fold.count();
  auto add = [&](std::string metric, std::string dimension, std::string key, std::string unit,
                 Series s, double resolution) {
    StateSeries st{std::move(metric), std::move(dimension), std::move(key),
                   std::move(unit),   std::move(s),         {}};
    st.trend = ctx.TrendOf(st.values, resolution);
    report->state.push_back(std::move(st));
  };
  Series distinct(static_cast<size_t>(n), 0.0), fresh(static_cast<size_t>(n), 0.0),
      launches(static_cast<size_t>(n), 0.0);
  for (const KernelSeries& ks : a.kernels) {
    double pro = 0;
    const Series l = ctx.fold.Sum(ks.launches, &pro);
    bool seen = pro > 0;
    for (int64_t i = 0; i < n; ++i) {
      launches[i] += l[i];
      if (l[i] > 0) {
        distinct[i] += 1;
        if (!seen)
          fresh[i] += 1;
        seen = true;
      }
    }
  }
  add("launches", "total", "all", "launches", launches, 0.5);
  add("distinct_kernels", "total", "all", "kernels", distinct, 0.5);
  add("new_kernels", "total", "all", "kernels", fresh, 0.5);
  add("copies", "total", "all", "calls", ctx.fold.Sum(a.copies), 0.5);
  add("copy_bytes", "total", "all", "bytes", ctx.fold.Sum(a.copy_bytes), 0.5);
  add("events", "total", "all", "events", ctx.fold.Sum(a.events_per_slot), 0.5);
  if (!a.samples.empty())
    add("samples", "total", "all", "samples", ctx.fold.Sum(a.samples), 0.5);
  for (size_t g = 0; g < a.gauges.size(); ++g) {
    const GaugeKey& k = a.gauge_keys[g];
    const std::string name = ctx.Str(k.name);
    std::string key = k.pool != 0 ? absl::StrFormat("pool 0x%x", k.pool)
                                  : (k.device >= 0 ? absl::StrCat("device ", k.device) : "all");
    add(name, k.pool != 0 ? "pool" : (k.device >= 0 ? "device" : "total"), key,
        name.find("count") != std::string::npos ? "count" : "bytes", ctx.fold.Gauge(a.gauges[g]),
        0.5);
  }
  if (!a.vmm_physical_created.empty() || !a.va_reserved_delta.empty()) {
    add("vmm_physical_handles", "total", "all", "handles",
        ctx.fold.Level(a.vmm_physical_created, a.vmm_physical_released), 0.5);
    add("vmm_physical_bytes", "total", "all", "bytes",
        ctx.fold.Level(a.vmm_physical_bytes_delta, {}), 0.5);
    add("vmm_reserved_bytes", "total", "all", "bytes", ctx.fold.Level(a.va_reserved_delta, {}),
        0.5);
  }
}

}  // namespace

RankReport Assemble(const AssemblyInput& in) {
  const Boundaries& b = *in.boundaries;
  // Every series' slots are below those of the events counted per slot: map them up front.
  Context ctx{in, *in.aggregates,
              Folder(
                  b.count(), [&b](uint32_t s) { return b.IterationOfSlot(s); },
                  in.aggregates->events_per_slot.size()),
              *in.symbolizer, in.options->thresholds};
  RankReport report;
  report.index = in.index;
  Identity(ctx, &report);
  IterationsOf(ctx, &report);
  Ranges(ctx, &report);
  KernelsAndApis(ctx, &report);
  OtherState(ctx, &report);
  internal::DetectAccumulators(ctx, &report);
  internal::BuildLeaksAndMemory(ctx, &report);
  internal::AssignCauses(ctx, &report);
  std::stable_sort(report.state.begin(), report.state.end(),
                   [](const StateSeries& x, const StateSeries& y) {
                     if (x.metric != y.metric)
                       return x.metric < y.metric;
                     if (x.dimension != y.dimension)
                       return x.dimension < y.dimension;
                     return x.key < y.key;
                   });
  // Notes.
  auto note = [&](std::string s) { report.notes.push_back(std::move(s)); };
  if (report.trace.partial)
    note(absl::StrCat("partial trace: ", report.trace.status_message));
  if (report.trace.status == "no_trailer")
    note("the trace has no trailer: the program did not finish cleanly");
  if (ctx.fold.count() < ctx.th.min_iterations) {
    note(absl::StrFormat("only %d iterations: trends need at least %d", ctx.fold.count(),
                         ctx.th.min_iterations));
  }
  if (in.repassed)
    note("the iteration source changed after the first part of the trace: analysed in two passes");
  if (b.lost_pops() > 0) {
    note(absl::StrFormat(
        "%d iteration ranges began before the previous one ended (its pop was lost): "
        "each was ended at the next one's start",
        b.lost_pops()));
  }
  if (ctx.a.unmatched_pops > 0) {
    note(
        absl::StrFormat("%d NVTX pops or range ends without an open range (events lost or "
                        "recording started mid-range)",
                        ctx.a.unmatched_pops));
  }
  if (b.ignored_boundaries() > 0)
    note(absl::StrFormat("%d iteration boundaries out of time order were ignored",
                         b.ignored_boundaries()));
  if (ctx.a.recording_pauses > 0)
    note(absl::StrFormat("recording was paused %d times: iterations inside pauses have no events",
                         ctx.a.recording_pauses));
  bool launches = false, kernels = false;
  for (const KernelRow& k : report.kernels) {
    launches |= k.launches > 0;
    kernels |= k.executions > 0;
  }
  if (launches && !kernels)
    note("no GPU kernel records: GPU time is unknown (record with CUCLIMB_KERNELS=all)");
  for (std::string& n : ctx.sym.Notes()) note(std::move(n));  // symbols missing from labels
  return report;
}

}  // namespace cuclimb::analysis
