// SPDX-License-Identifier: Apache-2.0
// Report → a self-contained HTML page: the report's aggregates as JSON data plus the inlined
// template, stylesheet and script of report/assets/ (scripts/embed_assets.py).
#include "report/html_report.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_data.h"
#include "report_assets.h"
#include "util/saturating.h"

namespace cuclimb::analysis {
namespace {

using html::Json;
using html::Num;
using html::SeriesBudget;

// How much of each list gets per-iteration series; rows beyond these stay in the tables.
constexpr size_t kRangesWithDecomposition = 12;
constexpr size_t kPartsPerDecomposition = 8;  // by_api / by_sync / by_kernel entries drawn
constexpr size_t kKernelsWithSeries = 40;
constexpr size_t kStatePerDimension = 24;  // keys per (metric, dimension) drawn
constexpr size_t kMaxTableRows = 2000;     // kernels, APIs: rows beyond are summarized

Json TrendJson(const Trend& t) {
  return Json{{"tested", t.tested},
              {"warmup", t.warmup},
              {"first", Num(t.first)},
              {"last", Num(t.last)},
              {"change_pct", Num(t.change_pct)},
              {"slope", Num(t.slope_per_iter)},
              {"p", Num(t.p_value)},
              {"rising", t.rising},
              {"falling", t.falling}};
}

Json SiteJson(const CallSite& s) {
  return Json{{"label", s.label}, {"frames", s.frames}};
}

Json ExamplesJson(const std::vector<HandleExample>& v) {
  Json a = Json::array();
  for (const HandleExample& e : v) {
    a.push_back(
        Json{{"address", absl::StrFormat("0x%x", e.address)},
             {"serial", e.serial},
             {"size_bytes", e.size_bytes},
             {"api", e.api},
             {"alloc_iteration", e.alloc_iteration},
             {"free_iteration", e.free_iteration == -2 ? Json(nullptr) : Json(e.free_iteration)}});
  }
  return a;
}

Json Component(const analysis::Component& c, SeriesBudget* budget) {
  return Json{{"name", c.name},
              {"delta_ms", Num(c.delta_ms)},
              {"trend", TrendJson(c.trend)},
              {"ms", budget->Add(c.ms)}};
}

Json Parts(const std::vector<analysis::Component>& v, SeriesBudget* budget) {
  Json a = Json::array();
  for (size_t i = 0; i < v.size() && i < kPartsPerDecomposition; ++i)
    a.push_back(Component(v[i], budget));
  return a;
}

Json RangesJson(const std::vector<RangeReport>& ranges, SeriesBudget* budget) {
  Json out = Json::array();
  // Totals first for every range (the overview chart), decompositions after, most important
  // (climbing, then largest) first: the order in which the budget is spent.
  for (const RangeReport& r : ranges) {
    out.push_back(Json{{"name", r.name},
                       {"tid", r.tid},
                       {"climbing", r.climbing},
                       {"trend", TrendJson(r.trend)},
                       {"explained_by", r.explained_by},
                       {"where_time_goes", r.where_time_goes},
                       {"total_ms", budget->Add(r.total_ms)},
                       {"decomposition", nullptr}});
  }
  for (size_t i = 0; i < ranges.size() && i < kRangesWithDecomposition; ++i) {
    const Decomposition& d = ranges[i].decomposition;
    out[i]["decomposition"] =
        Json{{"api", Component(d.api, budget)},        {"sync", Component(d.sync, budget)},
             {"host", Component(d.host, budget)},      {"gpu", Component(d.gpu, budget)},
             {"by_api", Parts(d.by_api, budget)},      {"by_sync", Parts(d.by_sync, budget)},
             {"by_kernel", Parts(d.by_kernel, budget)}};
  }
  return out;
}

Json AccumulatorsJson(const std::vector<Accumulator>& accs, SeriesBudget* budget) {
  Json out = Json::array();
  for (const Accumulator& a : accs) {
    Json ex = Json::array();
    for (const Explanation& e : a.explanations) {
      ex.push_back(Json{{"range", e.range},
                        {"verdict", e.verdict},
                        {"share", Num(e.share)},
                        {"r", Num(e.r)},
                        {"reason", e.reason}});
    }
    out.push_back(Json{{"rank", a.rank},
                       {"kind", a.kind},
                       {"key", a.key},
                       {"id", a.id},
                       {"growth_per_iter", Num(a.growth_per_iter)},
                       {"unit", a.unit},
                       {"p", Num(a.p_value)},
                       {"bytes_per_iter", Num(a.bytes_per_iter)},
                       {"growth_start_iteration", a.growth_start_iteration},
                       {"explains", a.explains},
                       {"evidence", a.evidence},
                       {"site", SiteJson(a.site)},
                       {"apis", a.apis},
                       {"size_classes", a.size_classes},
                       {"examples", ExamplesJson(a.examples)},
                       {"explanations", std::move(ex)},
                       {"trend", TrendJson(a.trend)},
                       {"values", budget->Add(a.values)},
                       {"bytes", budget->Add(a.bytes)},
                       {"survivors", budget->Add(a.survivors_by_alloc_iteration)}});
  }
  return out;
}

// Live handles and bytes by kind and call site (the "what is live" charts): the totals, then
// per dimension the keys with the largest final level.
Json StateJson(const std::vector<StateSeries>& state, SeriesBudget* budget) {
  static const std::set<std::string> kMetrics = {"live_handles",      "live_bytes", "live_regions",
                                                 "live_region_bytes", "allocs",     "temporaries"};
  static const std::set<std::string> kDimensions = {"total",       "memory_kind", "call_site",
                                                    "handle_type", "heap",        "api"};
  std::vector<const StateSeries*> picked;
  for (const StateSeries& s : state) {
    if (kMetrics.count(s.metric) && kDimensions.count(s.dimension))
      picked.push_back(&s);
  }
  auto last = [](const StateSeries* s) { return s->values.empty() ? 0.0 : s->values.back(); };
  // Order: metric, dimension (totals first), then largest last level, then key.
  std::stable_sort(picked.begin(), picked.end(), [&](const StateSeries* a, const StateSeries* b) {
    if (a->metric != b->metric)
      return a->metric < b->metric;
    if ((a->dimension == "total") != (b->dimension == "total"))
      return a->dimension == "total";
    if (a->dimension != b->dimension)
      return a->dimension < b->dimension;
    if (last(a) != last(b))
      return last(a) > last(b);
    return a->key < b->key;
  });
  std::vector<const StateSeries*> rows;
  std::string group;
  size_t in_group = 0;
  for (const StateSeries* s : picked) {
    const std::string g = s->metric + "\n" + s->dimension;
    in_group = g == group ? in_group + 1 : 0;
    group = g;
    if (in_group < kStatePerDimension)
      rows.push_back(s);
  }
  Json out = Json::array();
  for (const StateSeries* s : rows) {
    out.push_back(Json{{"metric", s->metric},
                       {"dimension", s->dimension},
                       {"key", s->key},
                       {"unit", s->unit},
                       {"trend", TrendJson(s->trend)},
                       {"values", nullptr}});
  }
  // Series after the rows, totals first: the budget goes to the overview before the details.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < rows.size(); ++i) {
      if ((rows[i]->dimension == "total") == (pass == 0))
        out[i]["values"] = budget->Add(rows[i]->values);
    }
  }
  return out;
}

