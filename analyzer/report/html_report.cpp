// SPDX-License-Identifier: Apache-2.0
// Report → a self-contained HTML page: the report's aggregates as JSON data plus the inlined
// template, stylesheet and script of report/assets/ (scripts/embed_assets.py).
#include "report/html_report.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/html_data.h"
#include "report/json_report.h"
#include "report_assets.h"

namespace cuclimb::analysis {
namespace {

using html::Json;
using html::SeriesBudget;

// How much of each list the page draws; rows beyond these stay in the tables without series.
constexpr size_t kRangesWithDecomposition = 12;
constexpr size_t kPartsPerDecomposition = 8;  // by_api / by_sync / by_kernel entries drawn
constexpr size_t kKernelsWithSeries = 40;
constexpr size_t kStatePerDimension = 24;  // keys per (metric, dimension) drawn
constexpr size_t kMaxTableRows = 2000;     // kernels, APIs: rows beyond are counted, not shown

// The order in which series get the budget: what the top of the page shows first.
enum SeriesClass : int {
  kRangeTotals,
  kAccumulatorSeries,
  kOverheadSeries,
  kStateTotals,
  kDecompositions,
  kDecompositionParts,
  kStateDetails,
  kLifetimeSeries,
  kKernelSeries,
  kOtherSeries,
  kClassCount,
};

bool IsSeries(const Json& v, int64_t count) {
  if (!v.is_array() || static_cast<int64_t>(v.size()) != count || v.empty())
    return false;
  for (const Json& x : v) {
    if (!x.is_number() && !x.is_null())
      return false;
  }
  return true;
}

// The class of the series at `path` inside a rank (keys and array indexes as text).
int Classify(const std::vector<std::string>& path, const Json& parent) {
  auto at = [&path](size_t i) -> const std::string& {
    static const std::string kNone;
    return i < path.size() ? path[i] : kNone;
  };
  const std::string& top = at(0);
  const std::string& leaf = path.back();
  auto index = [&](size_t i) {
    return static_cast<size_t>(std::strtoull(at(i).c_str(), nullptr, 10));
  };
  if (top == "ranges") {
    if (leaf == "total_ms")
      return kRangeTotals;
    if (at(2) == "decomposition" && index(1) < kRangesWithDecomposition) {
      if (path.size() == 5)
        return kDecompositions;  // ranges/i/decomposition/api/ms
      if (index(4) < kPartsPerDecomposition)
        return kDecompositionParts;  // ranges/i/decomposition/by_api/k/ms
      return -1;
    }
    return at(2) == "decomposition" ? -1 : kOtherSeries;
  }
  if (top == "accumulators")
    return kAccumulatorSeries;
  if (top == "overhead")
    return leaf == "self_ms" || leaf == "drops" ? kOverheadSeries : kOtherSeries;
  if (top == "state")
    return parent.value("dimension", "") == "total" ? kStateTotals : kStateDetails;
  if (top == "temporaries" || top == "peak")
    return leaf == "count" || leaf == "live_bytes_per_iter" ? kLifetimeSeries : kOtherSeries;
  if (top == "kernels") {
    if (index(1) >= kKernelsWithSeries)
      return -1;
    return leaf == "mean_us" || leaf == "gpu_ms_per_iter" ? kKernelSeries : kOtherSeries;
  }
  if (top == "apis")
    return -1;  // the page shows the API table without series
  return kOtherSeries;
}

// Every per-iteration series of a rank, by class; `drop` collects those the page never draws.
void CollectSeries(Json* node, std::vector<std::string>* path, const Json* parent, int64_t count,
                   std::vector<std::vector<Json*>>* classes, std::vector<Json*>* drop) {
  if (IsSeries(*node, count) && !path->empty()) {
    const int c = Classify(*path, *parent);
    if (c < 0)
      drop->push_back(node);
    else
      (*classes)[static_cast<size_t>(c)].push_back(node);
    return;
  }
  if (node->is_object()) {
    for (auto& [key, value] : node->items()) {
      path->push_back(key);
      CollectSeries(&value, path, node, count, classes, drop);
      path->pop_back();
    }
  } else if (node->is_array()) {
    for (size_t i = 0; i < node->size(); ++i) {
      path->push_back(std::to_string(i));
      CollectSeries(&(*node)[i], path, node, count, classes, drop);
      path->pop_back();
    }
  }
}

// Keeps the first `keep` rows of a table; the page is told how many it left out.
void CutRows(Json* rank, const char* key, size_t keep, Json* left_out) {
  Json& rows = (*rank)[key];
  if (rows.is_array() && rows.size() > keep) {
    (*left_out)[key] = rows.size() - keep;
    rows.erase(rows.begin() + static_cast<std::ptrdiff_t>(keep), rows.end());
  }
}

// The "what is live" rows the page draws: live handles, bytes, regions, allocation calls and
// temporaries, by total, memory kind, call site, handle type, heap and API, the keys with the
// largest final level first (kStatePerDimension per metric and dimension).
void PickState(Json* rank, Json* left_out) {
  static const std::set<std::string> kMetrics = {"live_handles",      "live_bytes", "live_regions",
                                                 "live_region_bytes", "allocs",     "temporaries"};
  static const std::set<std::string> kDimensions = {"total",       "memory_kind", "call_site",
                                                    "handle_type", "heap",        "api"};
  Json& state = (*rank)["state"];
  if (!state.is_array())
    return;
  auto last = [](const Json& s) {
    const Json& v = s["values"];
    return v.is_array() && !v.empty() && v.back().is_number() ? v.back().get<double>() : 0.0;
  };
  std::vector<Json> picked;
  for (Json& s : state) {
    if (kMetrics.count(s.value("metric", "")) && kDimensions.count(s.value("dimension", "")))
      picked.push_back(std::move(s));
  }
  std::stable_sort(picked.begin(), picked.end(), [&](const Json& a, const Json& b) {
    const std::string am = a["metric"], bm = b["metric"], ad = a["dimension"], bd = b["dimension"];
    if (am != bm)
      return am < bm;
    if ((ad == "total") != (bd == "total"))
      return ad == "total";
    if (ad != bd)
      return ad < bd;
    if (last(a) != last(b))
      return last(a) > last(b);
    return a["key"].get<std::string>() < b["key"].get<std::string>();
  });
  Json kept = Json::array();
  std::string group;
  size_t in_group = 0;
  for (Json& s : picked) {
    const std::string g = s["metric"].get<std::string>() + "\n" + s["dimension"].get<std::string>();
    in_group = g == group ? in_group + 1 : 0;
    group = g;
    if (in_group < kStatePerDimension)
      kept.push_back(std::move(s));
  }
  const size_t dropped = state.size() - kept.size();
  if (dropped > 0)
    (*left_out)["state"] = dropped;
  state = std::move(kept);
}

// The JSON report (ReportJson) cut to the page's budget, keys and meanings unchanged: series
// longer than max_points are binned ({bin, v}), series past the budget are null, iteration spans
// and rows the page does not draw are left out; each rank's "page" and the top-level "page" say
// what was (docs/reports.md "The page's data").
void FitToPage(Json* report, const HtmlOptions& options) {
  SeriesBudget budget(options.max_data_bytes, options.max_points);
  std::vector<std::vector<Json*>> classes(kClassCount);
  std::vector<Json*> drop;
  if (report->contains("ranks")) {
    for (Json& rank : (*report)["ranks"]) {
      Json left_out = Json::object();
      if (rank["iterations"].contains("spans")) {
        rank["iterations"].erase("spans");
        left_out["spans"] = true;
      }
      CutRows(&rank, "kernels", kMaxTableRows, &left_out);
      CutRows(&rank, "apis", kMaxTableRows, &left_out);
      PickState(&rank, &left_out);
      rank["page"] = Json{{"left_out", std::move(left_out)}};
      std::vector<std::string> path;
      CollectSeries(&rank, &path, &rank, rank["iterations"].value("count", int64_t{0}), &classes,
                    &drop);
    }
  }
  for (Json* series : drop) *series = nullptr;
  // Everything but the series (tables, trends, sentences) is charged first: the budget bounds
  // the whole embedded data, and the series get what is left.
  std::vector<Json> held;
  for (const std::vector<Json*>& list : classes) {
    for (Json* series : list) {
      held.push_back(std::move(*series));
      *series = nullptr;
    }
  }
  budget.Charge(report->dump(-1, ' ', false, Json::error_handler_t::replace).size());
  size_t k = 0;
  for (const std::vector<Json*>& list : classes) {
    for (Json* series : list) *series = budget.Add(held[k++]);
  }
  (*report)["page"] = Json{{"series_left_out", budget.dropped()},
                           {"series_not_drawn", drop.size()},
                           {"max_points", options.max_points}};
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
    Json data = ReportJson(report, /*per_rank=*/true, options.jobs);
    FitToPage(&data, options);
    const std::string json = data.dump(-1, ' ', false, Json::error_handler_t::replace);
    return HtmlPage(Title(report), json);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cannot encode the HTML report: ", e.what()));
  }
}

}  // namespace cuclimb::analysis
