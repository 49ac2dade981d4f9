// SPDX-License-Identifier: Apache-2.0
// WriterWake: how producers wake the writer thread early, without a lock.
//
// The writer sleeps on a sequence word with FUTEX_WAIT, bounded by its flush period; a producer
// bumps the word and, only if the writer is asleep, issues FUTEX_WAKE. Nothing here can block a
// producer or be left locked by a fork, and Wake() is async-signal-safe.
#pragma once

#include <atomic>
#include <cstdint>

namespace cuclimb::interposer {

class WriterWake {
 public:
  // Writer: read the sequence before checking its stop flag, then sleep on it, so a Wake() that
  // follows a stop request can never be missed.
  uint32_t Sequence() const noexcept { return sequence_.load(std::memory_order_seq_cst); }
  // Writer: sleeps until the sequence differs from `seen` or timeout_ns have passed.
  void SleepUnlessChanged(uint32_t seen, int64_t timeout_ns) noexcept;
  // Any thread: wakes the writer if it sleeps; otherwise its next sleep returns at once.
  void Wake() noexcept;

 private:
  std::atomic<uint32_t> sequence_{0};
  std::atomic<uint32_t> sleeping_{0};
};

}  // namespace cuclimb::interposer
