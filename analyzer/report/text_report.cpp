// SPDX-License-Identifier: Apache-2.0
// Report → terminal text.
#include "report/text_report.h"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "report/headline.h"

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

std::string WhereItLives(const Accumulator& a);

// Appends `text` as lines of at most kWidth columns (UTF-8 characters), breaking at spaces; the
// first line starts with `first`, the others with `rest`. A word longer than a line is kept whole.
constexpr size_t kWidth = 100;

size_t Columns(absl::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

void AppendWrapped(std::string* out, absl::string_view first, absl::string_view rest,
                   absl::string_view text) {
  std::string line(first.data(), first.size());
  size_t used = Columns(first);
  bool empty = true;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    const size_t w = Columns(word);
    if (!empty && used + 1 + w > kWidth) {
      absl::StrAppend(out, line, "\n");
      line = std::string(rest.data(), rest.size());
      used = Columns(rest);
      empty = true;
    }
    if (!empty) {
      line.push_back(' ');
      ++used;
    }
    line.append(word.data(), word.size());
    used += w;
    empty = false;
  }
  absl::StrAppend(out, line, "\n");
}

// A shell command on one line when it fits, else continued with " \\" at word boundaries.
void AppendCommand(std::string* out, absl::string_view indent, absl::string_view command) {
  std::string line(indent.data(), indent.size());
  bool empty = true;
  for (absl::string_view word : absl::StrSplit(command, ' ', absl::SkipEmpty())) {
    if (!empty && Columns(line) + 1 + Columns(word) + 2 > kWidth) {
      absl::StrAppend(out, line, " \\\n");
      line = absl::StrCat(indent, "    ");
      empty = true;
    }
    if (!empty)
      line.push_back(' ');
    line.append(word.data(), word.size());
    empty = false;
  }
  absl::StrAppend(out, line, "\n");
}

void HeadlineBlock(const Headline& h, std::string* out) {
  AppendWrapped(out, "what:  ", "       ", h.what);
  if (!h.cause.empty())
    AppendWrapped(out, "cause: ", "       ", h.cause);
  if (!h.where.empty())
    AppendWrapped(out, "where: ", "       ", h.where);
  absl::StrAppend(out, "next:\n");
  for (const NextStep& n : h.next) {
    AppendWrapped(out, "  # ", "  # ", n.why);
    AppendCommand(out, "  ", n.command);
  }
}

// "    name   11.5 ms → 17.2 ms   +50%   host +5.49 ms, calls −663 µs": the range's levels, its
// climb and, for a climbing range, how each part of its time changed over the run (host code
// between CUDA calls, time inside calls, waiting for the GPU, GPU time), largest first; parts
// that shrank are listed too, so a share above 100 % is never left unexplained.
std::string RangeLine(const RangeReport& r, size_t name_width) {
  const Trend& t = r.trend;
  std::string line =
      absl::StrFormat("    %-*s %9s → %-9s %5s", static_cast<int>(name_width),
                      Clip(r.name, name_width), FormatMs(t.first), FormatMs(t.last),
                      t.tested ? absl::StrFormat("%+.0f%%", t.change_pct) : std::string("-"));
  if (!r.climbing)
    return line;
  const Decomposition& d = r.decomposition;
  const double wall = std::fabs(d.wall.delta_ms);
  std::vector<std::pair<double, const char*>> parts = {{d.host.delta_ms, "host"},
                                                       {d.api.delta_ms, "calls"},
                                                       {d.sync.delta_ms, "sync"},
                                                       {d.gpu.delta_ms, "GPU"}};
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string grew;
  for (const auto& [delta, what] : parts) {
    if (std::fabs(delta) < 0.05 * wall || delta == 0)
      continue;
    absl::StrAppend(&grew, grew.empty() ? "   " : ", ", what, " ", delta > 0 ? "+" : "−",
                    FormatMs(std::fabs(delta)));
  }
  return absl::StrCat(line, grew);
}

