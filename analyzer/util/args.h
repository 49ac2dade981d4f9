// SPDX-License-Identifier: Apache-2.0
// Command-line parsing for subcommands: a table of options, positionals, and generated --help.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cuclimb::util {

struct OptionSpec {
  const char* name;       // long name without dashes, e.g. "json"
  const char* value_name; // nullptr for a boolean switch, else e.g. "FILE"
  const char* help;
  bool repeatable = false;
};

struct ParsedArgs {
  std::vector<std::string> positionals;
  std::vector<std::pair<std::string, std::string>> options;  // in order; switches get "1"
  std::vector<std::string> passthrough;  // everything after "--"
  bool help = false;

  bool Has(const std::string& name) const;
  // The last value given for name, or fallback.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  std::vector<std::string> GetAll(const std::string& name) const;
  absl::StatusOr<double> GetDouble(const std::string& name, double fallback) const;
  absl::StatusOr<int64_t> GetInt(const std::string& name, int64_t fallback) const;
};

// Parses argv[first..argc). Unknown options and missing values are InvalidArgument errors
// naming the option. "-h"/"--help" set help. With stop_at_dashdash, "--" ends options.
absl::StatusOr<ParsedArgs> ParseArgs(int argc, char** argv, int first,
                                     const std::vector<OptionSpec>& specs,
                                     bool stop_at_dashdash = false);

// Formats "usage: ...", the description and the option table.
std::string FormatHelp(const std::string& usage, const std::string& description,
                       const std::vector<OptionSpec>& specs);

}  // namespace cuclimb::util
