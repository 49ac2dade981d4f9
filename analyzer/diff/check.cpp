// SPDX-License-Identifier: Apache-2.0
// Limits on a report (check.h).
#include "diff/check.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "detect/accumulator_kind.h"
#include "report/html_data.h"

namespace cuclimb::analysis {
namespace {

// The accumulator kinds (detect/accumulator_kind.h) and the gates over all of them.
const std::set<std::string>& Kinds() {
  static const std::set<std::string> kinds = [] {
    std::set<std::string> k = {"any", "live_bytes", "live_handles"};
    for (const AccumulatorKindInfo& info : kAccumulatorKinds) k.insert(info.name);
    return k;
  }();
  return kinds;
}

std::string Number(double v) {
  return absl::StrFormat("%.6g", v);
}

// Why a report gives a gate nothing to judge ("" when it does): a gate passes only on evidence,
// so a trace that is empty, or too short for any trend test, must not pass.
std::string Inconclusive(const Report& report) {
  for (const RankReport& rank : report.ranks) {
    if (rank.trace.events == 0)
      return absl::StrCat(rank.trace.path, " has no events: an empty trace never passes a gate");
  }
  for (const RangeReport& range : report.ranges) {
    if (range.trend.tested)
      return "";
  }
  for (const RankReport& rank : report.ranks) {
    for (const StateSeries& s : rank.state) {
      if (s.trend.tested)
        return "";
    }
  }
  return absl::StrCat("no trend could be tested on ", report.iterations.count,
                      " iterations (at least ", report.thresholds.min_iterations,
                      " after the warm-up are needed): an untestable trace never passes a gate");
}

}  // namespace

absl::StatusOr<GrowthLimit> ParseGrowthLimit(std::string_view text) {
  GrowthLimit g;
  g.text = std::string(text);
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-growth wants KIND=RATE, not '", g.text, "'"));
  }
  g.kind = std::string(text.substr(0, eq));
  if (!Kinds().count(g.kind)) {
    std::vector<std::string> names(Kinds().begin(), Kinds().end());
    return absl::InvalidArgumentError(absl::StrCat("--max-growth: unknown kind '", g.kind,
                                                   "' (one of ", absl::StrJoin(names, ", "), ")"));
  }
  std::string_view rate = text.substr(eq + 1);
  const char* end = rate.data() + rate.size();
  auto [ptr, ec] = std::from_chars(rate.data(), end, g.rate);
  if (ec != std::errc() || !(g.rate >= 0) || !std::isfinite(g.rate)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-growth ", g.text, ": RATE must be a number ≥ 0"));
  }
  std::string suffix = absl::AsciiStrToLower(std::string(ptr, static_cast<size_t>(end - ptr)));
  if (absl::EndsWith(suffix, "/iter"))
    suffix.resize(suffix.size() - 5);
  static const std::pair<const char*, double> kUnits[] = {
      {"b", 1},           {"kb", 1e3}, {"kib", 1024.0},      {"mb", 1e6},
      {"mib", 1048576.0}, {"gb", 1e9}, {"gib", 1073741824.0}};
  if (!suffix.empty()) {
    bool found = false;
    for (const auto& [name, scale] : kUnits) {
      if (suffix == name) {
        g.rate *= scale;
        g.bytes = true;
        found = true;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat("--max-growth ", g.text, ": unknown unit '",
                                                     suffix, "' (B, KB, KiB, MB, MiB, GB, GiB)"));
    }
  }
  if (g.kind == "live_bytes")
    g.bytes = true;
  const auto kind = AccumulatorKindNamed(g.kind);
  if (g.bytes && (g.kind == "live_handles" || (kind && !HasBytes(Info(*kind))))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-growth ", g.text, ": ", g.kind, " has no bytes"));
  }
  return g;
}

