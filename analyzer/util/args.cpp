// SPDX-License-Identifier: Apache-2.0
// Table-driven option parsing shared by every cuclimb subcommand.
#include "util/args.h"

#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuclimb::util {

bool ParsedArgs::Has(const std::string& name) const {
  for (const auto& [k, v] : options) {
    if (k == name) return true;
  }
  return false;
}

std::string ParsedArgs::Get(const std::string& name, const std::string& fallback) const {
  std::string out = fallback;
  for (const auto& [k, v] : options) {
    if (k == name) out = v;
  }
  return out;
}

std::vector<std::string> ParsedArgs::GetAll(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : options) {
    if (k == name) out.push_back(v);
  }
  return out;
}

absl::StatusOr<double> ParsedArgs::GetDouble(const std::string& name, double fallback) const {
  if (!Has(name)) return fallback;
  const std::string v = Get(name);
  double d = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc() || ptr != v.data() + v.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": '", v, "' is not a number"));
  }
  // Every numeric option is a threshold or a tolerance: NaN compares false with everything, so
  // "--max-climb nan" would pass any climb, and infinity is no limit at all.
  if (!std::isfinite(d)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, ": '", v, "' is not a finite number"));
  }
  return d;
}

absl::StatusOr<int64_t> ParsedArgs::GetInt(const std::string& name, int64_t fallback) const {
  if (!Has(name)) return fallback;
  const std::string v = Get(name);
  int64_t i = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), i);
  if (ec != std::errc() || ptr != v.data() + v.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": '", v, "' is not an integer"));
  }
  return i;
}

absl::StatusOr<ParsedArgs> ParseArgs(int argc, char** argv, int first,
                                     const std::vector<OptionSpec>& specs, bool stop_at_dashdash) {
  ParsedArgs out;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      if (stop_at_dashdash) {
        for (int k = i + 1; k < argc; ++k) out.passthrough.emplace_back(argv[k]);
        break;
      }
      for (int k = i + 1; k < argc; ++k) out.positionals.emplace_back(argv[k]);
      break;
    }
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      out.positionals.push_back(arg);
      continue;
    }
    if (arg.rfind("--", 0) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("unknown option '", arg, "' (see --help)"));
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs) {
      if (name == s.name) spec = &s;
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown option '--", name, "' (see --help)"));
    }
    if (spec->value_name == nullptr) {
      if (has_value) {
        return absl::InvalidArgumentError(absl::StrCat("option '--", name, "' takes no value"));
      }
      value = "1";
    } else if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat("option '--", name, "' needs a value (", spec->value_name, ")"));
      }
      value = argv[++i];
    }
    if (!spec->repeatable && out.Has(name)) {
      return absl::InvalidArgumentError(absl::StrCat("option '--", name, "' given twice"));
    }
    out.options.emplace_back(name, value);
  }
  return out;
}

std::string FormatHelp(const std::string& usage, const std::string& description,
                       const std::vector<OptionSpec>& specs) {
  std::string out = absl::StrCat("usage: ", usage, "\n\n", description, "\n");
  if (!specs.empty()) out += "\noptions:\n";
  for (const OptionSpec& s : specs) {
    std::string left = absl::StrCat("  --", s.name);
    if (s.value_name != nullptr) absl::StrAppend(&left, " ", s.value_name);
    absl::StrAppend(&out, absl::StrFormat("%-28s %s\n", left, s.help));
  }
  absl::StrAppend(&out, absl::StrFormat("%-28s %s\n", "  -h, --help", "show this help"));
  return out;
}

}  // namespace cuclimb::util
