// SPDX-License-Identifier: Apache-2.0
// The cuclimb command: finds the subcommand, parses its arguments from its table
// (commands/command.h) and runs it. Every failure is one line on stderr.
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "commands/commands.h"
#include "commands/help.h"
#include "util/cli.h"
#include "version.h"

namespace {

using cuclimb::commands::AllCommands;
using cuclimb::commands::Command;

int UnknownCommand(const std::string& word) {
  std::vector<std::string> names = {"help"};
  for (const Command* c : AllCommands()) names.emplace_back(c->name);
  const std::string near = cuclimb::util::ClosestMatch(word, names);
  if (!near.empty()) {
    std::fprintf(stderr, "cuclimb: unknown command '%s'; did you mean '%s'?\n", word.c_str(),
                 near.c_str());
  } else {
    std::fprintf(stderr, "cuclimb: unknown command '%s'; 'cuclimb --help' lists the commands\n",
                 word.c_str());
  }
  return cuclimb::util::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  namespace util = cuclimb::util;
  if (argc < 2) {
    std::fputs(cuclimb::commands::MainUsage().c_str(), stderr);
    return util::kExitUsage;
  }
  const std::string first = argv[1];
  if (first == "--help" || first == "-h") {
    std::fputs(cuclimb::commands::MainUsage().c_str(), stdout);
    return util::kExitOk;
  }
  if (first == "--version" || first == "-V") {
    std::printf("cuclimb %s\n", CUCLIMB_VERSION);
    return util::kExitOk;
  }
  if (first == "help")
    return cuclimb::commands::RunHelp(argc - 1, argv + 1);
  if (!first.empty() && first[0] == '-') {
    std::fprintf(stderr,
                 "cuclimb: '%s' comes after a command (usage: cuclimb <command> [options]"
                 "; 'cuclimb --help' lists the commands)\n",
                 first.c_str());
    return util::kExitUsage;
  }
  const Command* command = cuclimb::commands::FindCommand(first);
  if (command == nullptr)
    return UnknownCommand(first);
  auto args = util::ParseArgs(argc, argv, 2, *command->options, command->mode);
  if (!args.ok()) {
    return util::ReportError(command->name, util::UsageError(std::string(args.status().message())));
  }
  if (args->help) {
    std::fputs(cuclimb::commands::CommandHelp(*command).c_str(), stdout);
    return util::kExitOk;
  }
  return command->run(*args);
}
