// SPDX-License-Identifier: Apache-2.0
// Ring registry: lazy mmap of per-thread rings and reuse of rings of exited threads.
#include "interposer/writer/thread_ring.h"

#include <new>
#include <sys/mman.h>

namespace cuclimb::interposer {

void RingRegistry::Configure(size_t ring_bytes) noexcept {
  size_t events = 64;
  while (events * 2 * sizeof(format::Event) <= ring_bytes) events *= 2;
  capacity_events_ = events;
}

ThreadRing* RingRegistry::Claim(uint32_t tid) noexcept {
  const size_t n = count();
  for (size_t i = 0; i < n; ++i) {
    ThreadRing* r = at(i);
    uint32_t expected = ThreadRing::kFree;
    if (r != nullptr &&
        r->state.compare_exchange_strong(expected, ThreadRing::kOwned, std::memory_order_acq_rel)) {
      r->tid.store(tid, std::memory_order_relaxed);
      return r;
    }
  }
  // A new ring: header and slots in one anonymous mapping, populated now so that the hot path
  // never takes a page fault (first touches cost ~1 µs per page, i.e. ~50 ns per event).
  const size_t bytes = sizeof(ThreadRing) + kCacheLine + capacity_events_ * sizeof(format::Event);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (mem == MAP_FAILED)
    return nullptr;
  auto* slots = reinterpret_cast<format::Event*>(static_cast<char*>(mem) + sizeof(ThreadRing) +
                                                 kCacheLine - sizeof(ThreadRing) % kCacheLine);
  auto* ring = new (mem) ThreadRing(slots, capacity_events_);
  ring->state.store(ThreadRing::kOwned, std::memory_order_relaxed);
  ring->tid.store(tid, std::memory_order_relaxed);
  const size_t index = count_.load(std::memory_order_relaxed);
  for (size_t i = index; i < kMaxRings; ++i) {
    ThreadRing* empty = nullptr;
    if (rings_[i].compare_exchange_strong(empty, ring, std::memory_order_acq_rel)) {
      // Publish the count only up to contiguous filled entries the writer can see.
      size_t c = count_.load(std::memory_order_relaxed);
      while (c <= i && !count_.compare_exchange_weak(c, i + 1, std::memory_order_acq_rel)) {
      }
      return ring;
    }
  }
  munmap(mem, bytes);
  return nullptr;
}

void RingRegistry::Orphan(ThreadRing* ring) noexcept {
  ring->state.store(ThreadRing::kOrphaned, std::memory_order_release);
}

void RingRegistry::Recycle() noexcept {
  const size_t n = count();
  for (size_t i = 0; i < n; ++i) {
    ThreadRing* r = at(i);
    if (r != nullptr && r->state.load(std::memory_order_acquire) == ThreadRing::kOrphaned &&
        r->Empty()) {
      uint32_t expected = ThreadRing::kOrphaned;
      r->state.compare_exchange_strong(expected, ThreadRing::kFree, std::memory_order_acq_rel);
    }
  }
}

}  // namespace cuclimb::interposer