Json KernelsJson(const std::vector<KernelRow>& kernels, SeriesBudget* budget) {
  Json out = Json::array();
  for (size_t i = 0; i < kernels.size() && i < kMaxTableRows; ++i) {
    const KernelRow& k = kernels[i];
    const bool drawn = i < kKernelsWithSeries;
    out.push_back(Json{{"name", k.name},
                       {"launches", k.launches},
                       {"executions", k.executions},
                       {"gpu_ms", Num(k.gpu_ms)},
                       {"slowing", k.slowing},
                       {"trend", TrendJson(k.duration_trend)},
                       {"mean_us", drawn ? budget->Add(k.mean_us) : Json(nullptr)},
                       {"gpu_ms_per_iter", nullptr}});
  }
  for (size_t i = 0; i < out.size() && i < kKernelsWithSeries; ++i) {
    out[i]["gpu_ms_per_iter"] = budget->Add(kernels[i].gpu_ms_per_iter);
  }
  return out;
}

Json ApisJson(const std::vector<ApiRow>& apis) {
  Json out = Json::array();
  for (size_t i = 0; i < apis.size() && i < kMaxTableRows; ++i) {
    const ApiRow& a = apis[i];
    out.push_back(Json{
        {"name", a.name}, {"calls", a.calls}, {"ms", Num(a.ms)}, {"trend", TrendJson(a.trend)}});
  }
  return out;
}

