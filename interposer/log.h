// SPDX-License-Identifier: Apache-2.0
// Warnings from inside the host process: formatted on the stack, written with write(2).
//
// Never allocates and never takes a lock, so it is safe on any thread except inside a signal
// handler (vsnprintf is not async-signal-safe). Messages start with "cuclimb: ". Output is capped
// at kMaxLogLines per process so a broken environment cannot flood the host's stderr.
#pragma once

#include <atomic>

namespace cuclimb::interposer {

inline constexpr int kMaxLogLines = 64;

// Prints "cuclimb: <message>\n" on stderr (unless CUCLIMB_LOG=quiet).
void LogWarning(const char* format, ...) noexcept __attribute__((format(printf, 1, 2)));

// Prints the message the first time `once` is seen false, then sets it.
#define CUCLIMB_LOG_ONCE(once_flag, ...)                        \
  do {                                                          \
    static std::atomic<bool> once_flag{false};                  \
    if (!once_flag.exchange(true, std::memory_order_relaxed)) { \
      ::cuclimb::interposer::LogWarning(__VA_ARGS__);           \
    }                                                           \
  } while (false)

// Silences or re-enables warnings (CUCLIMB_LOG=quiet).
void SetLogQuiet(bool quiet) noexcept;

}  // namespace cuclimb::interposer
