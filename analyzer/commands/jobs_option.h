// SPDX-License-Identifier: Apache-2.0
// `--jobs N`, for every command that analyses traces: how many threads the analysis may use
// (AnalyzeOptions::jobs). The default is the cores this process may run on.
#pragma once

#include <string>

#include <sched.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "util/args.h"
#include "util/cli.h"

namespace cuclimb::commands {

inline const util::OptionSpec kJobsOption = {
    "jobs", "N",
    "threads for the analysis: traces analysed at once, and chunks decompressed ahead (default: "
    "the cores available; the report is the same for any N)"};

// The cores this process may run on (its affinity mask, which containers and taskset narrow).
inline int AvailableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return 1;
  return std::max(1, CPU_COUNT(&set));
}

// Copies --jobs into o; anything but an integer from 1 to 1024 is a usage error.
inline absl::Status ApplyJobsOption(const util::ParsedArgs& args, analysis::AnalyzeOptions* o) {
  auto jobs = args.GetInt("jobs", AvailableCores());
  if (!jobs.ok() || *jobs < 1 || *jobs > 1024)
    return util::UsageError(
        absl::StrCat("--jobs wants N from 1 to 1024, not '", args.Get("jobs"), "'"));
  o->jobs = static_cast<int>(*jobs);
  return absl::OkStatus();
}

}  // namespace cuclimb::commands