// The heading a climbing range is listed under: the accumulator that explains it, else the one
// that is its most likely cause, else one it only rises with (a correlation, so it does not read
// as a contradiction; the same verdicts as the accumulators' lines); otherwise where its extra
// time goes.
std::string GroupTitle(const Report& report, const RangeReport& r) {
  const Accumulator* best = nullptr;
  int best_grade = 0;
  for (const Accumulator& a : report.accumulators) {
    for (const Explanation& e : a.explanations) {
      const int grade = e.verdict == kExplains         ? 3
                        : e.verdict == kLikelyCause    ? 2
                        : e.verdict == kCorrelatedOnly ? 1
                                                       : 0;
      if (e.range == r.name && grade > best_grade) {
        best = &a;
        best_grade = grade;
      }
    }
  }
  if (best_grade == 3)
    return absl::StrCat("explained by accumulator ", best->rank, " (", best->kind, " ", best->key,
                        "):");
  if (best_grade == 2)
    return absl::StrCat("most likely caused by accumulator ", best->rank, " (", best->kind, " ",
                        best->key,
                        "); both rise in straight lines, so the other evidence decides:");
  if (best_grade == 1)
    return absl::StrCat("rising with accumulator ", best->rank,
                        " without following its shape (a correlation, not the cause):");
  if (r.cause.kind == kCauseMachine)
    return "climbing with the whole machine (every part of the time scales together):";
  if (r.cause.kind == kCauseGpu)
    return "climbing in GPU time (the same kernels run slower), no growing state behind them:";
  if (r.cause.kind == kCauseWork)
    return "climbing with more CUDA calls or launches per iteration:";
  return "climbing with no growing state behind them:";
}

void GroupedRanges(const Report& report, const TextOptions& o, std::string* out) {
  if (report.ranges.empty()) {
    absl::StrAppend(out, "no NVTX range repeats in most iterations: nothing to time\n");
    return;
  }
  size_t width = 8;
  for (const RangeReport& r : report.ranges)
    width = std::max(width, std::min<size_t>(Columns(r.name), 32));
  // Groups in report order: each accumulator's explained ranges, then the ranges that only rise
  // with one, then the climbing ranges nothing grows with.
  std::vector<std::pair<std::string, std::vector<const RangeReport*>>> groups;
  auto group = [&groups](const std::string& title) -> std::vector<const RangeReport*>& {
    for (auto& g : groups) {
      if (g.first == title)
        return g.second;
    }
    groups.emplace_back(title, std::vector<const RangeReport*>{});
    return groups.back().second;
  };
  std::vector<const RangeReport*> flat;
  for (const RangeReport& r : report.ranges) {
    if (!r.climbing) {
      flat.push_back(&r);
      continue;
    }
    group(GroupTitle(report, r)).push_back(&r);
  }
  if (!groups.empty()) {
    absl::StrAppend(out,
                    "climbing ranges: time per iteration, first → last, and its change over the "
                    "run in\nhost code between CUDA calls, time inside calls, sync waits and GPU "
                    "time\n");
    for (const auto& [title, ranges] : groups) {
      AppendWrapped(out, "  ", "    ", title);
      for (const RangeReport* r : ranges) {
        absl::StrAppend(out, RangeLine(*r, width), "\n");
        if (!r->by_rank.summary.empty())
          AppendWrapped(out, "      on the ranks: ", "        ", r->by_rank.summary);
      }
    }
  }
  if (!flat.empty()) {
    if (!groups.empty()) {
      absl::StrAppendFormat(out, "%d other range%s flat (--verbose lists them)\n", flat.size(),
                            flat.size() == 1 ? " is" : "s are");
      return;
    }
    absl::StrAppend(out, "ranges, time per iteration (first → last):\n");
    int shown = 0;
    for (const RangeReport* r : flat) {
      if (shown++ >= o.max_ranges) {
        absl::StrAppendFormat(out, "  (%d more in --verbose and the JSON report)\n",
                              flat.size() - static_cast<size_t>(o.max_ranges));
        break;
      }
      absl::StrAppend(out, RangeLine(*r, width).substr(2), "\n");
    }
  }
}

