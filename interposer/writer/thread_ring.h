// SPDX-License-Identifier: Apache-2.0
// Per-thread single-producer/single-consumer rings of events, and the registry that owns them.
//
// The producer is the application thread that owns the ring (hot path: two relaxed loads, one
// 128-byte copy, one release store). The consumer is the writer thread. Rings are mmap'ed when a
// thread records its first event and are never unmapped: a thread may exit with undrained events,
// and thread-local destructors do not run reliably at process exit, so the registry outlives every
// thread. A ring whose thread exited is handed to the next new thread once drained.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "interposer/format/trace_format.h"

namespace cuclimb::interposer {

inline constexpr size_t kCacheLine = 64;

class ThreadRing {
 public:
  enum State : uint32_t { kFree = 0, kOwned = 1, kOrphaned = 2 };

  // slots must hold capacity events; capacity is a power of two.
  ThreadRing(format::Event* slots, uint64_t capacity) : slots_(slots), mask_(capacity - 1) {}

  enum class PushResult : uint8_t { kDropped, kStored, kStoredHalfFull };

  // Producer side (owner thread). kDropped (counted) when full. kStoredHalfFull when the ring
  // holds at least half its capacity, so the caller can wake the writer before a burst overflows
  // it: checked against the real tail only at check points (when it could first have reached
  // half, then every quarter ring while it stays there), so the common push reads no shared line.
  PushResult Push(const format::Event& ev) noexcept {
    const uint64_t head = head_.load(std::memory_order_relaxed);
    if (head - cached_tail_ > mask_) {
      cached_tail_ = tail_.load(std::memory_order_acquire);
      if (head - cached_tail_ > mask_) {
        dropped_.store(dropped_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        return PushResult::kDropped;
      }
    }
    slots_[head & mask_] = ev;
    head_.store(head + 1, std::memory_order_release);
    if (head + 1 != check_at_)
      return PushResult::kStored;
    cached_tail_ = tail_.load(std::memory_order_acquire);
    const uint64_t half = (mask_ + 1) / 2;
    if (head + 1 - cached_tail_ < half) {
      check_at_ = cached_tail_ + half;  // where it would be half full if nothing more drains
      return PushResult::kStored;
    }
    check_at_ = head + 1 + std::max<uint64_t>(half / 2, 1);
    return PushResult::kStoredHalfFull;
  }

  void AddSelfTime(int64_t ns) noexcept {
    self_ns_.store(self_ns_.load(std::memory_order_relaxed) + ns, std::memory_order_relaxed);
  }

  // Consumer side (writer thread): calls fn(const Event&) for every event published so far and
  // returns how many were consumed.
  template <typename Fn>
  uint64_t Drain(Fn&& fn) {
    const uint64_t tail = tail_.load(std::memory_order_relaxed);
    const uint64_t head = head_.load(std::memory_order_acquire);
    for (uint64_t i = tail; i != head; ++i) fn(slots_[i & mask_]);
    tail_.store(head, std::memory_order_release);
    return head - tail;
  }

  bool Empty() const {
    return head_.load(std::memory_order_acquire) == tail_.load(std::memory_order_relaxed);
  }
  uint64_t pushed() const { return head_.load(std::memory_order_relaxed); }
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  int64_t self_ns() const { return self_ns_.load(std::memory_order_relaxed); }
  uint64_t capacity() const { return mask_ + 1; }

  std::atomic<uint32_t> state{kFree};
  std::atomic<uint32_t> tid{0};  // OS thread id of the current owner

 private:
  format::Event* const slots_;
  const uint64_t mask_;
  // Producer-owned line.
  alignas(kCacheLine) std::atomic<uint64_t> head_{0};
  uint64_t cached_tail_ = 0;
  uint64_t check_at_ = (mask_ + 1) / 2;  // head value at the next half-full check
  std::atomic<uint64_t> dropped_{0};
  std::atomic<int64_t> self_ns_{0};
  // Consumer-owned line.
  alignas(kCacheLine) std::atomic<uint64_t> tail_{0};
};

// Fixed-size table of rings. Claim() runs on a thread's first event (cold: one mmap).
class RingRegistry {
 public:
  static constexpr size_t kMaxRings = 1024;

  // ring_bytes is rounded down to a power-of-two number of events (at least 64).
  void Configure(size_t ring_bytes) noexcept;

  // Gives the calling thread a ring: a drained ring of an exited thread, or a new one.
  // Returns nullptr when the table is full or memory cannot be mapped.
  ThreadRing* Claim(uint32_t tid) noexcept;

  // Marks a ring's owner as gone; the writer frees it once drained.
  static void Orphan(ThreadRing* ring) noexcept;

  // Writer thread: number of rings ever created, and ring i.
  size_t count() const { return count_.load(std::memory_order_acquire); }
  ThreadRing* at(size_t i) const { return rings_[i].load(std::memory_order_acquire); }

  // Writer thread: returns drained orphaned rings to the free state.
  void Recycle() noexcept;

 private:
  size_t capacity_events_ = 0;
  std::atomic<size_t> count_{0};
  std::atomic<ThreadRing*> rings_[kMaxRings] = {};
};

}  // namespace cuclimb::interposer
