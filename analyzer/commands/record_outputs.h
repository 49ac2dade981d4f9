// SPDX-License-Identifier: Apache-2.0
// Which trace files a `cuclimb record` run wrote. libcuclimb.so names each process's file from
// the output pattern (%p pid, %h host, %r rank, %e program) and creates it with O_EXCL, so a file
// that already exists is never overwritten: the process then runs untraced. The launcher
// therefore (1) moves a pattern that would reuse an existing name to the next free one, as nsys
// does (run.trace → run-1.trace, run-2.trace, ...), and (2) lists afterwards exactly the files
// that appeared during the run — the program's and its CUDA children's — never an older one.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cuclimb::commands {

// The glob(7) that matches every name the pattern can expand to, in any process: %p, %r and %e
// become '*', %h the host name; glob metacharacters in the rest are escaped.
std::string PatternGlob(const std::string& pattern, const std::string& host);

// True when the pattern names files per process (has %p): a fresh pid gives a fresh name.
bool PatternHasPid(const std::string& pattern);

// Identity of a file, to tell a file written by this run from an older one with the same name.
struct FileStamp {
  uint64_t inode = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
using FileSet = std::map<std::string, FileStamp>;

// Regular files matching a glob now.
FileSet ListMatching(const std::string& glob);

// The files of `after` that are new or changed since `before`.
std::vector<std::string> NewFiles(const FileSet& before, const FileSet& after);

// `pattern` itself when nothing matches it yet, else the pattern with "-1", "-2", ... before its
// extension (before the last '.' of the file name; at the end when there is none), the first
// whose glob matches no file.
std::string NextFreePattern(const std::string& pattern, const std::string& host);

}  // namespace cuclimb::commands
