// SPDX-License-Identifier: Apache-2.0
// A DiffReport as terminal text, JSON (cuclimb.diff/1) and an HTML page.
#include <cmath>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "diff/diff.h"
#include "report/html_data.h"
#include "report/text_report.h"

namespace cuclimb::analysis {
namespace {

using html::Json;
using html::Num;

constexpr size_t kEntriesWithSeries = 12;  // per section, in the HTML page

std::string Clip(const std::string& s, size_t width) {
  return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

Json Side(const std::optional<SideLevels>& l) {
  if (!l)
    return nullptr;
  return Json{{"first", Num(l->first)}, {"last", Num(l->last)}, {"change_pct", Num(l->change_pct)}};
}

Json EntryJson(const DiffEntry& e, bool accumulator) {
  Json j{{"key", e.key},
         {"metric", e.metric},
         {"unit", e.unit},
         {"status", e.status},
         {"diverges_at", e.diverges_at >= 0 ? Json(e.diverges_at) : Json(nullptr)},
         {"base", Side(e.base)},
         {"other", Side(e.other)},
         {"delta_last", Num(e.delta_last)},
         {"delta_pct", e.delta_pct ? Num(*e.delta_pct) : Json(nullptr)},
         {"what", e.what}};
  if (accumulator) {
    j["base_growth_per_iter"] = Num(e.base_growth);
    j["other_growth_per_iter"] = Num(e.other_growth);
    j["explains"] = e.explains;
  }
  return j;
}

Json RunJson(const RunSummary& r) {
  return Json{{"path", r.path},
              {"program", r.program},
              {"verdict", r.verdict},
              {"iterations", r.iterations},
              {"iteration_source", r.iteration_source},
              {"iteration_name", r.iteration_name},
              {"climbing_ranges", r.climbing_ranges}};
}

Json DiffJson(const DiffReport& d, html::SeriesBudget* budget) {
  Json j;
  j["schema"] = d.schema;
  j["verdict"] = d.verdict;
  j["summary"] = d.summary;
  j["base"] = RunJson(d.base);
  j["other"] = RunJson(d.other);
  j["alignment"] = Json{{"by", d.alignment},
                        {"iterations", d.aligned},
                        {"base_offset", d.base_offset},
                        {"other_offset", d.other_offset}};
  if (d.first_divergence >= 0) {
    Json items = Json::array();
    for (const DiffReport::Item& it : d.first_items) {
      items.push_back(
          Json{{"section", it.section}, {"key", it.key}, {"metric", it.metric}, {"what", it.what}});
    }
    j["first_divergence"] = Json{{"iteration", d.first_divergence},
                                 {"base_iteration", d.first_divergence + d.base_offset},
                                 {"other_iteration", d.first_divergence + d.other_offset},
                                 {"items", std::move(items)}};
  } else {
    j["first_divergence"] = nullptr;
  }
  j["tolerances"] = Json{{"time_pct", Num(d.options.time_tolerance_pct)},
                         {"count", Num(d.options.count_tolerance)},
                         {"count_pct", Num(d.options.count_tolerance_pct)},
                         {"persist", d.options.persist}};
  const std::pair<const char*, const std::vector<DiffEntry>*> sections[] = {
      {"ranges", &d.ranges},
      {"accumulators", &d.accumulators},
      {"census", &d.census},
      {"handles", &d.handles},
      {"kernels", &d.kernels}};
  for (const auto& [name, list] : sections) {
    Json a = Json::array();
    for (size_t i = 0; i < list->size(); ++i) {
      const DiffEntry& e = (*list)[i];
      Json x = EntryJson(e, std::string(name) == "accumulators");
      if (budget != nullptr) {
        const bool drawn = i < kEntriesWithSeries;
        x["base_series"] =
            drawn && !e.base_series.empty() ? budget->Add(e.base_series) : Json(nullptr);
        x["other_series"] =
            drawn && !e.other_series.empty() ? budget->Add(e.other_series) : Json(nullptr);
      }
      a.push_back(std::move(x));
    }
    j[name] = std::move(a);
  }
  j["notes"] = d.notes;
  return j;
}

void Section(const std::string& title, const std::vector<DiffEntry>& list, size_t max_rows,
             std::string* out) {
  if (list.empty())
    return;
  absl::StrAppend(out, "\n", title, "\n");
  absl::StrAppendFormat(out, "  %-44s %-12s %24s  %24s  %s\n", "key", "metric", "base first → last",
                        "other first → last", "diverges at");
  size_t shown = 0;
  for (const DiffEntry& e : list) {
    if (shown++ >= max_rows) {
      absl::StrAppendFormat(out, "  (%d more in --json)\n", list.size() - max_rows);
      break;
    }
    auto side = [&](const std::optional<SideLevels>& l) {
      return l ? absl::StrCat(FormatQuantity(l->first, e.unit), " → ",
                              FormatQuantity(l->last, e.unit))
               : std::string("absent");
    };
    absl::StrAppendFormat(out, "  %-44s %-12s %24s  %24s  %s\n", Clip(e.key, 44),
                          Clip(e.metric, 12), side(e.base), side(e.other),
                          e.diverges_at >= 0 ? absl::StrCat("iteration ", e.diverges_at) : "-");
  }
}

}  // namespace

std::string DiffToText(const DiffReport& d) {
  std::string out;
  absl::StrAppendFormat(
      &out, "cuclimb diff: base %s (%d iterations, %s) vs other %s (%d iterations, %s)\n",
      d.base.path, d.base.iterations, d.base.verdict, d.other.path, d.other.iterations,
      d.other.verdict);
  absl::StrAppendFormat(
      &out, "aligned %d iterations by %s\n\n", d.aligned,
      d.alignment == "payload" ? "NVTX payload (the program's iteration number)" : "index");
  absl::StrAppend(&out, d.summary, "\n");
  for (const DiffReport::Item& it : d.first_items) {
    absl::StrAppend(&out, "  ", it.section, " ", it.metric, " ", it.key, ": ", it.what, "\n");
  }
  Section("ranges (step time per iteration)", d.ranges, 15, &out);
  if (!d.accumulators.empty()) {
    absl::StrAppend(&out, "\naccumulators\n");
    for (const DiffEntry& e : d.accumulators) {
      const std::string unit = e.unit;
      absl::StrAppendFormat(
          &out, "  %-11s %s: %s %s/iteration in base, %s in other%s\n",
          e.status == "only_other"  ? "new"
          : e.status == "only_base" ? "gone"
                                    : "both",
          e.key, FormatQuantity(e.base_growth, unit), unit, FormatQuantity(e.other_growth, unit),
          e.diverges_at >= 0 ? absl::StrCat(" (apart from iteration ", e.diverges_at, ")") : "");
    }
  }
  Section("allocation census (calls per iteration)", d.census, 12, &out);
  Section("live handles and bytes", d.handles, 12, &out);
  Section("kernels", d.kernels, 12, &out);
  if (!d.notes.empty()) {
    absl::StrAppend(&out, "\nnotes:\n");
    for (const std::string& n : d.notes) absl::StrAppend(&out, "  - ", n, "\n");
  }
  absl::StrAppend(&out, "\nverdict: ", d.verdict, "\n");
  return out;
}

absl::StatusOr<std::string> DiffToJson(const DiffReport& d) {
  try {
    return DiffJson(d, nullptr).dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cannot encode the diff as JSON: ", e.what()));
  }
}

absl::StatusOr<std::string> DiffToHtml(const DiffReport& d, const HtmlOptions& options) {
  try {
    html::SeriesBudget budget(options.max_data_bytes, options.max_points);
    Json j = DiffJson(d, &budget);
    j["page"] = "diff";
    j["series_left_out"] = budget.dropped();
    const std::string title =
        absl::StrCat("cuclimb diff: ", d.base.path, " vs ", d.other.path, " (", d.verdict, ")");
    return HtmlPage(title, j.dump(-1, ' ', false, Json::error_handler_t::replace));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("cannot encode the diff page: ", e.what()));
  }
}

}  // namespace cuclimb::analysis