// Where a merged accumulator lives: "rank 1 (+2)", "ranks 0, 3 (+1, +1)"; the rest are not listed.
std::string LivesOn(const Accumulator& a) {
  std::string ranks, growth;
  int n = 0;
  for (const AccumulatorOnRank& on : a.by_rank) {
    if (!on.lives)
      continue;
    absl::StrAppend(&ranks, n ? ", " : "", on.rank);
    absl::StrAppend(&growth, n ? ", " : "", absl::StrFormat("%+.3g", on.growth_per_iter));
    ++n;
  }
  if (n == 0)
    return "";
  return absl::StrCat(n == 1 ? "rank " : "ranks ", ranks, " (", growth, " ", a.unit, "/iter)",
                      static_cast<size_t>(n) < a.by_rank.size() ? "; not on the others" : "");
}

Json RankJson(const RankReport& r, SeriesBudget* budget) {
  Json devices = Json::array();
  for (const DeviceInfo& d : r.process.devices) {
    devices.push_back(Json{{"ordinal", d.ordinal},
                           {"name", d.name},
                           {"uuid", d.uuid},
                           {"total_bytes", d.total_bytes},
                           {"compute_capability", d.compute_capability}});
  }
  Json threads = Json::array();
  for (const ThreadInfo& t : r.threads) {
    threads.push_back(
        Json{{"tid", t.tid}, {"name", t.name}, {"events", t.events}, {"cuda_calls", t.cuda_calls}});
  }
  const Overhead& o = r.overhead;
  Json leaks_sites = Json::array();
  for (const LeakSite& l : r.leaks.by_site) {
    leaks_sites.push_back(Json{{"kind", l.kind},
                               {"key", l.key},
                               {"handles", l.handles},
                               {"bytes", l.bytes},
                               {"site", SiteJson(l.site)},
                               {"examples", ExamplesJson(l.examples)}});
  }
  Json pools = Json::array();
  for (const auto* list : {&r.fragmentation.pools, &r.fragmentation.heaps}) {
    for (const PoolFragmentation& p : *list) {
      pools.push_back(Json{{"pool", p.pool},
                           {"heap", list == &r.fragmentation.heaps},
                           {"last_fragmentation", Num(p.last_fragmentation)}});
    }
  }
  Json j;
  j["index"] = r.index;
  j["trace"] = Json{{"path", r.trace.path},
                    {"form", r.trace.form},
                    {"producer", r.trace.producer},
                    {"status", r.trace.status},
                    {"status_message", r.trace.status_message},
                    {"partial", r.trace.partial},
                    {"events", r.trace.events},
                    {"duration_ns", util::SaturatingSub(r.trace.last_ts_ns, r.trace.first_ts_ns)},
                    {"repassed", r.trace.repassed}};
  j["process"] = Json{{"pid", r.process.pid},         {"rank", r.process.rank},
                      {"cmd", r.process.cmd},         {"host", r.process.host},
                      {"exe", r.process.exe},         {"driver_version", r.process.driver_version},
                      {"devices", std::move(devices)}};
  j["threads"] = std::move(threads);
  j["iterations"] = Json{{"source", r.iterations.source},
                         {"name", r.iterations.name},
                         {"count", r.iterations.count},
                         {"why", r.iterations.why}};
  j["climbing"] = r.climbing;
  j["notes"] = r.notes;
  // Budget order: what the top of the page shows first.
  j["ranges"] = RangesJson(r.ranges, budget);
  j["accumulators"] = AccumulatorsJson(r.accumulators, budget);
  j["overhead"] = Json{{"self_ms_total", Num(o.self_ms_total)},
                       {"self_pct_of_wall", Num(o.self_pct_of_wall)},
                       {"recorded_events", o.recorded_events},
                       {"dropped", o.dropped},
                       {"drops_by_reason", o.drops_by_reason},
                       {"recording_pauses", o.recording_pauses},
                       {"overhead_climbing", o.overhead_climbing},
                       {"self_ms", budget->Add(o.self_ms)},
                       {"drops", budget->Add(o.drops)}};
  j["state"] = StateJson(r.state, budget);
  j["lifetimes"] = Json{{"histogram", r.temporaries.lifetime_histogram},
                        {"temporaries_total", r.temporaries.total},
                        {"temporaries_bytes", r.temporaries.total_bytes},
                        {"temporaries", budget->Add(r.temporaries.count)}};
  j["leaks"] = Json{{"handles", r.leaks.handles},
                    {"bytes", r.leaks.bytes},
                    {"by_site", std::move(leaks_sites)},
                    {"handles_by_type", r.leaks.handles_by_type},
                    {"unmatched_frees", r.leaks.unmatched_frees},
                    {"replaced_allocations", r.leaks.replaced_allocations}};
  j["peak"] = Json{{"live_bytes", r.peak.live_bytes},
                   {"iteration", r.peak.iteration},
                   {"by_kind", r.peak.by_kind},
                   {"live_bytes_per_iter", budget->Add(r.peak.live_bytes_per_iter)}};
  j["fragmentation"] = std::move(pools);
  j["kernels"] = KernelsJson(r.kernels, budget);
  j["kernels_total"] = r.kernels.size();
  j["apis"] = ApisJson(r.apis);
  j["apis_total"] = r.apis.size();
  return j;
}