CheckResult RunCheck(const Report& report, const CheckLimits& limits) {
  CheckResult r;
  std::optional<double> climb = limits.max_climb_pct;
  if (!climb && limits.growth.empty())
    climb = report.thresholds.min_climb_pct;
  if (climb) {
    const std::string limit = absl::StrCat("max-climb ", Number(*climb), "%");
    std::vector<std::string> wanted = limits.ranges;
    int untested = 0;
    for (const RangeReport& range : report.ranges) {
      if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), range.name) == wanted.end())
        continue;
      CheckItem it;
      it.check = "climb";
      it.subject = range.name;
      it.limit = limit;
      it.unit = "%";
      it.value = range.trend.tested ? range.trend.change_pct : 0;
      it.significant = range.trend.tested && range.trend.rising;
      // A range the user named must be judged: untested, it fails rather than passes.
      const bool named = !wanted.empty();
      it.pass = !(it.significant && it.value > *climb) && (range.trend.tested || !named);
      untested += !range.trend.tested;
      it.detail = !range.trend.tested ? "not tested: too few iterations after the warm-up"
                  : it.pass ? absl::StrFormat("%+.1f%% (p = %.2g) is within %s%%", it.value,
                                              range.trend.p_value, Number(*climb))
                            : absl::StrFormat("climbs %+.1f%% (p = %.2g), over %s%%", it.value,
                                              range.trend.p_value, Number(*climb));
      r.items.push_back(std::move(it));
    }
    for (const std::string& name : wanted) {
      const bool found = std::any_of(report.ranges.begin(), report.ranges.end(),
                                     [&](const RangeReport& x) { return x.name == name; });
      if (!found) {
        CheckItem it;
        it.check = "climb";
        it.subject = name;
        it.limit = limit;
        it.unit = "%";
        it.pass = false;
        it.detail = "no such range in the trace (a range must repeat in most iterations)";
        r.items.push_back(std::move(it));
      }
    }
    if (untested > 0)
      r.notes.push_back(absl::StrCat(untested, " ranges could not be tested (too few iterations)"));
  }
  for (const GrowthLimit& g : limits.growth) {
    const std::string limit = absl::StrCat("max-growth ", g.text);
    if (g.kind == "live_bytes" || g.kind == "live_handles") {
      for (const RankReport& rank : report.ranks) {
        const StateSeries* s = nullptr;
        for (const StateSeries& x : rank.state) {
          if (x.metric == g.kind && x.dimension == "total")
            s = &x;
        }
        CheckItem it;
        it.check = "growth";
        it.subject =
            report.ranks.size() > 1 ? absl::StrCat(g.kind, " (rank ", rank.index, ")") : g.kind;
        it.limit = limit;
        it.unit = g.kind == "live_bytes" ? "bytes" : "handles";
        if (s != nullptr) {
          it.value = s->trend.slope_per_iter;
          it.significant = s->trend.tested && s->trend.rising;
        }
        it.pass = !(it.significant && it.value > g.rate);
        it.detail = s == nullptr
                        ? "no allocations in the trace"
                        : absl::StrFormat("%s %s per iteration (p = %.2g)%s", Number(it.value),
                                          it.unit, s->trend.p_value,
                                          it.pass ? "" : absl::StrCat(", over ", Number(g.rate)));
        r.items.push_back(std::move(it));
      }
      continue;
    }
    bool any = false;
    for (const Accumulator& a : report.accumulators) {
      if (g.kind != "any" && a.kind != g.kind)
        continue;
      any = true;
      CheckItem it;
      it.check = "growth";
      it.subject = a.id;
      it.limit = limit;
      it.unit = g.bytes ? "bytes" : a.unit;
      it.value =
          g.bytes ? (a.unit == "bytes" ? a.growth_per_iter : a.bytes_per_iter) : a.growth_per_iter;
      it.significant = true;  // an accumulator's growth passed the trend test
      it.pass = it.value <= g.rate;
      it.detail = absl::StrFormat("grows %s %s per iteration since iteration %d%s",
                                  Number(it.value), it.unit, a.growth_start_iteration,
                                  it.pass ? "" : absl::StrCat(", over ", Number(g.rate)));
      r.items.push_back(std::move(it));
    }
    if (!any) {
      CheckItem it;
      it.check = "growth";
      it.subject = g.kind;
      it.limit = limit;
      it.unit = g.bytes ? "bytes" : "";
      it.detail = g.kind == "any" ? "no accumulator" : absl::StrCat("no ", g.kind, " accumulator");
      r.items.push_back(std::move(it));
    }
  }
  std::stable_sort(r.items.begin(), r.items.end(),
                   [](const CheckItem& a, const CheckItem& b) { return !a.pass && b.pass; });
  for (const CheckItem& it : r.items) r.pass &= it.pass;
  r.inconclusive = Inconclusive(report);
  if (!r.inconclusive.empty()) {
    r.pass = false;
    r.notes.push_back(absl::StrCat("inconclusive: ", r.inconclusive));
  }
  if (report.partial)
    r.notes.push_back("a trace is cut or damaged: checked what was readable");
  for (const std::string& n : report.notes) r.notes.push_back(n);
  return r;
}

