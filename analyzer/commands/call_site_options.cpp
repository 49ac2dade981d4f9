// SPDX-License-Identifier: Apache-2.0
// --symbols, --symfs and --frames-internal, shared by analyze, diff and check.
#include "commands/call_site_options.h"

#include <string>
#include <sys/stat.h>

#include "symbols/frame_classifier.h"
#include "util/cli.h"

namespace cuclimb::commands {

absl::Status ApplyCallSiteOptions(const util::ParsedArgs& args, analysis::AnalyzeOptions* o) {
  o->symbol_dirs = args.GetAll("symbols");
  if (args.Has("symfs")) {
    std::string root = args.Get("symfs");
    struct stat st {};
    if (root.empty() || stat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return util::UsageError("--symfs: " + root + " is not a directory");
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    o->host_root = root == "/" ? "" : root;
  }
  o->frames_internal = args.GetAll("frames-internal");
  if (auto c = analysis::FrameClassifier::Create(o->frames_internal); !c.ok())
    return util::UsageError("--frames-internal: " + std::string(c.status().message()));
  return absl::OkStatus();
}

}  // namespace cuclimb::commands