std::string Title(const Report& report) {
  std::string program = "cuclimb report";
  if (!report.ranks.empty()) {
    const ProcessInfo& p = report.ranks[0].process;
    const std::string& cmd = !p.cmd.empty() ? p.cmd : p.exe;
    if (!cmd.empty())
      program = cmd.size() > 80 ? cmd.substr(0, 77) + "..." : cmd;
  }
  return absl::StrCat("cuclimb: ", program, " (", report.verdict, ")");
}

// Replaces each {{NAME}} of the template once, in one left-to-right pass, so that text put in
// (the data) is never searched for placeholders.
std::string Fill(std::string_view tmpl,
                 const std::vector<std::pair<std::string_view, std::string_view>>& values) {
  std::string out;
  out.reserve(tmpl.size());
  size_t pos = 0;
  while (pos < tmpl.size()) {
    const size_t open = tmpl.find("{{", pos);
    if (open == std::string_view::npos)
      break;
    const size_t close = tmpl.find("}}", open + 2);
    if (close == std::string_view::npos)
      break;
    const std::string_view name = tmpl.substr(open + 2, close - open - 2);
    out.append(tmpl.substr(pos, open - pos));
    bool found = false;
    for (const auto& [k, v] : values) {
      if (k == name) {
        out.append(v);
        found = true;
        break;
      }
    }
    if (!found)
      out.append(tmpl.substr(open, close + 2 - open));
    pos = close + 2;
  }
  out.append(tmpl.substr(pos));
  return out;
}

}  // namespace

