// SPDX-License-Identifier: Apache-2.0
// Report → JSON. Field meanings: docs/report-schema.md.
#include "report/json_report.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "report/headline.h"
#include "util/parallel_for.h"

namespace cuclimb::analysis {

nlohmann::ordered_json JsonNumber(double v) {
  if (!std::isfinite(v) || v == 0)
    return 0;
  // to_chars with a precision is printf's %.6g, and from_chars is strtod, both exact: the same
  // number as snprintf + strtod, several times faster (a report of 8 ranks holds millions).
  char buf[32];
  const std::to_chars_result text =
      std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, 6);
  double r = 0;
  if (std::from_chars(buf, text.ptr, r).ec != std::errc())
    r = std::strtod(std::string(buf, text.ptr).c_str(), nullptr);  // out of range: as strtod does
  if (r == std::trunc(r) && std::fabs(r) < 9.0e15)
    return static_cast<int64_t>(r);
  return r;
}

namespace {

using Json = nlohmann::ordered_json;

nlohmann::ordered_json R(double v) {
  return JsonNumber(v);
}

Json Arr(const Series& s) {
  Json a = Json::array();
  for (double v : s) a.push_back(R(v));
  return a;
}

// Iterations without GPU records: kernels were launched but none was timed (kernel timing is
// sampled, or off). GPU series hold null there: unknown, not zero (report-schema.md "Gaps").
using GpuGaps = std::vector<bool>;

GpuGaps GpuGapsOf(const RankReport& r) {
  const size_t n = static_cast<size_t>(std::max<int64_t>(r.iterations.count, 0));
  std::vector<double> launches(n, 0), gpu(n, 0);
  for (const KernelRow& k : r.kernels) {
    for (size_t i = 0; i < n && i < k.launches_per_iter.size(); ++i)
      launches[i] += k.launches_per_iter[i];
    for (size_t i = 0; i < n && i < k.gpu_ms_per_iter.size(); ++i) gpu[i] += k.gpu_ms_per_iter[i];
  }
  GpuGaps gaps(n, false);
  for (size_t i = 0; i < n; ++i) gaps[i] = launches[i] > 0 && gpu[i] <= 0;
  return gaps;
}

// A GPU series: null in the gaps.
Json GpuArr(const Series& s, const GpuGaps& gaps) {
  Json a = Json::array();
  for (size_t i = 0; i < s.size(); ++i)
    a.push_back(i < gaps.size() && gaps[i] ? Json(nullptr) : R(s[i]));
  return a;
}

Json TrendJson(const Trend& t) {
  return Json{{"tested", t.tested},
              {"warmup", t.warmup},
              {"n", t.n},
              {"first", R(t.first)},
              {"last", R(t.last)},
              {"change_pct", R(t.change_pct)},
              {"slope_per_iter", R(t.slope_per_iter)},
              {"tail_slope_per_iter", R(t.tail_slope_per_iter)},
              {"p_value", R(t.p_value)},
              {"z", R(t.mk_z)},
              {"tau", R(t.tau)},
              {"rising", t.rising},
              {"falling", t.falling}};
}

Json ComponentJson(const Component& c) {
  return Json{{"name", c.name},
              {"delta_ms", R(c.delta_ms)},
              {"trend", TrendJson(c.trend)},
              {"ms", Arr(c.ms)}};
}

Json Components(const std::vector<Component>& v) {
  Json a = Json::array();
  for (const Component& c : v) a.push_back(ComponentJson(c));
  return a;
}

Json GpuComponents(const std::vector<Component>& v, const GpuGaps& gaps) {
  Json a = Json::array();
  for (const Component& c : v) {
    a.push_back(ComponentJson(c));
    a.back()["ms"] = GpuArr(c.ms, gaps);
  }
  return a;
}

Json WarmupJson(const WarmupChoice& w) {
  return Json{{"iterations", w.iterations},
              {"automatic", w.automatic},
              {"wanted", w.wanted},
              {"max_share", R(w.max_share)},
              {"capped", w.capped},
              {"series", w.series},
              {"why", w.why}};
}

Json CauseJson(const Cause& c, bool with_range) {
  Json j{{"kind", c.kind}, {"accumulator", c.accumulator}, {"verdict", c.verdict}};
  if (with_range)
    j["range"] = c.range;
  j["summary"] = c.summary;
  return j;
}

Json IterationsJson(const Iterations& it, bool spans) {
  Json j{{"source", it.source},
         {"count", it.count},
         {"name", it.name},
         {"user_chosen", it.user_chosen},
         {"tid", it.tid},
         {"period_launches", it.period_launches},
         {"prologue_events", it.prologue_events},
         {"epilogue_events", it.epilogue_events},
         {"why", it.why},
         {"warmup", WarmupJson(it.warmup)}};
  Json candidates = Json::array();
  for (const IterationCandidate& c : it.candidates) {
    candidates.push_back(Json{{"source", c.source},
                              {"name", c.name},
                              {"origin", c.origin},
                              {"library", c.library},
                              {"tid", c.tid},
                              {"instances", c.instances},
                              {"depth", c.depth},
                              {"coverage", R(c.coverage)},
                              {"chosen", c.chosen},
                              {"reason", c.reason}});
  }
  j["candidates"] = std::move(candidates);
  if (spans) {
    Json s = Json::array();
    for (const IterationSpan& sp : it.spans)
      s.push_back(Json::array({sp.start_ns, sp.end_ns, sp.payload}));
    j["spans"] = std::move(s);
  }
  return j;
}

// A range across ranks (several traces only).
Json ClimbByRankJson(const RangeByRank& b) {
  Json ranks = Json::array();
  for (const RankClimb& c : b.ranks) {
    ranks.push_back(Json{{"rank", c.rank},
                         {"index", c.index},
                         {"role", c.role},
                         {"present", c.present},
                         {"climbing", c.climbing},
                         {"first_ms", R(c.trend.first)},
                         {"last_ms", R(c.trend.last)},
                         {"climb_pct", R(c.trend.change_pct)},
                         {"p_value", R(c.trend.p_value)},
                         {"wall_ms_per_iter", R(c.wall_ms_per_iter)},
                         {"own_ms_per_iter", R(c.own_ms_per_iter)},
                         {"wait_ms_per_iter", R(c.wait_ms_per_iter)},
                         {"host_ms_per_iter", R(c.host_ms_per_iter)},
                         {"api_ms_per_iter", R(c.api_ms_per_iter)},
                         {"sync_ms_per_iter", R(c.sync_ms_per_iter)},
                         {"compute_ms_per_iter", R(c.compute_ms_per_iter)},
                         {"collective_ms_per_iter", R(c.collective_ms_per_iter)},
                         {"collectives", c.collectives},
                         {"collectives_timed", c.collectives_timed}});
  }
  return Json{{"pattern", b.pattern},
              {"straggler", b.straggler >= 0 ? Json(b.straggler) : Json(nullptr)},
              {"inferred", b.inferred},
              {"climbing", b.climbing},
              {"waiting", b.waiting},
              {"summary", b.summary},
              {"ranks", std::move(ranks)}};
}

Json StragglerJson(const Straggler& s) {
  if (!s.found)
    return nullptr;
  Json waiting = Json::array();
  for (const StragglerWait& w : s.waiting) {
    waiting.push_back(Json{{"rank", w.rank},
                           {"index", w.index},
                           {"climb_pct", R(w.climb_pct)},
                           {"wait_ms_per_iter", R(w.wait_ms_per_iter)},
                           {"collective_ms_per_iter", R(w.collective_ms_per_iter)},
                           {"sync_ms_per_iter", R(w.sync_ms_per_iter)},
                           {"collectives_timed", w.collectives_timed},
                           {"collective", w.collective},
                           {"wait_call", w.wait_call}});
  }
  return Json{{"rank", s.rank},
              {"index", s.index},
              {"inferred", s.inferred},
              {"range", s.range},
              {"climb_pct", R(s.climb_pct)},
              {"own_ms_per_iter", R(s.own_ms_per_iter)},
              {"where", s.where},
              {"where_detail", s.where_detail},
              {"accumulators", s.accumulators},
              {"extra_growth_per_iter", R(s.extra_growth_per_iter)},
              {"unit", s.unit},
              {"waiting", std::move(waiting)},
              {"wait_share", R(s.wait_share)},
              {"summary", s.summary}};
}

Json RangeSummary(const RangeReport& r) {
  Json j{{"name", r.name},
         {"first_ms", R(r.trend.first)},
         {"last_ms", R(r.trend.last)},
         {"climb_pct", R(r.trend.change_pct)},
         {"slope_ms_per_iter", R(r.trend.slope_per_iter)},
         {"p_value", R(r.trend.p_value)},
         {"climbing", r.climbing},
         {"tested", r.trend.tested},
         {"warmup", r.trend.warmup},
         {"iteration_share_pct", R(r.iteration_share_pct)},
         {"material", r.material},
         {"steady", r.steady},
         {"climb_start_iteration", r.climb_start_iteration},
         {"sets_verdict", r.sets_verdict},
         {"cause", CauseJson(r.cause, false)},
         {"explained_by", r.explained_by},
         {"where_time_goes", r.where_time_goes}};
  if (!r.by_rank.pattern.empty())
    j["climb_by_rank"] = ClimbByRankJson(r.by_rank);
  return j;
}

Json RangeFull(const RangeReport& r, const GpuGaps& gaps) {
  Json j = RangeSummary(r);
  j["tid"] = r.tid;
  j["trend"] = TrendJson(r.trend);
  j["total_ms"] = Arr(r.total_ms);
  j["count"] = Arr(r.count);
  const Decomposition& d = r.decomposition;
  j["decomposition"] =
      Json{{"wall", ComponentJson(d.wall)},    {"api", ComponentJson(d.api)},
           {"sync", ComponentJson(d.sync)},    {"host", ComponentJson(d.host)},
           {"gpu", ComponentJson(d.gpu)},      {"by_api", Components(d.by_api)},
           {"by_sync", Components(d.by_sync)}, {"by_kernel", GpuComponents(d.by_kernel, gaps)}};
  j["decomposition"]["gpu"]["ms"] = GpuArr(d.gpu.ms, gaps);
  return j;
}

Json SiteJson(const CallSite& s) {
  return Json{{"stack_id", s.stack_id}, {"label", s.label}, {"frames", s.frames}};
}

Json ExamplesJson(const std::vector<HandleExample>& v) {
  Json a = Json::array();
  for (const HandleExample& e : v) {
    char addr[24];
    std::snprintf(addr, sizeof(addr), "0x%llx", static_cast<unsigned long long>(e.address));
    a.push_back(
        Json{{"address", addr},
             {"serial", e.serial},
             {"size_bytes", e.size_bytes},
             {"api", e.api},
             {"alloc_iteration", e.alloc_iteration},
             {"alloc_ts_ns", e.alloc_ts_ns},
             {"free_iteration", e.free_iteration == -2 ? Json(nullptr) : Json(e.free_iteration)}});
  }
  return a;
}

Json AccumulatorJson(const Accumulator& a, const std::vector<int>* ranks) {
  Json ex = Json::array();
  for (const Explanation& e : a.explanations) {
    ex.push_back(Json{{"range", e.range},
                      {"verdict", e.verdict},
                      {"share", R(e.share)},
                      {"r", R(e.r)},
                      {"r_index", R(e.r_index)},
                      {"partial_r", R(e.partial_r)},
                      {"partial_p", R(e.partial_p)},
                      {"separation", R(e.separation)},
                      {"lag", R(e.lag)},
                      {"onset_aligned", e.onset_aligned},
                      {"unique", e.unique},
                      {"mechanism", e.mechanism},
                      {"dose", e.dose},
                      {"grounds", e.grounds},
                      {"reason", e.reason}});
  }
  Json evidence{{"summary", a.evidence},
                {"first", R(a.trend.first)},
                {"last", R(a.trend.last)},
                {"slope", R(a.trend.slope_per_iter)},
                {"p_value", R(a.trend.p_value)},
                {"growth_start_iteration", a.growth_start_iteration},
                {"bytes_per_iter", R(a.bytes_per_iter)},
                {"trend", TrendJson(a.trend)},
                {"call_site", SiteJson(a.site)},
                {"apis", a.apis},
                {"size_classes", a.size_classes},
                {"examples", ExamplesJson(a.examples)},
                {"explanations", std::move(ex)},
                {"series", Arr(a.values)},
                {"bytes_series", Arr(a.bytes)},
                {"survivors_by_alloc_iteration", Arr(a.survivors_by_alloc_iteration)}};
  Json j{{"rank", a.rank},
         {"kind", a.kind},
         {"key", a.key},
         {"id", a.id},
         {"growth_per_iter", R(a.growth_per_iter)},
         {"unit", a.unit},
         {"p_value", R(a.p_value)},
         {"explains", a.explains},
         {"likely_cause_of", a.likely_cause_of},
         {"score", R(a.score)}};
  if (ranks != nullptr)
    j["ranks"] = *ranks;
  if (!a.by_rank.empty()) {
    Json by_rank = Json::array();
    for (const AccumulatorOnRank& on : a.by_rank) {
      by_rank.push_back(
          Json{{"rank", on.rank},
               {"index", on.index},
               {"lives", on.lives},
               {"growth_per_iter", on.measured ? R(on.growth_per_iter) : Json(nullptr)},
               {"bytes_per_iter", on.measured ? R(on.bytes_per_iter) : Json(nullptr)},
               {"p_value", R(on.p_value)},
               {"explains", on.explains}});
    }
    j["by_rank"] = std::move(by_rank);
  }
  j["evidence"] = std::move(evidence);
  return j;
}

Json Accumulators(const std::vector<Accumulator>& v, const Report* report) {
  Json a = Json::array();
  for (const Accumulator& acc : v) {
    const std::vector<int>* ranks = nullptr;
    if (report != nullptr) {
      auto it = report->accumulator_ranks.find(acc.id);
      if (it != report->accumulator_ranks.end())
        ranks = &it->second;
    }
    a.push_back(AccumulatorJson(acc, ranks));
  }
  return a;
}

Json RankJson(const RankReport& r) {
  const TraceInfo& t = r.trace;
  Json j;
  j["index"] = r.index;
  j["trace"] = Json{{"path", t.path},
                    {"form", t.form},
                    {"format", t.format},
                    {"producer", t.producer},
                    {"clock", t.clock},
                    {"base_realtime_ns", t.base_realtime_ns},
                    {"status", t.status},
                    {"status_message", t.status_message},
                    {"partial", t.partial},
                    {"events", t.events},
                    {"skipped_records", t.skipped_records},
                    {"first_ts_ns", t.first_ts_ns},
                    {"last_ts_ns", t.last_ts_ns},
                    {"repassed", t.repassed}};
  Json devices = Json::array();
  for (const DeviceInfo& d : r.process.devices) {
    devices.push_back(Json{{"ordinal", d.ordinal},
                           {"name", d.name},
                           {"uuid", d.uuid},
                           {"total_bytes", d.total_bytes},
                           {"compute_capability", d.compute_capability}});
  }
  j["process"] = Json{{"pid", r.process.pid},
                      {"rank", r.process.rank},
                      {"cmd", r.process.cmd},
                      {"host", r.process.host},
                      {"exe", r.process.exe},
                      {"driver_version", r.process.driver_version},
                      {"cupti_version", r.process.cupti_version},
                      {"devices", std::move(devices)}};
  Json threads = Json::array();
  for (const ThreadInfo& th : r.threads) {
    threads.push_back(Json{
        {"tid", th.tid}, {"name", th.name}, {"events", th.events}, {"cuda_calls", th.cuda_calls}});
  }
  j["threads"] = std::move(threads);
  j["iterations"] = IterationsJson(r.iterations, true);
  j["climbing"] = r.climbing;
  j["cause"] = CauseJson(r.cause, true);
  const MachineDrift& m = r.machine;
  j["machine"] = Json{{"detected", m.detected},
                      {"kernel_change_pct", R(m.kernel_change_pct)},
                      {"api_change_pct", R(m.api_change_pct)},
                      {"host_change_pct", R(m.host_change_pct)},
                      {"kernels", m.kernels},
                      {"apis", m.apis},
                      {"scaling_together", m.scaling_together},
                      {"level_shift_reverses", m.level_shift_reverses},
                      {"summary", m.summary}};
  Json ranges = Json::array();
  const GpuGaps gaps = GpuGapsOf(r);
  for (const RangeReport& rr : r.ranges) ranges.push_back(RangeFull(rr, gaps));
  j["ranges"] = std::move(ranges);
  j["accumulators"] = Accumulators(r.accumulators, nullptr);
  Json kernels = Json::array();
  for (const KernelRow& k : r.kernels) {
    kernels.push_back(Json{{"name", k.name},
                           {"launches", k.launches},
                           {"executions", k.executions},
                           {"gpu_ms", R(k.gpu_ms)},
                           {"slowing", k.slowing},
                           {"duration_trend", TrendJson(k.duration_trend)},
                           {"launches_per_iter", Arr(k.launches_per_iter)},
                           {"gpu_ms_per_iter", GpuArr(k.gpu_ms_per_iter, gaps)},
                           {"mean_us", GpuArr(k.mean_us, gaps)}});
  }
  j["kernels"] = std::move(kernels);
  Json apis = Json::array();
  for (const ApiRow& a : r.apis) {
    apis.push_back(Json{{"name", a.name},
                        {"calls", a.calls},
                        {"ms", R(a.ms)},
                        {"trend", TrendJson(a.trend)},
                        {"calls_per_iter", Arr(a.calls_per_iter)},
                        {"ms_per_iter", Arr(a.ms_per_iter)}});
  }
  j["apis"] = std::move(apis);
  Json state = Json::array();
  for (const StateSeries& s : r.state) {
    state.push_back(Json{{"metric", s.metric},
                         {"dimension", s.dimension},
                         {"key", s.key},
                         {"unit", s.unit},
                         {"trend", TrendJson(s.trend)},
                         {"values", Arr(s.values)}});
  }
  j["state"] = std::move(state);
  Json leaks_sites = Json::array();
  for (const LeakSite& l : r.leaks.by_site) {
    leaks_sites.push_back(Json{{"kind", l.kind},
                               {"key", l.key},
                               {"handles", l.handles},
                               {"bytes", l.bytes},
                               {"call_site", SiteJson(l.site)},
                               {"examples", ExamplesJson(l.examples)}});
  }
  j["leaks"] = Json{{"handles", r.leaks.handles},
                    {"bytes", r.leaks.bytes},
                    {"by_site", std::move(leaks_sites)},
                    {"handles_by_type", r.leaks.handles_by_type},
                    {"unmatched_frees", r.leaks.unmatched_frees},
                    {"replaced_allocations", r.leaks.replaced_allocations},
                    {"activity_duplicates", r.leaks.activity_duplicates}};
  j["temporaries"] = Json{{"total", r.temporaries.total},
                          {"total_bytes", r.temporaries.total_bytes},
                          {"lifetime_histogram", r.temporaries.lifetime_histogram},
                          {"count", Arr(r.temporaries.count)},
                          {"bytes", Arr(r.temporaries.bytes)}};
  j["peak"] = Json{{"live_bytes", r.peak.live_bytes},
                   {"ts_ns", r.peak.ts_ns},
                   {"iteration", r.peak.iteration},
                   {"by_kind", r.peak.by_kind},
                   {"live_bytes_per_iter", Arr(r.peak.live_bytes_per_iter)}};
  auto frag = [](const std::vector<PoolFragmentation>& v) {
    Json a = Json::array();
    for (const PoolFragmentation& p : v) {
      a.push_back(Json{{"pool", p.pool},
                       {"last_fragmentation", R(p.last_fragmentation)},
                       {"reserved_bytes", Arr(p.reserved_bytes)},
                       {"used_bytes", Arr(p.used_bytes)}});
    }
    return a;
  };
  j["fragmentation"] =
      Json{{"pools", frag(r.fragmentation.pools)}, {"heaps", frag(r.fragmentation.heaps)}};
  const Overhead& o = r.overhead;
  j["overhead"] = Json{{"self_ms_total", R(o.self_ms_total)},
                       {"self_pct_of_wall", R(o.self_pct_of_wall)},
                       {"recorded_events", o.recorded_events},
                       {"ns_per_event_first", R(o.ns_per_event_first)},
                       {"ns_per_event_last", R(o.ns_per_event_last)},
                       {"dropped", o.dropped},
                       {"drops_by_reason", o.drops_by_reason},
                       {"recording_pauses", o.recording_pauses},
                       {"overhead_climbing", o.overhead_climbing},
                       {"self_ms", Arr(o.self_ms)},
                       {"self_ns_per_event", Arr(o.self_ns_per_event)},
                       {"drops", Arr(o.drops)}};
  j["notes"] = r.notes;
  return j;
}

Json HeadlineJson(const Headline& h) {
  Json next = Json::array();
  for (const NextStep& n : h.next) next.push_back(Json{{"why", n.why}, {"command", n.command}});
  return Json{{"what", h.what},
              {"cause", h.cause},
              {"where", h.where},
              {"accumulator", h.accumulator != nullptr ? Json(h.accumulator->id) : Json(nullptr)},
              {"range", h.range != nullptr ? Json(h.range->name) : Json(nullptr)},
              {"next", std::move(next)}};
}

bool IsNumberLine(std::string_view line) {
  size_t i = line.find_first_not_of(' ');
  if (i == std::string_view::npos)
    return false;
  line.remove_prefix(i);
  if (!line.empty() && line.back() == ',')
    line.remove_suffix(1);
  if (line.empty())
    return false;
  if (line == "null")
    return true;
  for (char c : line) {
    if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'))
      return false;
  }
  return true;
}

// nlohmann puts every array element on its own line; series read better (and the file is
// several times smaller) with arrays of numbers on one line.
std::string CompactNumberArrays(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  size_t pos = 0;
  while (pos < in.size()) {
    size_t eol = in.find('\n', pos);
    if (eol == std::string::npos)
      eol = in.size();
    const std::string_view line(in.data() + pos, eol - pos);
    out.append(line);
    pos = eol + 1;
    if (line.empty() || line.back() != '[') {
      if (eol < in.size())
        out.push_back('\n');
      continue;
    }
    // Collect the following number lines up to the closing bracket.
    size_t scan = pos;
    std::string items;
    bool all_numbers = true;
    size_t close_end = std::string::npos;
    while (scan < in.size()) {
      size_t e = in.find('\n', scan);
      if (e == std::string::npos)
        e = in.size();
      const std::string_view l(in.data() + scan, e - scan);
      const size_t first = l.find_first_not_of(' ');
      if (first != std::string_view::npos && l[first] == ']') {
        items.append(l.substr(first));
        close_end = e;
        break;
      }
      if (!IsNumberLine(l)) {
        all_numbers = false;
        break;
      }
      items.append(l.substr(first));
      if (items.back() == ',')
        items.push_back(' ');
      scan = e + 1;
    }
    if (all_numbers && close_end != std::string::npos) {
      out.append(items);
      pos = close_end + 1;
    }
    if (pos <= in.size())
      out.push_back('\n');
  }
  while (!out.empty() && out.back() == '\n' && in.back() != '\n') out.pop_back();
  return out;
}

}  // namespace

