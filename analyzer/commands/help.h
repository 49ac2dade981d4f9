// SPDX-License-Identifier: Apache-2.0
// Everything generated from the command tables: `cuclimb --help`, `cuclimb help CMD`, the man
// pages (cuclimb(1), cuclimb-CMD(1)) and the bash completion script. The build writes the man
// pages and the completion with `cuclimb help --man` and `cuclimb help --completion bash`.
#pragma once

#include <string>

#include "commands/command.h"

namespace cuclimb::commands {

// `cuclimb --help`: usage, the commands with their summaries, where to read more.
std::string MainUsage();

// `cuclimb CMD --help`: usage, description, options (and record's environment table).
std::string CommandHelp(const Command& command);

// The man page of cuclimb (command nullptr) or of `cuclimb CMD`, in roff (man(7)).
std::string ManPage(const Command* command);

// A bash completion script for cuclimb: commands, each command's options, files for traces.
std::string BashCompletion();

// `cuclimb help [CMD]`, `cuclimb help --man [CMD]`, `cuclimb help --completion bash`.
int RunHelp(int argc, char** argv);

// The command named `name`, or nullptr.
const Command* FindCommand(const std::string& name);

}  // namespace cuclimb::commands