std::string EscapeJsonForScript(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 16);
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') {
      out.append("\\u003c");
    } else if (c == '>') {
      out.append("\\u003e");
    } else if (c == '&') {
      out.append("\\u0026");
    } else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out.append(json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029");
      i += 2;
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string EscapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out.append("&amp;");
        break;
      case '<':
        out.append("&lt;");
        break;
      case '>':
        out.append("&gt;");
        break;
      case '"':
        out.append("&quot;");
        break;
      case '\'':
        out.append("&#39;");
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string HtmlPage(std::string_view title, std::string_view data_json) {
  const std::string csp = absl::StrCat(
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-",
      assets::kReportJsSha256, "'; base-uri 'none'; form-action 'none'");  // not in default-src
  // The title may come from a trace (the program's command line); invalid UTF-8 is harmless in
  // a text node, but it is replaced here like nlohmann does for the data.
  std::string clean;
  for (unsigned char c : title) clean.push_back(c < 0x20 ? ' ' : static_cast<char>(c));
  return Fill(assets::kReportHtml, {{"TITLE", EscapeHtml(clean)},
                                    {"CSP", csp},
                                    {"CSS", assets::kReportCss},
                                    {"DATA", EscapeJsonForScript(data_json)},
                                    {"JS", assets::kReportJs}});
}

absl::StatusOr<std::string> ToHtml(const Report& report, const HtmlOptions& options) {
  try {
    SeriesBudget budget(options.max_data_bytes, options.max_points);
    Json data;
    data["page"] = "report";
    data["schema"] = report.schema;
    data["verdict"] = report.verdict;
    data["partial"] = report.partial;
    data["thresholds"] = Json{{"alpha", Num(report.thresholds.alpha)},
                              {"min_climb_pct", Num(report.thresholds.min_climb_pct)},
                              {"min_share", Num(report.thresholds.min_share)}};
    data["iterations"] = Json{{"source", report.iterations.source},
                              {"name", report.iterations.name},
                              {"count", report.iterations.count},
                              {"why", report.iterations.why}};
    data["notes"] = report.notes;
    if (report.ranks.size() > 1) {
      // Across ranks (per-rank detail below): the merged ranges and accumulators.
      Json ranges = Json::array();
      for (const RangeReport& r : report.ranges) {
        ranges.push_back(Json{{"name", r.name},
                              {"climbing", r.climbing},
                              {"trend", TrendJson(r.trend)},
                              {"explained_by", r.explained_by},
                              {"where_time_goes", r.where_time_goes},
                              {"pattern", r.by_rank.pattern},
                              {"on_ranks", r.by_rank.summary}});
      }
      data["ranges"] = std::move(ranges);
      data["straggler"] = report.straggler.found ? Json(report.straggler.summary) : Json(nullptr);
      data["job_ranks"] = report.job_ranks;
      Json accs = Json::array();
      for (const Accumulator& a : report.accumulators) {
        auto it = report.accumulator_ranks.find(a.id);
        accs.push_back(
            Json{{"rank", a.rank},
                 {"id", a.id},
                 {"kind", a.kind},
                 {"key", a.key},
                 {"growth_per_iter", Num(a.growth_per_iter)},
                 {"unit", a.unit},
                 {"explains", a.explains},
                 {"ranks", it == report.accumulator_ranks.end() ? Json::array() : Json(it->second)},
                 {"lives_on", LivesOn(a)}});
      }
      data["accumulators"] = std::move(accs);
    }
    Json ranks = Json::array();
    for (const RankReport& r : report.ranks) ranks.push_back(RankJson(r, &budget));
    data["ranks"] = std::move(ranks);
    data["series_left_out"] = budget.dropped();
    const std::string json = data.dump(-1, ' ', false, Json::error_handler_t::replace);
    std::string title = Title(report);
    return HtmlPage(title, json);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cannot encode the HTML report: ", e.what()));
  }
}

}  // namespace cuclimb::analysis
