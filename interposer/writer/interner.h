// SPDX-License-Identifier: Apache-2.0
// Lock-free interning of byte strings (names, stacks) for the hot path.
//
// Open addressing over a fixed table; bytes live in a fixed mmap'ed arena. A thread that finds a
// slot claimed but not yet filled (its owner is mid-copy, or was interrupted by a signal handler
// that now interns the same bytes) spins, then yields for at most 20 ms, and then gives up,
// returning 0: a lost name is counted, a deadlock is impossible. Ids are internal and dense from 1;
// the writer renumbers them into file ids in order of first use.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cuclimb::interposer {

class Interner {
 public:
  // table_slots must be a power of two. Memory is mapped here (cold); false if it failed.
  bool Init(size_t table_slots, size_t arena_bytes) noexcept;

  // Returns the id of bytes, or 0 when the table or arena is full or the slot stayed busy.
  uint32_t Intern(const void* bytes, size_t size) noexcept;

  // Writer side: the bytes of id, once published (empty view when not yet published).
  std::string_view Get(uint32_t id) const noexcept;
  uint32_t next_id() const { return next_id_.load(std::memory_order_acquire); }
  uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }

 private:
  struct Slot {
    std::atomic<uint64_t> hash;  // 0 = empty; claimed by CAS
    std::atomic<uint32_t> id;    // 0 until the bytes are in place
    uint32_t size;
    uint64_t offset;
  };
  struct IdEntry {
    std::atomic<uint64_t> offset_plus_one;  // 0 until published
    uint32_t size;
  };

  Slot* slots_ = nullptr;
  IdEntry* by_id_ = nullptr;
  char* arena_ = nullptr;
  size_t mask_ = 0;
  size_t arena_bytes_ = 0;
  std::atomic<size_t> arena_used_{0};
  std::atomic<uint32_t> next_id_{1};
  std::atomic<uint64_t> failures_{0};
};

// 64-bit hash of a byte range (word at a time; not cryptographic). Never returns 0.
uint64_t HashBytes(const void* data, size_t size) noexcept;

}  // namespace cuclimb::interposer
