// SPDX-License-Identifier: Apache-2.0
// WriterWake on Linux futexes.
#include "interposer/writer/writer_wake.h"

#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>

#include <unistd.h>

namespace cuclimb::interposer {
namespace {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "futex words must be plain 32-bit atomics");

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) noexcept {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

}  // namespace

void WriterWake::SleepUnlessChanged(uint32_t seen, int64_t timeout_ns) noexcept {
  if (timeout_ns <= 0)
    return;
  sleeping_.store(1, std::memory_order_seq_cst);
  // A Wake() between Sequence() and here changed the word: FUTEX_WAIT returns at once (EAGAIN).
  const timespec timeout{static_cast<time_t>(timeout_ns / 1'000'000'000),
                         static_cast<long>(timeout_ns % 1'000'000'000)};
  Futex(&sequence_, FUTEX_WAIT_PRIVATE, seen, &timeout);  // EINTR or a timeout: just go on
  sleeping_.store(0, std::memory_order_relaxed);
}

void WriterWake::Wake() noexcept {
  sequence_.fetch_add(1, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst) != 0) {
    Futex(&sequence_, FUTEX_WAKE_PRIVATE, 1, nullptr);
  }
}

}  // namespace cuclimb::interposer
