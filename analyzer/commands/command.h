// SPDX-License-Identifier: Apache-2.0
// A cuclimb subcommand as data: its name, one-line summary, usage, description and option table.
// main.cpp parses every command's arguments from this table, and the same table gives `--help`,
// `cuclimb help CMD`, the man pages and the bash completion (commands/help.h), so they cannot
// drift apart.
#pragma once

#include <string>
#include <vector>

#include "util/args.h"

namespace cuclimb::commands {

struct Command {
  const char* name;
  const char* summary;      // one line for `cuclimb --help` and the man page's NAME
  const char* usage;        // after "usage: "
  const char* description;  // paragraphs, lines ≤ 100 columns
  const std::vector<util::OptionSpec>* options;
  std::string (*extra_help)();  // nullptr, or text after the option table (record: environment)
  util::ArgMode mode;
  // Runs with parsed arguments (never called for --help); returns the exit status.
  int (*run)(const util::ParsedArgs& args);
};

}  // namespace cuclimb::commands
