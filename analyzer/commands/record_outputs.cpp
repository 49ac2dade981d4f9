// SPDX-License-Identifier: Apache-2.0
// Trace files of a recording: the pattern's glob, free names, and what a run wrote.
#include "commands/record_outputs.h"

#include <sys/stat.h>

#include <glob.h>

#include "absl/strings/str_cat.h"

namespace cuclimb::commands {
namespace {

void AppendEscaped(std::string_view text, std::string* out) {
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\')
      out->push_back('\\');
    out->push_back(c);
  }
}

}  // namespace

std::string PatternGlob(const std::string& pattern, const std::string& host) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      AppendEscaped(std::string_view(&pattern[i], 1), &out);
      continue;
    }
    const char code = pattern[++i];
    if (code == 'p' || code == 'r' || code == 'e') {
      out.push_back('*');
    } else if (code == 'h') {
      AppendEscaped(host, &out);
    } else {
      AppendEscaped(std::string_view(&pattern[i], 1), &out);  // %% (others are refused earlier)
    }
  }
  return out;
}

bool PatternHasPid(const std::string& pattern) {
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] == '%') {
      if (pattern[i + 1] == 'p')
        return true;
      ++i;  // skip the code, so that "%%p" is a literal "%p"
    }
  }
  return false;
}

FileSet ListMatching(const std::string& pattern_glob) {
  FileSet out;
  glob_t g{};
  if (glob(pattern_glob.c_str(), GLOB_NOSORT, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      struct stat st {};
      if (stat(g.gl_pathv[i], &st) != 0 || !S_ISREG(st.st_mode))
        continue;
      out[g.gl_pathv[i]] =
          FileStamp{static_cast<uint64_t>(st.st_ino),
                    static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
    }
  }
  globfree(&g);
  return out;
}

std::vector<std::string> NewFiles(const FileSet& before, const FileSet& after) {
  std::vector<std::string> out;
  for (const auto& [path, stamp] : after) {
    auto it = before.find(path);
    if (it == before.end() || !(it->second == stamp))
      out.push_back(path);
  }
  return out;
}

std::string NextFreePattern(const std::string& pattern, const std::string& host) {
  if (ListMatching(PatternGlob(pattern, host)).empty())
    return pattern;
  const size_t slash = pattern.find_last_of('/');
  const size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  size_t dot = pattern.find_last_of('.');
  if (dot == std::string::npos || dot <= name_start)
    dot = pattern.size();
  for (int n = 1;; ++n) {
    std::string candidate = absl::StrCat(pattern.substr(0, dot), "-", n, pattern.substr(dot));
    if (ListMatching(PatternGlob(candidate, host)).empty())
      return candidate;
  }
}

}  // namespace cuclimb::commands
