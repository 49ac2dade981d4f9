// SPDX-License-Identifier: Apache-2.0
// The cuclimb subcommands, in the order `cuclimb --help` lists them.
#pragma once

#include <vector>

#include "commands/command.h"

namespace cuclimb::commands {

extern const Command kRecordCommand;
extern const Command kAnalyzeCommand;
extern const Command kDiffCommand;
extern const Command kCheckCommand;
extern const Command kExportCommand;
extern const Command kInfoCommand;
extern const Command kConvertCommand;

// Every subcommand, in the order above.
const std::vector<const Command*>& AllCommands();

}  // namespace cuclimb::commands
