// SPDX-License-Identifier: Apache-2.0
// Frame classes by name, Python frame decoding, and the two printed forms of a frame.
#include "symbols/frame.h"

#include <cctype>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cuclimb::analysis {
namespace {

constexpr std::string_view kClassNames[kFrameClassCount] = {"user",   "cuda",   "framework",
                                                            "system", "python", "unknown"};

// Abseil 20220623 as built by Debian has its own string_view, not std::string_view.
absl::string_view View(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "mycrate::model::Trainer<u8, &[T]>": a type, not "<A as Trait>" nor arbitrary text.
bool IsRustTypePath(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  if (s.find(" as ") != std::string::npos)
    return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("_:<>,&[]*() ").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string_view FrameClassName(FrameClass c) {
  const auto i = static_cast<size_t>(c);
  return i < std::size(kClassNames) ? kClassNames[i] : "unknown";
}

bool ParseFrameClass(std::string_view name, FrameClass* c) {
  for (size_t i = 0; i < std::size(kClassNames); ++i) {
    if (kClassNames[i] == name) {
      *c = static_cast<FrameClass>(i);
      return true;
    }
  }
  return false;
}

bool ParsePythonFrame(std::string_view text, Frame* out) {
  constexpr std::string_view kPrefix = "py:";
  if (text.substr(0, kPrefix.size()) != kPrefix)
    return false;
  text.remove_prefix(kPrefix.size());
  // A qualified name has no '@' ("<lambda>", "Trainer.step", "<module>"); a path may.
  const size_t at = text.find('@');
  if (at == std::string_view::npos || at == 0)
    return false;
  Frame f;
  f.python = true;
  f.symbolized = true;
  f.function = std::string(text.substr(0, at));
  std::string_view file = text.substr(at + 1);
  const size_t colon = file.rfind(':');
  int line = 0;
  if (colon != std::string_view::npos && absl::SimpleAtoi(View(file.substr(colon + 1)), &line) &&
      line >= 0) {
    file = file.substr(0, colon);
  } else {
    line = 0;  // "<frozen importlib._bootstrap>" or a cut frame: keep the whole text as file
  }
  f.file = std::string(file);
  f.line = line;
  *out = std::move(f);
  return true;
}

std::string FormatFrame(const Frame& f) {
  std::string s = f.function;
  if (!f.file.empty()) {
    absl::StrAppend(&s, " (", f.file);
    if (f.line > 0)
      absl::StrAppend(&s, ":", f.line);
    absl::StrAppend(&s, ")");
  }
  if (f.inlined)
    absl::StrAppend(&s, " [inlined]");
  if (!f.missing.empty())
    absl::StrAppend(&s, " [", f.missing, "]");
  return s;
}

std::string FrameLabel(const Frame& f) {
  std::string s = f.python ? f.function : ShortFunctionName(f.function);
  if (!f.file.empty() && f.line > 0)
    absl::StrAppend(&s, " (", View(BaseName(f.file)), ":", f.line, ")");
  return s;
}

std::string ShortFunctionName(const std::string& fn) {
  std::string s = fn;
  // Drop a trailing parameter list "(...)" (and cv-qualifiers after it).
  for (std::string_view q : {" const", " volatile", " &&", " &"}) {
    if (s.size() > q.size() && s.compare(s.size() - q.size(), q.size(), q) == 0)
      s.resize(s.size() - q.size());
  }
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')')
        ++depth;
      if (s[i] == '(' && --depth == 0) {
        if (i > 0)
          s.resize(i);
        break;
      }
    }
  }
  // Rust: drop a trailing turbofish ("step::<u32>" → "step"), and name an inherent impl by its
  // type ("<mycrate::model::Trainer>::step" → "Trainer::step"), as legacy mangling prints them.
  if (s.size() > 3 && s.back() == '>') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == '>')
        ++depth;
      if (s[i] == '<' && --depth == 0) {
        if (i >= 2 && s.compare(i - 2, 2, "::") == 0)
          s.resize(i - 2);
        break;
      }
    }
  }
  if (!s.empty() && s[0] == '<') {
    int depth = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '<')
        ++depth;
      if (s[i] == '>' && --depth == 0) {
        const std::string inside = s.substr(1, i - 1);
        if (IsRustTypePath(inside) && s.compare(i + 1, 2, "::") == 0)
          s = inside + s.substr(i + 1);
        break;
      }
    }
  }
  // Keep the last two "::" components, ignoring separators inside <...>.
  std::vector<size_t> seps;
  int angle = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == '<')
      ++angle;
    if (s[i] == '>' && angle > 0)
      --angle;
    if (angle == 0 && s[i] == ':' && s[i + 1] == ':')
      seps.push_back(i);
  }
  if (seps.size() >= 2)
    s = s.substr(seps[seps.size() - 2] + 2);
  return s;
}

}  // namespace cuclimb::analysis