nlohmann::ordered_json ReportJson(const Report& report, bool per_rank, int jobs) {
  Json j;
  j["schema"] = report.schema;
  j["verdict"] = report.verdict;
  j["cause"] = CauseJson(report.cause, true);
  j["partial"] = report.partial;
  const Thresholds& t = report.thresholds;
  j["thresholds"] = Json{{"alpha", R(t.alpha)},
                         {"min_climb_pct", R(t.min_climb_pct)},
                         {"min_iteration_share_pct", R(t.min_iteration_share_pct)},
                         {"warmup", t.warmup < 0 ? Json("auto") : Json(t.warmup)},
                         {"max_warmup_share", R(t.max_warmup_share)},
                         {"min_iterations", t.min_iterations},
                         {"min_share", R(t.min_share)},
                         {"min_separation", R(t.min_separation)}};
  j["iterations"] = IterationsJson(report.iterations, false);
  j["headline"] = HeadlineJson(MakeHeadline(report));
  Json ranges = Json::array();
  for (const RangeReport& r : report.ranges) ranges.push_back(RangeSummary(r));
  j["ranges"] = std::move(ranges);
  j["accumulators"] = Accumulators(report.accumulators, &report);
  if (report.ranks.size() > 1) {
    j["straggler"] = StragglerJson(report.straggler);
    j["job_ranks"] = report.job_ranks;
  }
  j["notes"] = report.notes;
  if (per_rank) {
    std::vector<Json> sections(report.ranks.size());
    util::ParallelFor(sections.size(), jobs,
                      [&](size_t i) { sections[i] = RankJson(report.ranks[i]); });
    Json ranks = Json::array();
    for (Json& r : sections) ranks.push_back(std::move(r));
    j["ranks"] = std::move(ranks);
  }
  return j;
}

