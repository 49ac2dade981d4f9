// SPDX-License-Identifier: Apache-2.0
// The cuclimb command: dispatches to a subcommand.
#include <cstdio>
#include <cstring>

#include "commands/commands.h"
#include "util/cli.h"
#include "version.h"

namespace {

struct Subcommand {
  const char* name;
  int (*run)(int argc, char** argv);
  const char* summary;
};

constexpr Subcommand kSubcommands[] = {
    {"record", cuclimb::commands::RunRecord, "run a CUDA program with libcuclimb.so and record a trace"},
    {"info", cuclimb::commands::RunInfo, "summarize a trace: header, counts, span, drops, damage"},
    {"convert", cuclimb::commands::RunConvert, "convert a trace between binary and JSON Lines"},
    {"analyze", cuclimb::commands::RunAnalyze, "find the accumulators that make step time climb"},
    {"diff", cuclimb::commands::RunDiff, "compare two runs iteration by iteration: where they diverge"},
    {"export", cuclimb::commands::RunExport, "write a trace for Perfetto UI / chrome://tracing"},
    {"check", cuclimb::commands::RunCheck, "CI gate: exit 1 when climb or growth exceeds limits"},
};

void PrintUsage(std::FILE* out) {
  std::fprintf(out,
               "usage: cuclimb <command> [options]\n\n"
               "cuclimb %s: finds the state that makes a CUDA program slower or fatter the longer\n"
               "it runs.\n\ncommands:\n",
               CUCLIMB_VERSION);
  for (const Subcommand& c : kSubcommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out, "\n'cuclimb <command> --help' describes a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return cuclimb::util::kExitUsage;
  }
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    PrintUsage(stdout);
    return cuclimb::util::kExitOk;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("cuclimb %s\n", CUCLIMB_VERSION);
    return cuclimb::util::kExitOk;
  }
  for (const Subcommand& c : kSubcommands) {
    if (std::strcmp(argv[1], c.name) == 0) return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "cuclimb: unknown command '%s'\n\n", argv[1]);
  PrintUsage(stderr);
  return cuclimb::util::kExitUsage;
}
