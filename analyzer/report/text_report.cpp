// SPDX-License-Identifier: Apache-2.0
// Report → terminal text.
#include "report/text_report.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuclimb::analysis {
namespace {

std::string Pct(double pct) {
  return absl::StrFormat("%+.1f%%", pct);
}

std::string P(double p) {
  if (p < 1e-99)
    return "<1e-99";
  return absl::StrFormat("%.2g", p);
}

std::string Clip(const std::string& s, size_t width) {
  if (s.size() <= width)
    return s;
  return s.substr(0, width - 3) + "...";
}

// "lives on rank 1 (+2 handles/iter); not on ranks 0, 2, 3".
std::string WhereItLives(const Accumulator& a) {
  std::string lives, absent;
  int lives_count = 0, absent_count = 0;
  for (const AccumulatorOnRank& on : a.by_rank) {
    if (on.lives) {
      const std::string growth =
          a.unit == "bytes" ? absl::StrCat(FormatQuantity(on.growth_per_iter, "bytes"), "/iter")
                            : absl::StrFormat("%.3g %s/iter", on.growth_per_iter, a.unit);
      absl::StrAppend(&lives, lives_count++ ? ", " : "", on.rank, " (",
                      on.growth_per_iter >= 0 ? "+" : "", growth, ")");
    } else {
      absl::StrAppend(&absent, absent_count++ ? ", " : "", on.rank);
    }
  }
  std::string out = absl::StrCat("lives on rank", lives_count == 1 ? " " : "s ", lives);
  if (absent_count > 0)
    absl::StrAppend(&out, "; not on rank", absent_count == 1 ? " " : "s ", absent);
  return out;
}

void RangesTable(const Report& report, const TextOptions& o, std::string* out) {
  if (report.ranges.empty()) {
    absl::StrAppend(out, "no NVTX range repeats in most iterations: nothing to time\n");
    return;
  }
  size_t width = 5;
  for (const RangeReport& r : report.ranges)
    width = std::max(width, std::min<size_t>(r.name.size(), 40));
  absl::StrAppendFormat(out, "%-*s  %10s    %-10s %8s  %12s  %8s\n", static_cast<int>(width),
                        "range", "first", "→ last", "climb", "slope/iter", "p");
  int shown = 0, hidden = 0;
  for (const RangeReport& r : report.ranges) {
    if (!r.climbing && shown >= o.max_ranges) {
      ++hidden;
      continue;
    }
    ++shown;
    const Trend& t = r.trend;
    absl::StrAppendFormat(
        out, "%-*s  %10s →  %-10s %8s  %12s  %8s%s\n", static_cast<int>(width), Clip(r.name, width),
        FormatMs(t.first), FormatMs(t.last), t.tested ? Pct(t.change_pct) : "-",
        t.tested
            ? absl::StrCat(t.slope_per_iter >= 0 ? "+" : "-", FormatMs(std::fabs(t.slope_per_iter)))
            : "-",
        t.tested ? P(t.p_value) : "-", r.climbing ? "  climbing" : "");
    if (r.climbing && o.details && !r.where_time_goes.empty()) {
      absl::StrAppend(out, "    ", r.where_time_goes, "\n");
    }
    if (r.climbing && !r.by_rank.summary.empty())
      absl::StrAppend(out, "    on the ranks: ", r.by_rank.summary, "\n");
    if (r.climbing && !r.explained_by.empty()) {
      absl::StrAppend(out, "    explained by: ");
      for (size_t i = 0; i < r.explained_by.size(); ++i)
        absl::StrAppend(out, i ? ", " : "", r.explained_by[i]);
      absl::StrAppend(out, "\n");
    }
  }
  if (hidden > 0)
    absl::StrAppendFormat(out, "(%d more ranges in the JSON report)\n", hidden);
}

}  // namespace

