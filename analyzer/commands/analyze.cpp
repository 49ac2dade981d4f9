// SPDX-License-Identifier: Apache-2.0
// `cuclimb analyze TRACE...`: flags → AnalyzeOptions → Analyze() → terminal and JSON reports.
#include "analysis/analyze.h"

#include <cstdio>
#include <string>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "commands/call_site_options.h"
#include "commands/commands.h"
#include "commands/jobs_option.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/text_report.h"
#include "util/args.h"
#include "util/cli.h"
#include "util/output_file.h"
#include "util/terminal_text.h"

namespace cuclimb::commands {
namespace {

const std::vector<util::OptionSpec> kOptions = {
    {"iteration", "NAME", "NVTX range or mark that delimits iterations (default: automatic)"},
    {"json", "FILE", "write the JSON report (schema cuclimb.report/1) to FILE ('-' = stdout)"},
    {"html", "FILE", "write the HTML report (one self-contained page, docs/reports.md) to FILE"},
    {"warmup", "N|auto", "iterations to skip before trend tests (default: auto)"},
    {"alpha", "P", "significance level of the Mann-Kendall tests (default 0.01)"},
    {"min-climb-pct", "X", "a range climbs only when first -> last grows by X% (default 5)"},
    {"min-share", "S",
     "an accumulator explains a range from this share of its growth (default 0.25)"},
    {"top", "N", "accumulators kept per trace, 0 = all (default 20)"},
    kSymbolsOption,
    kSymfsOption,
    kFramesInternalOption,
    kJobsOption,
    {"quiet", nullptr, "print nothing on stdout (with --json FILE) and no progress"},
    {"verbose", nullptr, "the full ranges table with slopes, p values and attribution statistics"},
};
constexpr char kUsage[] =
    "cuclimb analyze TRACE... [--iteration NAME] [--json FILE] [--html FILE] [--warmup N|auto]\n"
    "                       [--alpha P] [--min-climb-pct X] [--min-share S] [--top N]\n"
    "                       [--symbols DIR ...] [--frames-internal PATTERN ...] [--jobs N]\n"
    "                       [--quiet] [--verbose]";
constexpr char kDescription[] =
    "Finds the state that makes step time climb. Splits the run into iterations (an NVTX range or\n"
    "mark, or the period of the kernel-launch sequence), measures every NVTX range per iteration,\n"
    "tests which climb, finds what accumulates per iteration (allocations, pool memory, streams,\n"
    "events, modules, graphs, NVTX regions, host functions) and which of those explain the climb.\n"
    "Several traces are ranks of one job: one report, per rank and across ranks.\n"
    "A cut or damaged trace is analysed up to the damage; the report is marked partial and the\n"
    "exit status is 3. Thresholds and the JSON fields: docs/report-schema.md.";

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  ~ProgressBar() { Clear(); }
  void Update(const analysis::Progress& p) {
    if (!enabled_)
      return;
    shown_ = true;
    const double frac = p.bytes_total > 0
                            ? static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total)
                            : 0;
    const int width = 30, filled = static_cast<int>(frac * width);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.append(static_cast<size_t>(width - filled), '.');
    std::fprintf(stderr, "\rcuclimb analyze: trace %d/%d%s [%s] %3.0f%% %.1f M events ",
                 p.trace_index + 1, p.trace_count, p.pass == 2 ? " (second pass)" : "", bar.c_str(),
                 100 * frac, static_cast<double>(p.events) / 1e6);
    std::fflush(stderr);
  }
  void Clear() {
    if (!shown_)
      return;
    std::fprintf(stderr, "\r%80s\r", "");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

absl::Status ParseOptions(const util::ParsedArgs& args, analysis::AnalyzeOptions* o) {
  o->iteration = args.Get("iteration");
  const std::string warmup = args.Get("warmup", "auto");
  if (warmup == "auto") {
    o->thresholds.warmup = -1;
  } else {
    auto w = args.GetInt("warmup", -1);
    if (!w.ok() || *w < 0)
      return util::UsageError(absl::StrCat("--warmup wants N ≥ 0 or 'auto', not '", warmup, "'"));
    o->thresholds.warmup = *w;
  }
  auto alpha = args.GetDouble("alpha", o->thresholds.alpha);
  if (!alpha.ok())
    return util::UsageError(std::string(alpha.status().message()));
  if (!(*alpha > 0 && *alpha < 1))
    return util::UsageError("--alpha wants 0 < P < 1");
  o->thresholds.alpha = *alpha;
  auto climb = args.GetDouble("min-climb-pct", o->thresholds.min_climb_pct);
  if (!climb.ok())
    return util::UsageError(std::string(climb.status().message()));
  if (*climb < 0)
    return util::UsageError("--min-climb-pct wants X ≥ 0");
  o->thresholds.min_climb_pct = *climb;
  auto share = args.GetDouble("min-share", o->thresholds.min_share);
  if (!share.ok())
    return util::UsageError(std::string(share.status().message()));
  if (!(*share >= 0 && *share <= 1))
    return util::UsageError("--min-share wants 0 ≤ S ≤ 1");
  o->thresholds.min_share = *share;
  auto top = args.GetInt("top", o->top);
  if (!top.ok())
    return util::UsageError(std::string(top.status().message()));
  if (*top < 0)
    return util::UsageError("--top wants N ≥ 0");
  o->top = static_cast<int>(*top);
  if (absl::Status s = ApplyJobsOption(args, o); !s.ok())
    return s;
  return ApplyCallSiteOptions(args, o);
}

int RunAnalyze(const util::ParsedArgs& parsed) {
  const util::ParsedArgs* args = &parsed;
  if (args->positionals.empty()) {
    return util::ReportError(
        "analyze", util::UsageError("expected at least one TRACE (see 'cuclimb analyze --help')"));
  }
  analysis::AnalyzeOptions options;
  if (absl::Status s = ParseOptions(*args, &options); !s.ok())
    return util::ReportError("analyze", s);
  const bool quiet = args->Has("quiet");
  const std::string json_path = args->Get("json");
  // Outputs never replace an input, and a bad output path fails before a long analysis.
  util::ProtectInputs(args->positionals);
  for (const std::string& out : {json_path, args->Get("html")}) {
    if (absl::Status s = out.empty() ? absl::OkStatus() : util::CheckOutputPath(out); !s.ok())
      return util::ReportError("analyze", s);
  }
  ProgressBar bar(!quiet && isatty(STDERR_FILENO) == 1);
  options.progress = [&bar](const analysis::Progress& p) { bar.Update(p); };
  auto report = analysis::Analyze(args->positionals, options);
  bar.Clear();
  if (!report.ok())
    return util::ReportError("analyze", report.status());
  if (!json_path.empty()) {
    analysis::JsonOptions json_options;
    json_options.jobs = options.jobs;
    auto json = analysis::ToJson(*report, json_options);
    if (!json.ok())
      return util::ReportError("analyze", util::OutputError(json.status()));
    if (absl::Status s = util::WriteFile(json_path, *json); !s.ok())
      return util::ReportError("analyze", s);
  }
  // --html (report/html_report.h): the same report as one self-contained page.
  const std::string html_path = args->Get("html");
  if (!html_path.empty()) {
    analysis::HtmlOptions html_options;
    html_options.jobs = options.jobs;
    auto html = analysis::ToHtml(*report, html_options);
    if (!html.ok())
      return util::ReportError("analyze", util::OutputError(html.status()));
    if (absl::Status s = util::WriteFile(html_path, *html); !s.ok())
      return util::ReportError("analyze", s);
  }
  if (!quiet && json_path != "-" && html_path != "-") {
    analysis::TextOptions text;
    text.verbose = args->Has("verbose");
    text.html_path = html_path;
    if (absl::Status s =
            util::WriteFile("-", util::TerminalSafe(analysis::ToText(*report, text), true));
        !s.ok()) {
      return util::ReportError("analyze", s);
    }
  }
  if (report->partial) {
    std::fprintf(
        stderr,
        "cuclimb analyze: a trace is cut or damaged; the report covers what was readable\n");
    return util::kExitBadTrace;
  }
  return util::kExitOk;
}

}  // namespace

const Command kAnalyzeCommand = {
    "analyze",
    "find what accumulates and how much of the step-time climb it explains",
    kUsage,
    kDescription,
    &kOptions,
    nullptr,
    util::ArgMode::kInterleaved,
    RunAnalyze};

}  // namespace cuclimb::commands
