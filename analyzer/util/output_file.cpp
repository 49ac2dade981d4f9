// SPDX-License-Identifier: Apache-2.0
// Buffered output files for reports and conversions.
#include "util/output_file.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "util/cli.h"

namespace cuclimb::util {

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Open(const std::string& path) {
  std::FILE* f = path == "-" ? stdout : std::fopen(path.c_str(), "wbe");
  if (f == nullptr) {
    return OutputError(absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(errno))));
  }
  return std::unique_ptr<OutputFile>(new OutputFile(f, path));
}

OutputFile::~OutputFile() {
  if (file_ != nullptr && file_ != stdout) std::fclose(file_);
}

absl::Status OutputFile::Write(std::string_view bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    return OutputError(
        absl::UnavailableError(absl::StrCat(path_, ": write failed: ", std::strerror(errno))));
  }
  return absl::OkStatus();
}

absl::Status OutputFile::Close() {
  std::FILE* f = file_;
  file_ = nullptr;
  const int rc = f == stdout ? std::fflush(f) : std::fclose(f);
  if (rc != 0) {
    return OutputError(
        absl::UnavailableError(absl::StrCat(path_, ": write failed: ", std::strerror(errno))));
  }
  return absl::OkStatus();
}

}  // namespace cuclimb::util
