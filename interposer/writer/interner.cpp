// SPDX-License-Identifier: Apache-2.0
// Lock-free interner: CAS-claimed slots, bounded waits, fixed arena.
#include "interposer/writer/interner.h"

#include <cstring>
#include <sys/mman.h>

#include <sched.h>
#include <time.h>

namespace cuclimb::interposer {
namespace {

constexpr int kBusySpins = 1 << 12;  // ~10-50 µs: longer than any copy by a running owner
// Then yield: the owner may have been preempted mid-copy (eight threads naming the same call at
// once on two cores lost names to a spin-only wait). Bounded, because the owner may also be this
// very thread, interrupted by a signal handler that now interns the same bytes.
constexpr int64_t kYieldBudgetNs = 20'000'000;
// Marks a slot whose bytes could not be stored (arena or ids exhausted), so later lookups of the
// same bytes fail at once instead of waiting.
constexpr uint32_t kFailedId = UINT32_MAX;

void* MapZeroed(size_t bytes) noexcept {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

inline void CpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

int64_t MonotonicNs() noexcept {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe
  return int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

// Waits for a claimed slot's id: spins, then yields the CPU until the budget is spent. Returns 0
// if the id never appeared.
uint32_t AwaitId(const std::atomic<uint32_t>& slot_id) noexcept {
  for (int spin = 0; spin < kBusySpins; ++spin) {
    if (const uint32_t id = slot_id.load(std::memory_order_acquire); id != 0)
      return id;
    CpuRelax();
  }
  const int64_t deadline = MonotonicNs() + kYieldBudgetNs;
  do {
    sched_yield();
    if (const uint32_t id = slot_id.load(std::memory_order_acquire); id != 0)
      return id;
  } while (MonotonicNs() < deadline);
  return 0;
}

}  // namespace

uint64_t HashBytes(const void* data, size_t size) noexcept {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (size * 0xff51afd7ed558ccdull);
  while (size >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    p += 8;
    size -= 8;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p, size);
  h = (h ^ tail) * 0x94d049bb133111ebull;
  h ^= h >> 29;
  return h | 1;
}

bool Interner::Init(size_t table_slots, size_t arena_bytes) noexcept {
  slots_ = static_cast<Slot*>(MapZeroed(table_slots * sizeof(Slot)));
  by_id_ = static_cast<IdEntry*>(MapZeroed((table_slots + 1) * sizeof(IdEntry)));
  arena_ = static_cast<char*>(MapZeroed(arena_bytes));
  mask_ = table_slots - 1;
  arena_bytes_ = arena_bytes;
  return slots_ != nullptr && by_id_ != nullptr && arena_ != nullptr;
}

uint32_t Interner::Intern(const void* bytes, size_t size) noexcept {
  if (slots_ == nullptr)
    return 0;
  const uint64_t h = HashBytes(bytes, size);
  for (size_t probe = 0, i = h & mask_; probe <= mask_; ++probe, i = (i + 1) & mask_) {
    Slot& s = slots_[i];
    uint64_t seen = s.hash.load(std::memory_order_acquire);
    if (seen == 0) {
      if (s.hash.compare_exchange_strong(seen, h, std::memory_order_acq_rel)) {
        // Ours: copy the bytes, then publish. On failure the slot stays claimed with id 0, and
        // lookups of the same bytes give up after their bounded wait.
        const size_t offset = arena_used_.fetch_add(size, std::memory_order_relaxed);
        const uint32_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
        if (offset + size > arena_bytes_ || id > mask_) {
          s.id.store(kFailedId, std::memory_order_release);
          failures_.fetch_add(1, std::memory_order_relaxed);
          return 0;
        }
        std::memcpy(arena_ + offset, bytes, size);
        s.size = static_cast<uint32_t>(size);
        s.offset = offset;
        by_id_[id].size = static_cast<uint32_t>(size);
        by_id_[id].offset_plus_one.store(offset + 1, std::memory_order_release);
        s.id.store(id, std::memory_order_release);
        return id;
      }
      // Lost the race: `seen` now holds the winner's hash; fall through and compare.
    }
    if (seen != h)
      continue;
    const uint32_t id = AwaitId(s.id);
    if (id == 0 || id == kFailedId) {
      failures_.fetch_add(1, std::memory_order_relaxed);
      return 0;
    }
    if (s.size == size && std::memcmp(arena_ + s.offset, bytes, size) == 0)
      return id;
  }
  failures_.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

std::string_view Interner::Get(uint32_t id) const noexcept {
  if (by_id_ == nullptr || id == 0 || id > mask_)
    return {};
  const uint64_t off = by_id_[id].offset_plus_one.load(std::memory_order_acquire);
  if (off == 0)
    return {};
  return {arena_ + off - 1, by_id_[id].size};
}

}  // namespace cuclimb::interposer
