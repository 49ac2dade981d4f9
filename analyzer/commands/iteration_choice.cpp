// SPDX-License-Identifier: Apache-2.0
// The --iteration check shared by analyze, check, diff and export.
#include "commands/iteration_choice.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "util/args.h"
#include "util/cli.h"

namespace cuclimb::commands {

absl::Status CheckIterationChoice(const analysis::Report& report, const std::string& name) {
  if (name.empty())
    return absl::OkStatus();
  for (const analysis::RankReport& rank : report.ranks) {
    if (rank.iterations.user_chosen)
      continue;
    // Range names are "domain::name" outside the default domain; --iteration takes the name.
    std::vector<std::string> names;
    for (const analysis::RangeReport& r : rank.ranges) {
      const size_t sep = r.name.rfind("::");
      names.push_back(sep == std::string::npos ? r.name : r.name.substr(sep + 2));
    }
    std::string message = absl::StrCat("--iteration ", name, ": no NVTX range or mark of ",
                                       rank.trace.path, " has that name");
    if (const std::string near = util::ClosestMatch(name, names); !near.empty()) {
      absl::StrAppend(&message, "; did you mean '", near, "'?");
    } else if (!names.empty()) {
      if (names.size() > 8)
        names.resize(8);
      absl::StrAppend(&message, " (its repeating ranges: ", absl::StrJoin(names, ", "), ")");
    } else {
      absl::StrAppend(&message, " (it has no repeating NVTX range)");
    }
    return util::UsageError(message);
  }
  return absl::OkStatus();
}

}  // namespace cuclimb::commands
