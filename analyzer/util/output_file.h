// SPDX-License-Identifier: Apache-2.0
// A file (or stdout for "-") written in pieces, with errors that name the path.
//
// Outputs never destroy what they do not own (issue #14):
// - A regular file is written to a temporary file in the same directory and renamed over the
//   path by Close(): a failed or interrupted command leaves the old file (or none) in place,
//   never a truncated one, and a reader of the old file keeps reading it.
// - A path naming one of the command's inputs (ProtectInputs(); same device and inode, so hard
//   links and other spellings count) is refused: `convert run.trace run.trace` and
//   `analyze run.trace --json run.trace` used to destroy the trace.
// - A path whose last component is a symbolic link to a regular file (or a dangling one) is
//   refused rather than followed: in a shared directory the link may point anywhere. Naming the
//   link's target writes there. Links to devices, pipes and sockets (/dev/stdout, /dev/null) are
//   followed: writing to them truncates nothing.
// - Devices, pipes and sockets are written directly (no temporary file, no truncation).
// - A new trace file is created 0600, like the recorder's (traces hold command lines, host and
//   kernel names); a new report 0666 minus the umask. A replaced file keeps its mode.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "absl/status/statusor.h"

namespace cuclimb::util {

enum class OutputKind {
  kReport,  // new files: 0666 & ~umask
  kTrace,   // new files: 0600
};

// Paths the current command reads: no output may replace them. Call once per command, before
// opening outputs (the CLI is single-threaded). Paths that do not exist are ignored.
void ProtectInputs(const std::vector<std::string>& paths);

// Checks that `path` may be written under the rules above without writing anything: commands
// call it before a long analysis so a bad output path fails at once. Errors are usage errors
// (same file as an input) or output errors (symbolic link, directory, unwritable directory).
absl::Status CheckOutputPath(const std::string& path);

class OutputFile {
 public:
  // Errors are marked as output errors (exit code 4), or usage errors (exit code 2) for a path
  // that names an input.
  static absl::StatusOr<std::unique_ptr<OutputFile>> Open(const std::string& path,
                                                          OutputKind kind = OutputKind::kReport);
  // Without Close(), the temporary file is removed and the path left as it was.
  ~OutputFile();
  absl::Status Write(std::string_view bytes);
  // Flushes and, for a regular file, renames the temporary file over the path.
  absl::Status Close();
  const std::string& path() const { return path_; }

 private:
  OutputFile(std::FILE* f, std::string path, std::string temp_path)
      : file_(f), path_(std::move(path)), temp_path_(std::move(temp_path)) {}
  std::FILE* file_;
  std::string path_;
  std::string temp_path_;  // empty: written in place (stdout, a device, a pipe)
};

}  // namespace cuclimb::util
