// SPDX-License-Identifier: Apache-2.0
// The options of every command that shows call sites: where symbols are found and which frames
// are internal (`--symbols DIR`, `--frames-internal PATTERN`), one spelling and one check.
#pragma once

#include "absl/status/status.h"
#include "analysis/analyze.h"
#include "util/args.h"

namespace cuclimb::commands {

inline const util::OptionSpec kSymbolsOption = {
    "symbols", "DIR",
    "look in DIR first for the ELF files of recorded modules (by base name) and for their "
    "debug files (DIR/.build-id/xx/yyyy.debug, DIR/NAME.debug)",
    true};
inline const util::OptionSpec kSymfsOption = {
    "symfs", "DIR",
    "look up recorded module paths and /usr/lib/debug under DIR instead of / (the recording "
    "machine's files copied or mounted there)"};
inline const util::OptionSpec kFramesInternalOption = {
    "frames-internal", "PATTERN",
    "treat frames matching [module:|symbol:|function:|file:]GLOB as framework internals, so "
    "call sites are labelled by the frame that calls them (docs/report-schema.md)",
    true};

// Copies --symbols, --symfs and --frames-internal into o; a malformed pattern or a --symfs that
// is not a directory is a usage error.
absl::Status ApplyCallSiteOptions(const util::ParsedArgs& args, analysis::AnalyzeOptions* o);

}  // namespace cuclimb::commands
