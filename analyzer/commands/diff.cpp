// SPDX-License-Identifier: Apache-2.0
// `cuclimb diff BASE OTHER`: two runs aligned by iteration and stable keys; the first iteration
// where they diverge and what differs (diff/diff.h). Terminal, --json and --html.
#include "diff/diff.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "commands/call_site_options.h"
#include "commands/commands.h"
#include "commands/jobs_option.h"
#include "commands/progress.h"
#include "util/args.h"
#include "util/cli.h"
#include "util/output_file.h"
#include "util/terminal_text.h"

namespace cuclimb::commands {
namespace {

const std::vector<util::OptionSpec> kOptions = {
    {"json", "FILE", "write the diff as JSON (schema cuclimb.diff/1) to FILE ('-' = stdout)"},
    {"html", "FILE", "write the diff as one self-contained HTML page to FILE"},
    {"iteration", "NAME",
     "NVTX range or mark that delimits iterations in both runs (default: automatic)"},
    {"time-tolerance-pct", "X",
     "times diverge beyond X% of their level and their noise (default 5)"},
    {"count-tolerance-pct", "X", "counts diverge beyond max(0.5, X% of their level) (default 1)"},
    {"persist", "N", "iterations a difference must last to count (default: max(3, aligned/50))"},
    {"fail-on-divergence", nullptr, "exit 1 when the runs diverge (a CI gate)"},
    kSymbolsOption,
    kSymfsOption,
    kFramesInternalOption,
    kJobsOption,
    {"quiet", nullptr, "print nothing on stdout (with --json/--html FILE) and no progress"},
};
constexpr char kUsage[] =
    "cuclimb diff BASE OTHER [--json FILE] [--html FILE] [--iteration NAME]\n"
    "                        [--time-tolerance-pct X] [--count-tolerance-pct X] [--persist N]\n"
    "                        [--fail-on-divergence] [--quiet] [--symbols DIR ...]\n"
    "                        [--frames-internal PATTERN ...] [--jobs N]";
constexpr char kDescription[] =
    "Compares two runs of a program (flat vs climb, before vs after a fix): analyses each trace,\n"
    "aligns their iterations (by NVTX payload when both number them, else by index) and their\n"
    "ranges, accumulators, allocation call sites, memory kinds, handle types and kernels by name,\n"
    "and reports the first iteration from which they stay apart and what differs there. Exit\n"
    "status 0 (1 with --fail-on-divergence when they diverge), 2 usage, 3 unreadable or cut\n"
    "trace, 4 output. See docs/reports.md.";

int RunDiff(const util::ParsedArgs& parsed) {
  const util::ParsedArgs* args = &parsed;
  if (args->positionals.size() != 2) {
    return util::ReportError(
        "diff", util::UsageError("expected BASE and OTHER traces (see 'cuclimb diff --help')"));
  }
  analysis::DiffOptions d;
  auto time_tol = args->GetDouble("time-tolerance-pct", d.time_tolerance_pct);
  auto count_tol = args->GetDouble("count-tolerance-pct", d.count_tolerance_pct);
  auto persist = args->GetInt("persist", d.persist);
  for (const auto* v : {&time_tol, &count_tol}) {
    if (!v->ok())
      return util::ReportError("diff", util::UsageError(std::string(v->status().message())));
  }
  if (*time_tol < 0)
    return util::ReportError("diff", util::UsageError("--time-tolerance-pct wants X ≥ 0"));
  if (*count_tol < 0)
    return util::ReportError("diff", util::UsageError("--count-tolerance-pct wants X ≥ 0"));
  if (!persist.ok() || *persist < 0)
    return util::ReportError("diff", util::UsageError("--persist wants N ≥ 0"));
  d.time_tolerance_pct = *time_tol;
  d.count_tolerance_pct = *count_tol;
  d.persist = *persist;
  const std::string json_path = args->Get("json"), html_path = args->Get("html");
  // Outputs never replace an input, and a bad output path fails before a long analysis.
  util::ProtectInputs(args->positionals);
  for (const std::string& out : {json_path, html_path}) {
    if (absl::Status s = out.empty() ? absl::OkStatus() : util::CheckOutputPath(out); !s.ok())
      return util::ReportError("diff", s);
  }
  const bool quiet = args->Has("quiet");
  ProgressBar bar("diff", !quiet);
  analysis::Report reports[2];
  const char* labels[2] = {"base", "other"};
  bool partial = false;
  for (int i = 0; i < 2; ++i) {
    analysis::AnalyzeOptions options;
    if (absl::Status s = ApplyCallSiteOptions(*args, &options); !s.ok())
      return util::ReportError("diff", s);
    if (absl::Status s = ApplyJobsOption(*args, &options); !s.ok())
      return util::ReportError("diff", s);
    options.iteration = args->Get("iteration");
    options.top = 0;
    options.progress = [&bar, label = labels[i]](const analysis::Progress& p) {
      bar.Update(label, p);
    };
    auto report = analysis::Analyze({args->positionals[static_cast<size_t>(i)]}, options);
    bar.Clear();
    if (!report.ok())
      return util::ReportError("diff", report.status());
    partial |= report->partial;
    reports[i] = *std::move(report);
  }
  const analysis::DiffReport diff = analysis::DiffReports(reports[0], reports[1], d);
  if (!json_path.empty()) {
    auto json = analysis::DiffToJson(diff);
    if (!json.ok())
      return util::ReportError("diff", util::OutputError(json.status()));
    if (absl::Status s = util::WriteFile(json_path, *json); !s.ok())
      return util::ReportError("diff", s);
  }
  if (!html_path.empty()) {
    auto html = analysis::DiffToHtml(diff);
    if (!html.ok())
      return util::ReportError("diff", util::OutputError(html.status()));
    if (absl::Status s = util::WriteFile(html_path, *html); !s.ok())
      return util::ReportError("diff", s);
  }
  if (!quiet && json_path != "-" && html_path != "-") {
    if (absl::Status s = util::WriteFile("-", util::TerminalSafe(analysis::DiffToText(diff), true));
        !s.ok())
      return util::ReportError("diff", s);
  }
  // Damage first: a cut trace's verdict is unreliable either way, so a gate neither passes nor
  // fails on it. An empty trace gives a gate nothing to compare: it never passes.
  if (partial) {
    std::fprintf(stderr, "cuclimb diff: a trace is cut or damaged; compared what was readable\n");
    return util::kExitBadTrace;
  }
  if (args->Has("fail-on-divergence")) {
    for (int i = 0; i < 2; ++i) {
      if (reports[i].ranks.empty() || reports[i].ranks[0].trace.events == 0) {
        std::fprintf(stderr, "cuclimb diff: %s has no events: an empty trace never passes a gate\n",
                     args->positionals[static_cast<size_t>(i)].c_str());
        return util::kExitBadTrace;
      }
    }
    if (diff.verdict == "diverged")
      return util::kExitFindings;
  }
  return util::kExitOk;
}

}  // namespace

const Command kDiffCommand = {"diff",
                              "compare two runs iteration by iteration: where they diverge and why",
                              kUsage,
                              kDescription,
                              &kOptions,
                              nullptr,
                              util::ArgMode::kInterleaved,
                              RunDiff};

}  // namespace cuclimb::commands
