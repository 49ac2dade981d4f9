// SPDX-License-Identifier: Apache-2.0
// --symbols and --frames-internal, shared by analyze, diff and check.
#include "commands/call_site_options.h"

#include <string>

#include "symbols/frame_classifier.h"
#include "util/cli.h"

namespace cuclimb::commands {

absl::Status ApplyCallSiteOptions(const util::ParsedArgs& args, analysis::AnalyzeOptions* o) {
  o->symbol_dirs = args.GetAll("symbols");
  o->frames_internal = args.GetAll("frames-internal");
  if (auto c = analysis::FrameClassifier::Create(o->frames_internal); !c.ok())
    return util::UsageError("--frames-internal: " + std::string(c.status().message()));
  return absl::OkStatus();
}

}  // namespace cuclimb::commands
