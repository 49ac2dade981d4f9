// SPDX-License-Identifier: Apache-2.0
// `cuclimb check TRACE... [--max-climb PCT] [--max-growth KIND=RATE ...]`: an accumulation
// regression test for CI. Prints a JSON verdict (cuclimb.check/1) on stdout; exits 0 within the
// limits, 1 over them, 3 when the trace cannot be read (or is cut, unless --allow-partial).
#include "diff/check.h"

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

namespace cuclimb::commands {
namespace {

const std::vector<util::OptionSpec> kOptions = {
    {"max-climb", "PCT",
     "fail when a range's step time climbs by more than PCT% (significant trend only)"},
    {"max-growth", "KIND=RATE",
     "fail when an accumulator of KIND grows faster than RATE per iteration; KIND: "
     "device_allocations, "
     "pinned_allocations, managed_allocations, vmm_mappings, pool_reserved, streams, events, "
     "modules, graphs, "
     "nvtx_regions, host_function, any, live_bytes, live_handles; RATE in the kind's unit, or "
     "bytes with a "
     "B/KiB/MiB/GiB suffix",
     true},
    {"range", "NAME", "apply --max-climb to this range only (repeatable; default: every range)",
     true},
    {"iteration", "NAME", "NVTX range or mark that delimits iterations (default: automatic)"},
    {"warmup", "N|auto", "iterations to skip before trend tests (default: auto)"},
    kSymbolsOption,
    kSymfsOption,
    kFramesInternalOption,
    kJobsOption,
    {"allow-partial", nullptr,
     "judge a cut or damaged trace on what was readable instead of exiting 3"},
    {"json", "FILE", "write the verdict as JSON (schema cuclimb.check/1) to FILE ('-' = stdout)"},
    {"quiet", nullptr, "print nothing on stdout (with --json FILE) and no progress"},
};
constexpr char kUsage[] =
    "cuclimb check TRACE... [--max-climb PCT] [--max-growth KIND=RATE ...] [--range NAME ...]\n"
    "                     [--iteration NAME] [--warmup N|auto] [--allow-partial] [--json FILE]\n"
    "                     [--quiet] [--symbols DIR ...] [--frames-internal PATTERN ...]\n"
    "                     [--jobs N]";
constexpr char kDescription[] =
    "An accumulation regression test for CI: analyses the trace(s) like `cuclimb analyze` and\n"
    "compares the result with limits. Prints the verdict (every check, failures first) on\n"
    "stdout; --json FILE writes it as JSON (schema cuclimb.check/1, docs/report-schema.md),\n"
    "'--json -' on stdout instead. Exit status: 0 within the limits, 1 over a limit, 2 bad\n"
    "usage, 3 unreadable trace (or cut/damaged without --allow-partial). Without any limit, a\n"
    "significant climb above the analyzer's own threshold (5%) fails.";

int RunCheck(const util::ParsedArgs& parsed) {
  const util::ParsedArgs* args = &parsed;
  if (args->positionals.empty()) {
    return util::ReportError(
        "check", util::UsageError("expected at least one TRACE (see 'cuclimb check --help')"));
  }
  util::ProtectInputs(args->positionals);
  analysis::CheckLimits limits;
  if (args->Has("max-climb")) {
    auto climb = args->GetDouble("max-climb", 0);
    if (!climb.ok())
      return util::ReportError("check", util::UsageError(std::string(climb.status().message())));
    if (*climb < 0)
      return util::ReportError("check", util::UsageError("--max-climb wants PCT ≥ 0"));
    limits.max_climb_pct = *climb;
  }
  for (const std::string& g : args->GetAll("max-growth")) {
    auto limit = analysis::ParseGrowthLimit(g);
    if (!limit.ok())
      return util::ReportError("check", util::UsageError(std::string(limit.status().message())));
    limits.growth.push_back(*limit);
  }
  limits.ranges = args->GetAll("range");
  analysis::AnalyzeOptions options;
  if (absl::Status s = ApplyCallSiteOptions(*args, &options); !s.ok())
    return util::ReportError("check", s);
  if (absl::Status s = ApplyJobsOption(*args, &options); !s.ok())
    return util::ReportError("check", s);
  options.iteration = args->Get("iteration");
  options.top = 0;  // every accumulator: a limit must see all of them
  const std::string warmup = args->Get("warmup", "auto");
  if (warmup != "auto") {
    auto w = args->GetInt("warmup", -1);
    if (!w.ok() || *w < 0)
      return util::ReportError("check", util::UsageError("--warmup wants N ≥ 0 or 'auto'"));
    options.thresholds.warmup = *w;
  }
  ProgressBar bar("check", !args->Has("quiet"));
  options.progress = [&bar](const analysis::Progress& p) {
    bar.Update(absl::StrCat("trace ", p.trace_index + 1, "/", p.trace_count), p);
  };
  auto report = analysis::Analyze(args->positionals, options);
  bar.Clear();
  if (!report.ok())
    return util::ReportError("check", report.status());
  analysis::CheckResult result = analysis::RunCheck(*report, limits);
  // A cut or damaged trace is refused before any finding: the missing part could hold anything.
  if (report->partial && !args->Has("allow-partial") && result.inconclusive.empty()) {
    result.inconclusive = "a trace is cut or damaged (--allow-partial judges what was readable)";
    result.pass = false;
  }
  const std::string json_path = args->Get("json");
  if (!json_path.empty()) {
    if (absl::Status s = util::WriteFile(json_path, analysis::CheckToJson(result, *report, limits));
        !s.ok()) {
      return util::ReportError("check", s);
    }
  }
  if (!args->Has("quiet") && json_path != "-") {
    if (absl::Status s = util::WriteFile("-", analysis::CheckToText(result, *report)); !s.ok())
      return util::ReportError("check", s);
  }
  if (!result.inconclusive.empty()) {
    std::fprintf(stderr, "cuclimb check: %s\n", result.inconclusive.c_str());
    return util::kExitBadTrace;
  }
  if (!result.pass) {
    int failures = 0;
    for (const analysis::CheckItem& it : result.items) failures += !it.pass;
    std::fprintf(stderr, "cuclimb check: %d limit%s exceeded\n", failures,
                 failures == 1 ? "" : "s");
    return util::kExitFindings;
  }
  return util::kExitOk;
}

}  // namespace

const Command kCheckCommand = {"check",
                               "CI gate: exit 1 when a range climbs or state grows beyond limits",
                               kUsage,
                               kDescription,
                               &kOptions,
                               nullptr,
                               util::ArgMode::kInterleaved,
                               RunCheck};

}  // namespace cuclimb::commands