std::string CheckToJson(const CheckResult& result, const Report& report,
                        const CheckLimits& limits) {
  using html::Json;
  using html::Num;
  Json j;
  j["schema"] = kCheckSchema;
  j["pass"] = result.pass;
  j["verdict"] = !result.inconclusive.empty() ? "inconclusive" : result.pass ? "pass" : "fail";
  Json traces = Json::array();
  for (const RankReport& r : report.ranks) traces.push_back(r.trace.path);
  j["traces"] = std::move(traces);
  j["iterations"] = report.iterations.count;
  j["report_verdict"] = report.verdict;
  j["partial"] = report.partial;
  Json growth = Json::array();
  for (const GrowthLimit& g : limits.growth) growth.push_back(g.text);
  j["limits"] =
      Json{{"max_climb_pct", limits.max_climb_pct ? Num(*limits.max_climb_pct) : Json(nullptr)},
           {"max_growth", std::move(growth)},
           {"ranges", limits.ranges}};
  int failures = 0;
  Json checks = Json::array();
  for (const CheckItem& it : result.items) {
    failures += !it.pass;
    checks.push_back(Json{{"check", it.check},
                          {"subject", it.subject},
                          {"limit", it.limit},
                          {"value", Num(it.value)},
                          {"unit", it.unit},
                          {"significant", it.significant},
                          {"pass", it.pass},
                          {"detail", it.detail}});
  }
  j["failures"] = failures;
  j["checks"] = std::move(checks);
  j["notes"] = result.notes;
  return j.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string CheckToText(const CheckResult& result, const Report& report) {
  int failures = 0;
  for (const CheckItem& it : result.items) failures += !it.pass;
  if (!result.inconclusive.empty())
    return absl::StrCat("cuclimb check: INCONCLUSIVE: ", result.inconclusive, "\n");
  std::string out =
      absl::StrFormat("cuclimb check: %s: %d of %d check%s over %s limit, %d iterations%s\n",
                      result.pass ? "pass" : "FAIL", failures, result.items.size(),
                      result.items.size() == 1 ? "" : "s", failures == 1 ? "its" : "their",
                      report.iterations.count, report.partial ? " (partial trace)" : "");
  for (const CheckItem& it : result.items) {
    const std::string value = it.unit == "%" ? absl::StrFormat("%+.1f%%", it.value)
                                             : absl::StrCat(Number(it.value), " ", it.unit);
    std::string subject = it.subject;
    if (subject.size() > 44)
      subject = subject.substr(0, 41) + "...";
    absl::StrAppendFormat(&out, "  %-4s %-6s %-44s %s (limit %s)\n", it.pass ? "ok" : "FAIL",
                          it.check, subject, value, it.limit);
    if (!it.detail.empty())
      absl::StrAppend(&out, "       ", it.detail, "\n");
  }
  for (const std::string& n : result.notes) absl::StrAppend(&out, "  note: ", n, "\n");
  return out;
}

}  // namespace cuclimb::analysis
