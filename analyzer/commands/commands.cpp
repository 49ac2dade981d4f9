// SPDX-License-Identifier: Apache-2.0
// The list of subcommands (commands/commands.h).
#include "commands/commands.h"

namespace cuclimb::commands {

const std::vector<const Command*>& AllCommands() {
  static const std::vector<const Command*> kAll = {
      &kRecordCommand, &kAnalyzeCommand, &kDiffCommand,    &kCheckCommand,
      &kExportCommand, &kInfoCommand,    &kConvertCommand,
  };
  return kAll;
}

}  // namespace cuclimb::commands
