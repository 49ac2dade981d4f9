// SPDX-License-Identifier: Apache-2.0
// File and memory byte sources for the trace readers.
#include "trace/byte_source.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

#include "absl/strings/str_cat.h"

namespace cuclimb::trace {

absl::StatusOr<std::unique_ptr<FileSource>> FileSource::Open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rbe");
  if (f == nullptr) {
    const int err = errno;
    const std::string msg = absl::StrCat(path, ": ", std::strerror(err));
    if (err == ENOENT)
      return absl::NotFoundError(msg);
    if (err == EACCES || err == EPERM)
      return absl::PermissionDeniedError(msg);
    return absl::UnavailableError(msg);
  }
  struct stat st {};
  if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
    std::fclose(f);
    return absl::FailedPreconditionError(absl::StrCat(path, ": is a directory, not a trace"));
  }
  // Large stdio buffer: chunk headers are read in 24-byte pieces.
  std::setvbuf(f, nullptr, _IOFBF, 1 << 20);
  return std::unique_ptr<FileSource>(new FileSource(f, S_ISREG(st.st_mode) ? st.st_size : 0));
}

FileSource::~FileSource() {
  std::fclose(file_);
}

size_t FileSource::Read(void* out, size_t n) {
  return std::fread(out, 1, n, file_);
}

size_t MemorySource::Read(void* out, size_t n) {
  const size_t k = std::min(n, bytes_.size() - pos_);
  std::memcpy(out, bytes_.data() + pos_, k);
  pos_ += k;
  return k;
}

}  // namespace cuclimb::trace
