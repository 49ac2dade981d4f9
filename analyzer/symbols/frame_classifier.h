// SPDX-License-Identifier: Apache-2.0
// Assigns a FrameClass to a frame from a table of glob rules: the built-in table
// (symbols/frame_classes.txt, compiled in) behind the user's `--frames-internal` patterns.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "symbols/frame.h"

namespace cuclimb::analysis {

class FrameClassifier {
 public:
  // The built-in table, preceded by one framework rule per pattern in extra_internal
  // ("[module:|symbol:|function:|file:]GLOB", see frame_classes.txt). Errors: a malformed
  // pattern (InvalidArgument, naming it).
  static absl::StatusOr<FrameClassifier> Create(
      const std::vector<std::string>& extra_internal = {});
  // The built-in table alone, parsed once.
  static const FrameClassifier& Builtin();
  // A table in the text form of frame_classes.txt, preceded by extra_internal's rules. Errors
  // name the line.
  static absl::StatusOr<FrameClassifier> FromTable(
      std::string_view table, const std::vector<std::string>& extra_internal = {});

  // The class of the first rule that matches f; kUser when none does. A frame in no module
  // that is neither a name nor a Python frame ("0x7f...") is kUnknown.
  FrameClass Classify(const Frame& f) const;

  size_t rule_count() const { return rules_.size(); }

 private:
  enum class Field : uint8_t { kAny, kModule, kSymbol, kFunction, kFile };
  struct Rule {
    FrameClass frame_class;
    Field field;
    std::string glob;
    bool whole_path;  // a module glob with '/': matched against the recorded path
  };
  static absl::StatusOr<Rule> ParseRule(FrameClass c, std::string_view pattern);
  static bool Matches(const Rule& r, const Frame& f);

  std::vector<Rule> rules_;
};

// The built-in table's text (frame_classes.txt), for `--help` and the docs test.
std::string_view BuiltinFrameClasses();

}  // namespace cuclimb::analysis
