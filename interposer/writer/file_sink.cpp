// SPDX-License-Identifier: Apache-2.0
// Exclusive, symlink-safe trace file output.
#include "interposer/writer/file_sink.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "interposer/log.h"

namespace cuclimb::interposer {

bool FileSink::Open(const char* path) noexcept {
  fd_ = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    const int err = errno;
    LogWarning("cannot create trace file %s: %s%s; the program runs untraced", path,
               std::strerror(err),
               err == EEXIST  ? " (cuclimb never overwrites a file)"
               : err == ELOOP ? " (cuclimb never writes through a symlink)"
                              : "");
    return false;
  }
  // A program started with stdin, stdout or stderr closed would get the trace as that
  // descriptor, and its own output (and our warnings) would be written into the trace: move it
  // to 3 or above, still close-on-exec.
  if (fd_ <= STDERR_FILENO) {
    const int high = ::fcntl(fd_, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    const int err = errno;
    ::close(fd_);
    fd_ = high;
    if (fd_ < 0) {
      ::unlink(path);
      LogWarning("cannot move trace file %s above descriptor 2: %s; the program runs untraced",
                 path, std::strerror(err));
      return false;
    }
  }
  return true;
}

bool FileSink::WriteAll(const void* data, size_t size) noexcept {
  if (fd_ < 0)
    return false;
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      LogWarning("writing the trace failed: %s; recording stops, the program runs on",
                 n < 0 ? std::strerror(errno) : "no progress");
      ::close(fd_);
      fd_ = -1;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void FileSink::Close() noexcept {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

}  // namespace cuclimb::interposer
