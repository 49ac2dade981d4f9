// SPDX-License-Identifier: Apache-2.0
// The trace file: created exclusively, never through a symlink, written whole-or-error.
#pragma once

#include <cstddef>

namespace cuclimb::interposer {

class FileSink {
 public:
  // Creates path with O_EXCL|O_NOFOLLOW|O_CLOEXEC and mode 0600. On failure logs one warning
  // naming the path and the reason, and returns false.
  bool Open(const char* path) noexcept;
  // Writes everything, retrying on EINTR and short writes. On error logs once, closes the file
  // and returns false; later calls return false at once.
  bool WriteAll(const void* data, size_t size) noexcept;
  void Close() noexcept;
  // Forgets the descriptor without closing it (forked child: the parent still owns the file).
  void Forget() noexcept { fd_ = -1; }
  bool is_open() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace cuclimb::interposer