void AccumulatorsBlock(const Report& report, const TextOptions& o, std::string* out) {
  if (report.accumulators.empty()) {
    absl::StrAppend(out, "accumulators: none (no state grows steadily per iteration)\n");
    return;
  }
  absl::StrAppend(out, "accumulators (state that grows every iteration):\n");
  int shown = 0;
  for (const Accumulator& a : report.accumulators) {
    if (shown++ >= o.max_accumulators) {
      absl::StrAppendFormat(out, "  (%d more in the JSON report)\n",
                            report.accumulators.size() - static_cast<size_t>(o.max_accumulators));
      break;
    }
    AppendWrapped(out, absl::StrFormat("%3d. ", a.rank), "     ",
                  absl::StrCat(a.kind, "  ", a.key));
    if (o.verbose) {
      AppendWrapped(out, "     ", "       ", a.evidence);
      for (const std::string& frame : a.site.frames)
        AppendWrapped(out, "       at ", "          ", frame);
      for (const Explanation& e : a.explanations) {
        AppendWrapped(
            out, "       ", "         ",
            absl::StrFormat("%s: %s, share %.0f%%, r %.2f, partial r %.2f (p %s); %s", e.range,
                            e.verdict, 100 * e.share, e.r, e.partial_r, P(e.partial_p), e.reason));
      }
      continue;
    }
    int explains = 0, likely = 0, rises = 0;
    for (const Explanation& e : a.explanations) {
      explains += e.verdict == kExplains;
      likely += e.verdict == kLikelyCause;
      rises += e.verdict == kCorrelatedOnly;
    }
    std::string line = absl::StrCat(StatePhrase(a), ", since iteration ", a.growth_start_iteration);
    const char* sep = "; ";
    if (explains > 0) {
      absl::StrAppendFormat(&line, "%sexplains %d climbing range%s", sep, explains,
                            explains == 1 ? "" : "s");
      sep = ", ";
    }
    if (likely > 0) {
      absl::StrAppendFormat(&line, "%sthe likely cause of %d%s", sep, likely,
                            explains > 0  ? " more"
                            : likely == 1 ? " climbing range"
                                          : " climbing ranges");
      sep = ", ";
    }
    if (rises > 0)
      absl::StrAppendFormat(&line, "%srises with %d %s", sep, rises,
                            explains + likely > 0 ? "more"
                            : rises == 1          ? "climbing range"
                                                  : "climbing ranges");
    AppendWrapped(out, "     ", "     ", line);
    if (!a.site.frames.empty())
      AppendWrapped(out, "     at ", "        ", a.site.label);
    if (!a.by_rank.empty())
      AppendWrapped(out, "     ", "       ", WhereItLives(a));
  }
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
    width = std::max(width, std::min<size_t>(r.name.size(), 32));
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
      AppendWrapped(out, "    ", "      ", r.where_time_goes);
    }
    if (r.climbing && !r.by_rank.summary.empty())
      AppendWrapped(out, "    on the ranks: ", "      ", r.by_rank.summary);
    if (r.climbing && !r.explained_by.empty()) {
      AppendWrapped(out, "    ", "      ",
                    absl::StrCat("explained by: ", absl::StrJoin(r.explained_by, ", ")));
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
  std::string title =
      absl::StrFormat("cuclimb analyze: %d trace%s, %d iterations", report.ranks.size(),
                      report.ranks.size() == 1 ? "" : "s", it.count);
  if (it.source != "none" && it.source != "mixed") {
    absl::StrAppendFormat(&title, " from %s \"%s\"", it.source, it.name);
  } else if (it.source == "mixed") {
    absl::StrAppend(&title, " (iteration sources differ between ranks)");
  }
  AppendWrapped(&out, "", "  ", absl::StrCat(title, report.partial ? " [partial]" : ""));
  if (o.verbose && !it.why.empty())
    AppendWrapped(&out, "  ", "  ", it.why);
  absl::StrAppend(&out, "\n");
  HeadlineOptions ho;
  ho.html_path = o.html_path;
  HeadlineBlock(MakeHeadline(report, ho), &out);
  absl::StrAppend(&out, "\n");
  if (o.verbose)
    RangesTable(report, o, &out);
  else
    GroupedRanges(report, o, &out);
  absl::StrAppend(&out, "\n");
  AccumulatorsBlock(report, o, &out);
  if (report.straggler.found) {
    absl::StrAppend(&out, "\nstraggler:\n");
    AppendWrapped(&out, "  ", "  ", report.straggler.summary);
  }
  if (report.ranks.size() > 1) {
    absl::StrAppend(&out, "\nper rank:\n");
    for (const RankReport& r : report.ranks) {
      int climbing = 0;
      for (const RangeReport& rr : r.ranges) climbing += rr.climbing;
      AppendWrapped(
          &out, "  ", "    ",
          absl::StrFormat("rank %d %s: %d iterations, %d climbing ranges, %d accumulator%s%s",
                          r.index < static_cast<int>(report.job_ranks.size())
                              ? report.job_ranks[static_cast<size_t>(r.index)]
                              : r.index,
                          r.trace.path, r.iterations.count, climbing, r.accumulators.size(),
                          r.accumulators.size() == 1 ? "" : "s",
                          r.trace.partial ? " [partial]" : ""));
    }
  }
  if (!report.notes.empty()) {
    absl::StrAppend(&out, "\nnotes:\n");
    for (const std::string& n : report.notes) AppendWrapped(&out, "  - ", "    ", n);
  }
  absl::StrAppend(&out, "\nverdict: ", report.verdict, "\n");
  return out;
}

}  // namespace cuclimb::analysis
