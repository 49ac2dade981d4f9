// SPDX-License-Identifier: Apache-2.0
// A file (or stdout for "-") written in pieces, with errors that name the path.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace cuclimb::util {

class OutputFile {
 public:
  // Errors are marked as output errors (exit code 4).
  static absl::StatusOr<std::unique_ptr<OutputFile>> Open(const std::string& path);
  ~OutputFile();
  absl::Status Write(std::string_view bytes);
  absl::Status Close();
  const std::string& path() const { return path_; }

 private:
  OutputFile(std::FILE* f, std::string path) : file_(f), path_(std::move(path)) {}
  std::FILE* file_;
  std::string path_;
};

}  // namespace cuclimb::util
