// SPDX-License-Identifier: Apache-2.0
// Entry points of the cuclimb subcommands; each parses its own arguments and returns an exit code.
#pragma once

namespace cuclimb::commands {

// argv[0] is the subcommand name; options follow.
int RunConvert(int argc, char** argv);
int RunInfo(int argc, char** argv);
int RunRecord(int argc, char** argv);
int RunAnalyze(int argc, char** argv);
int RunDiff(int argc, char** argv);
int RunExport(int argc, char** argv);
int RunCheck(int argc, char** argv);

}  // namespace cuclimb::commands