std::string FormatMs(double ms) {
  const double a = std::fabs(ms);
  if (a >= 1000)
    return absl::StrFormat("%.3g s", ms / 1000);
  if (a >= 1)
    return absl::StrFormat("%.3g ms", ms);
  if (a >= 1e-3)
    return absl::StrFormat("%.3g µs", ms * 1000);
  if (a == 0)
    return "0";
  return absl::StrFormat("%.3g ns", ms * 1e6);
}

std::string FormatQuantity(double v, const std::string& unit) {
  if (unit == "ms")
    return FormatMs(v);
  if (unit == "us")
    return FormatMs(v / 1000);
  if (unit == "bytes") {
    const double a = std::fabs(v);
    if (a >= 1 << 30)
      return absl::StrFormat("%.3g GiB", v / (1 << 30));
    if (a >= 1 << 20)
      return absl::StrFormat("%.3g MiB", v / (1 << 20));
    if (a >= 1 << 10)
      return absl::StrFormat("%.3g KiB", v / (1 << 10));
    return absl::StrFormat("%.4g B", v);
  }
  return absl::StrFormat("%.4g", v);
}

std::string ToText(const Report& report, const TextOptions& o) {
  std::string out;
  const Iterations& it = report.iterations;
  absl::StrAppendFormat(&out, "cuclimb analyze: %d trace%s, %d iterations", report.ranks.size(),
                        report.ranks.size() == 1 ? "" : "s", it.count);
  if (it.source != "none" && it.source != "mixed") {
    absl::StrAppendFormat(&out, " from %s \"%s\"", it.source, it.name);
  } else if (it.source == "mixed") {
    absl::StrAppend(&out, " (iteration sources differ between ranks)");
  }
  absl::StrAppend(&out, report.partial ? " [partial]" : "", "\n");
  if (!it.why.empty())
    absl::StrAppend(&out, "  ", it.why, "\n");
  absl::StrAppend(&out, "\n");
  RangesTable(report, o, &out);
  absl::StrAppend(&out, "\n");
  if (report.accumulators.empty()) {
    absl::StrAppend(&out, "accumulators: none (no state grows steadily per iteration)\n");
  } else {
    absl::StrAppend(&out, "accumulators:\n");
    int shown = 0;
    for (const Accumulator& a : report.accumulators) {
      if (shown++ >= o.max_accumulators) {
        absl::StrAppendFormat(&out, "  (%d more in the JSON report)\n",
                              report.accumulators.size() - static_cast<size_t>(o.max_accumulators));
        break;
      }
      absl::StrAppendFormat(&out, "%3d. %-19s %s\n", a.rank, a.kind, a.key);
      absl::StrAppend(&out, "     ", a.evidence, "\n");
      if (!a.by_rank.empty())
        absl::StrAppend(&out, "     ", WhereItLives(a), "\n");
    }
  }
  if (report.straggler.found)
    absl::StrAppend(&out, "\nstraggler:\n  ", report.straggler.summary, "\n");
  if (report.ranks.size() > 1) {
    absl::StrAppend(&out, "\nper rank:\n");
    for (const RankReport& r : report.ranks) {
      int climbing = 0;
      for (const RangeReport& rr : r.ranges) climbing += rr.climbing;
      absl::StrAppendFormat(
          &out, "  rank %d %s: %d iterations, %d climbing ranges, %d accumulator%s%s\n",
          r.index < static_cast<int>(report.job_ranks.size())
              ? report.job_ranks[static_cast<size_t>(r.index)]
              : r.index,
          r.trace.path, r.iterations.count, climbing, r.accumulators.size(),
          r.accumulators.size() == 1 ? "" : "s", r.trace.partial ? " [partial]" : "");
    }
  }
  if (!report.notes.empty()) {
    absl::StrAppend(&out, "\nnotes:\n");
    for (const std::string& n : report.notes) absl::StrAppend(&out, "  - ", n, "\n");
  }
  absl::StrAppend(&out, "\nverdict: ", report.verdict, "\n");
  return out;
}

}  // namespace cuclimb::analysis
