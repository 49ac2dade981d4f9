// SPDX-License-Identifier: Apache-2.0
// Frame classification by an ordered table of glob rules.
#include "symbols/frame_classifier.h"

#include <fnmatch.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "frame_classes_table.h"

namespace cuclimb::analysis {
namespace {

// Abseil 20220623 as built by Debian has its own string_view, not std::string_view.
absl::string_view View(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace

std::string_view BuiltinFrameClasses() {
  return assets::kFrameClassesTxt;
}

absl::StatusOr<FrameClassifier::Rule> FrameClassifier::ParseRule(FrameClass c,
                                                                 std::string_view pattern) {
  static constexpr std::pair<std::string_view, Field> kFields[] = {{"module:", Field::kModule},
                                                                   {"symbol:", Field::kSymbol},
                                                                   {"function:", Field::kFunction},
                                                                   {"file:", Field::kFile}};
  Rule r{c, Field::kAny, "", false};
  std::string_view glob = pattern;
  for (const auto& [prefix, field] : kFields) {
    if (glob.substr(0, prefix.size()) == prefix) {
      r.field = field;
      glob.remove_prefix(prefix.size());
      break;
    }
  }
  if (glob.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("empty glob in frame pattern '", View(pattern), "'"));
  r.glob = std::string(glob);
  r.whole_path = glob.find('/') != std::string_view::npos;
  return r;
}

absl::StatusOr<FrameClassifier> FrameClassifier::FromTable(
    std::string_view table, const std::vector<std::string>& extra_internal) {
  FrameClassifier out;
  for (const std::string& p : extra_internal) {
    auto rule = ParseRule(FrameClass::kFramework, p);
    if (!rule.ok())
      return rule.status();
    out.rules_.push_back(std::move(*rule));
  }
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(View(table), '\n')) {
    ++line_no;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#')
      continue;
    const size_t space = line.find_first_of(" \t");
    if (space == std::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("frame classes, line ", line_no,
                                                     ": want 'CLASS PATTERN', not '", line, "'"));
    }
    FrameClass c;
    if (!ParseFrameClass(std::string_view(line.data(), space), &c) || c == FrameClass::kUnknown) {
      return absl::InvalidArgumentError(absl::StrCat(
          "frame classes, line ", line_no, ": unknown class '", line.substr(0, space), "'"));
    }
    const absl::string_view pattern = absl::StripAsciiWhitespace(line.substr(space));
    auto rule = ParseRule(c, std::string_view(pattern.data(), pattern.size()));
    if (!rule.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("frame classes, line ", line_no, ": ", rule.status().message()));
    }
    out.rules_.push_back(std::move(*rule));
  }
  return out;
}

absl::StatusOr<FrameClassifier> FrameClassifier::Create(
    const std::vector<std::string>& extra_internal) {
  return FromTable(BuiltinFrameClasses(), extra_internal);
}

const FrameClassifier& FrameClassifier::Builtin() {
  // The table is compiled in and parsed by a unit test, so this cannot fail at run time; were it
  // ever to, every frame would be the user's, which degrades labels and loses nothing.
  static const FrameClassifier* builtin = [] {
    auto c = Create();
    return new FrameClassifier(c.ok() ? std::move(*c) : FrameClassifier());
  }();
  return *builtin;
}

bool FrameClassifier::Matches(const Rule& r, const Frame& f) {
  auto glob = [&r](const std::string& s) {
    return !s.empty() && fnmatch(r.glob.c_str(), s.c_str(), 0) == 0;
  };
  // An unsymbolized frame's "module+0x1234" is no name: only module rules apply to it.
  static const std::string kNoName;
  const std::string& name = f.symbolized ? f.function : kNoName;
  auto module = [&] {
    return glob(r.whole_path ? (f.module_path.empty() ? f.module : f.module_path) : f.module);
  };
  switch (r.field) {
    case Field::kModule:
      return module();
    case Field::kSymbol:
      return !f.python && glob(name);
    case Field::kFunction:
      return glob(name);
    case Field::kFile:
      return glob(f.file);
    case Field::kAny:
      return module() || glob(name) || glob(f.file);
  }
  return false;
}

FrameClass FrameClassifier::Classify(const Frame& f) const {
  if (f.module.empty() && !f.symbolized && !f.python)
    return FrameClass::kUnknown;
  for (const Rule& r : rules_) {
    if (Matches(r, f))
      return r.frame_class;
  }
  return FrameClass::kUser;
}

}  // namespace cuclimb::analysis
