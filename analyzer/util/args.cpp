// SPDX-License-Identifier: Apache-2.0
// Table-driven option parsing shared by every cuclimb subcommand.
#include "util/args.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuclimb::util {

bool ParsedArgs::Has(const std::string& name) const {
  for (const auto& [k, v] : options) {
    if (k == name)
      return true;
  }
  return false;
}

std::string ParsedArgs::Get(const std::string& name, const std::string& fallback) const {
  std::string out = fallback;
  for (const auto& [k, v] : options) {
    if (k == name)
      out = v;
  }
  return out;
}

std::vector<std::string> ParsedArgs::GetAll(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : options) {
    if (k == name)
      out.push_back(v);
  }
  return out;
}

absl::StatusOr<double> ParsedArgs::GetDouble(const std::string& name, double fallback) const {
  if (!Has(name))
    return fallback;
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
  if (!Has(name))
    return fallback;
  const std::string v = Get(name);
  int64_t i = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), i);
  if (ec != std::errc() || ptr != v.data() + v.size()) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, ": '", v, "' is not an integer"));
  }
  return i;
}

namespace {

// Damerau–Levenshtein (optimal string alignment) distance.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

absl::Status UnknownOption(std::string_view shown, std::string_view name,
                           const std::vector<OptionSpec>& specs) {
  std::vector<std::string> names;
  for (const OptionSpec& s : specs) names.emplace_back(s.name);
  names.emplace_back("help");
  const std::string near = ClosestMatch(name, names);
  if (near.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("unknown option '", std::string(shown), "' (see --help)"));
  return absl::InvalidArgumentError(
      absl::StrCat("unknown option '", std::string(shown), "'; did you mean '--", near, "'?"));
}

const OptionSpec* FindLong(std::string_view name, const std::vector<OptionSpec>& specs) {
  for (const OptionSpec& s : specs) {
    if (name == s.name)
      return &s;
  }
  return nullptr;
}

const OptionSpec* FindShort(char c, const std::vector<OptionSpec>& specs) {
  for (const OptionSpec& s : specs) {
    if (s.short_name != 0 && s.short_name == c)
      return &s;
  }
  return nullptr;
}

}  // namespace

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  int prefixed = 0;
  std::string prefix_match;
  for (const std::string& c : candidates) {
    if (word.size() >= 2 && c.size() > word.size() && c.compare(0, word.size(), word) == 0) {
      ++prefixed;
      prefix_match = c;
    }
    const size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  // Close enough to be a typo: a third of the word, at least one and at most three edits.
  const size_t allowed = std::clamp<size_t>(word.size() / 3, 1, 3);
  if (best_distance <= allowed)
    return best;
  return prefixed == 1 ? prefix_match : "";
}

absl::StatusOr<ParsedArgs> ParseArgs(int argc, char** argv, int first,
                                     const std::vector<OptionSpec>& specs, ArgMode mode) {
  ParsedArgs out;
  std::vector<std::string>& rest =
      mode == ArgMode::kCommandLine ? out.passthrough : out.positionals;
  for (int i = first; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") {
      for (int k = i + 1; k < argc; ++k) rest.emplace_back(argv[k]);
      break;
    }
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      if (mode == ArgMode::kCommandLine) {
        for (int k = i; k < argc; ++k) rest.emplace_back(argv[k]);
        break;
      }
      out.positionals.push_back(arg);
      continue;
    }
    std::string name, value;
    bool has_value = false;
    const OptionSpec* spec = nullptr;
    if (arg[1] != '-') {
      // "-o VALUE" or "-oVALUE"; single-letter switches do not combine.
      spec = FindShort(arg[1], specs);
      if (spec == nullptr)
        return UnknownOption(arg, arg.substr(1), specs);
      name = spec->name;
      if (arg.size() > 2) {
        if (spec->value_name == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(
              "unknown option '", arg, "' (-", std::string(1, arg[1]), " takes no value)"));
        }
        value = arg.substr(2);
        has_value = true;
      }
    } else {
      name = arg.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      spec = FindLong(name, specs);
      if (spec == nullptr)
        return UnknownOption(absl::StrCat("--", name), name, specs);
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

std::string OptionSynopsis(const OptionSpec& s) {
  std::string left = s.short_name != 0 ? absl::StrCat("-", std::string(1, s.short_name), ", --")
                                       : std::string("--");
  absl::StrAppend(&left, s.name);
  if (s.value_name != nullptr)
    absl::StrAppend(&left, " ", s.value_name);
  return left;
}

std::string FormatHelp(const std::string& usage, const std::string& description,
                       const std::vector<OptionSpec>& specs) {
  std::string out = absl::StrCat("usage: ", usage, "\n\n", description, "\n");
  if (!specs.empty())
    out += "\noptions:\n";
  for (const OptionSpec& s : specs) {
    absl::StrAppend(&out, absl::StrFormat("  %-26s %s\n", OptionSynopsis(s), s.help));
  }
  absl::StrAppend(&out, absl::StrFormat("  %-26s %s\n", "-h, --help", "show this help"));
  return out;
}

}  // namespace cuclimb::util
