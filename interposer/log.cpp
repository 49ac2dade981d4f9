// SPDX-License-Identifier: Apache-2.0
// Allocation-free, capped warning output for the interposer.
#include "interposer/log.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <unistd.h>

namespace cuclimb::interposer {
namespace {

std::atomic<int> g_lines{0};
std::atomic<bool> g_quiet{false};

}  // namespace

void SetLogQuiet(bool quiet) noexcept {
  g_quiet.store(quiet, std::memory_order_relaxed);
}

void LogWarning(const char* format, ...) noexcept {
  if (g_quiet.load(std::memory_order_relaxed))
    return;
  if (g_lines.fetch_add(1, std::memory_order_relaxed) >= kMaxLogLines)
    return;
  const int saved_errno = errno;  // the host may be inspecting errno around our callback
  char buf[512];
  std::memcpy(buf, "cuclimb: ", 9);
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(buf + 9, sizeof(buf) - 10, format, args);
  va_end(args);
  if (n < 0)
    n = 0;
  size_t len = 9 + std::min<size_t>(static_cast<size_t>(n), sizeof(buf) - 10);
  buf[len++] = '\n';
  for (size_t off = 0; off < len;) {
    const ssize_t w = ::write(STDERR_FILENO, buf + off, len - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    off += static_cast<size_t>(w);
  }
  errno = saved_errno;
}

}  // namespace cuclimb::interposer
