// SPDX-License-Identifier: Apache-2.0
// Command-line parsing for subcommands: a table of options, positionals, and generated --help.
// The same tables give `cuclimb help CMD`, the man pages and the bash completion
// (commands/command.h), so none of them can drift from what the parser accepts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace cuclimb::util {

struct OptionSpec {
  const char* name;        // long name without dashes, e.g. "json"
  const char* value_name;  // nullptr for a boolean switch, else e.g. "FILE"
  const char* help;
  bool repeatable = false;
  char short_name = 0;  // e.g. 'o' for -o; 0 = none
};

// Where options stop.
enum class ArgMode {
  // Options and positionals mix freely; "--" makes every later word a positional.
  kInterleaved,
  // Like a launcher (nsys profile, heaptrack, memray run): options up to the first word that is
  // not an option, or up to "--"; that word and everything after go to `passthrough`.
  kCommandLine,
};

struct ParsedArgs {
  std::vector<std::string> positionals;
  std::vector<std::pair<std::string, std::string>> options;  // in order; switches get "1"
  std::vector<std::string> passthrough;  // kCommandLine: the program and its arguments
  bool help = false;

  bool Has(const std::string& name) const;
  // The last value given for name, or fallback.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> GetAll(const std::string& name) const;
  absl::StatusOr<double> GetDouble(const std::string& name, double fallback) const;
  absl::StatusOr<int64_t> GetInt(const std::string& name, int64_t fallback) const;
};

// Parses argv[first..argc). Unknown options ("did you mean" the closest known one), missing
// values and repeated non-repeatable options are InvalidArgument errors naming the option, one
// line each. "-h"/"--help" set help.
absl::StatusOr<ParsedArgs> ParseArgs(int argc, char** argv, int first,
                                     const std::vector<OptionSpec>& specs,
                                     ArgMode mode = ArgMode::kInterleaved);

// The candidate closest to `word` (edit distance, or a unique prefix), or "" when none is close
// enough to be what the user meant.
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

// Formats "usage: ...", the description and the option table.
std::string FormatHelp(const std::string& usage, const std::string& description,
                       const std::vector<OptionSpec>& specs);

// "--name VALUE" or "-o, --name VALUE": the left column of the option table.
std::string OptionSynopsis(const OptionSpec& spec);

}  // namespace cuclimb::util