namespace {

// `j` written as DumpJson writes it, as if it stood `depth` levels deep: with an indent, every line
// is indented by depth × indent more (a JSON string holds no raw newline, so lines are the
// layout's).
std::string DumpAt(const Json& j, int indent, int depth) {
  std::string text = j.dump(indent, ' ', false, Json::error_handler_t::replace);
  if (indent < 0)
    return text;
  text = CompactNumberArrays(text);
  if (depth == 0)
    return text;
  const std::string margin(static_cast<size_t>(indent * depth), ' ');
  std::string out = margin;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out.push_back(c);
    if (c == '\n')
      out.append(margin);
  }
  return out;
}

// The top-level object's text with a last member "ranks" holding the already written sections,
// and the final newline: what nlohmann writes for the whole object, byte for byte. The text is
// reserved once and each section freed once copied, so a job's report is held about once while
// it is spliced, not three times (the sections, a doubling buffer and a copy with the newline):
// with many ranks the report is most of the command's memory.
std::string WithRanks(std::string top, std::vector<std::string>* ranks, int indent) {
  size_t total = top.size() + 16 + static_cast<size_t>(std::max(indent, 0));
  for (const std::string& r : *ranks) total += r.size() + 2;
  top.reserve(total);
  auto take = [ranks](size_t i, std::string* out) {
    out->append((*ranks)[i]);
    std::string().swap((*ranks)[i]);
  };
  if (indent < 0) {
    top.pop_back();  // the closing brace
    top.append(",\"ranks\":[");
    for (size_t i = 0; i < ranks->size(); ++i) {
      if (i)
        top.push_back(',');
      take(i, &top);
    }
    top.append("]}\n");
    return top;
  }
  const std::string margin(static_cast<size_t>(indent), ' ');
  top.resize(top.size() - 2);  // the newline and the closing brace
  absl::StrAppend(&top, ",\n", margin, "\"ranks\": [");
  if (ranks->empty()) {
    top.append("]\n}\n");
    return top;
  }
  top.push_back('\n');
  for (size_t i = 0; i < ranks->size(); ++i) {
    if (i)
      top.append(",\n");
    take(i, &top);
  }
  absl::StrAppend(&top, "\n", margin, "]\n}\n");
  return top;
}

}  // namespace

std::string DumpJson(const nlohmann::ordered_json& j, int indent) {
  return DumpAt(j, indent, 0);
}

absl::StatusOr<std::string> ToJson(const Report& report, const JsonOptions& options) {
  try {
    // A job's report is nearly all its ranks' sections: each is built and written on its own, on
    // up to options.jobs threads, and spliced in where the whole object's dump would put it.
    std::string text = DumpAt(ReportJson(report, /*per_rank=*/false), options.indent, 0);
    if (options.per_rank) {
      std::vector<std::string> ranks(report.ranks.size());
      util::ParallelFor(ranks.size(), options.jobs, [&](size_t i) {
        ranks[i] = DumpAt(RankJson(report.ranks[i]), options.indent, 2);
      });
      return WithRanks(std::move(text), &ranks, options.indent);
    }
    text.push_back('\n');
    return text;
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cannot encode the report as JSON: ", e.what()));
  }
}

}  // namespace cuclimb::analysis
