// SPDX-License-Identifier: Apache-2.0
#include "commands/python_program.h"

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string_view>

#include <unistd.h>

#include "absl/strings/str_split.h"

namespace cuclimb::commands {
namespace {

bool IsInterpreterName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  const std::string name(slash == absl::string_view::npos ? path : path.substr(slash + 1));
  static const std::regex kPython("python[0-9.]*(-dbg)?|pypy[0-9.]*");
  return std::regex_match(name, kPython);
}

// The file execvp would run: the name itself when it holds a slash, else the first executable
// match on PATH.
std::string Resolve(const std::string& program) {
  if (program.find('/') != std::string::npos)
    return program;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    const std::string candidate = std::string(dir.empty() ? "." : dir) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return "";
}

}  // namespace

bool IsPythonProgram(const std::string& program) {
  if (IsInterpreterName(program))
    return true;
  const std::string file = Resolve(program);
  if (file.empty())
    return false;
  std::ifstream in(file, std::ios::binary);
  std::string line;
  if (!std::getline(in, line) || line.rfind("#!", 0) != 0)
    return false;
  // "#!/usr/bin/python3", "#!/usr/bin/env python3", "#!/opt/venv/bin/python3.12 -u"
  for (absl::string_view word : absl::StrSplit(line.substr(2), ' ', absl::SkipEmpty())) {
    if (IsInterpreterName(word))
      return true;
  }
  return false;
}

}  // namespace cuclimb::commands
