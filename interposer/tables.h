// SPDX-License-Identifier: Apache-2.0
// Small lock-free tables the hot path reads: context → device, CUfunction → kernel-name id,
// and the set of memory pools the writer samples.
//
// All are fixed-size arrays of atomics in static storage: no allocation, no lock, safe from any
// thread including signal handlers. Keys are never removed (a dead pool or context is flagged);
// a full table degrades (names interned per call, pools unsampled), it never fails the caller.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cuclimb::interposer {

inline uint64_t MixPointer(uint64_t v) noexcept {
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  return v;
}

// CUcontext → device ordinal. Contexts are few: linear scan, newest first.
class ContextTable {
 public:
  static constexpr size_t kSlots = 64;

  // Cold (CONTEXT_CREATED). Re-adding a known context updates it and marks it alive.
  void Put(uint64_t context, int32_t device) noexcept;
  // Hot. kNoDevice (-1) when unknown.
  int32_t DeviceOf(uint64_t context) const noexcept;
  // A context is about to be destroyed (ENTER of cuCtxDestroy, CONTEXT_DESTROY_STARTING):
  // marks it dead, then waits (bounded) while the writer is inside a query that uses it.
  void DestroyBegin(uint64_t context) noexcept;
  // The primary context of device may be destroyed (release or reset): same for all its
  // contexts.
  void DestroyDevice(int32_t device) noexcept;
  bool Alive(uint64_t context) const noexcept;

  // Writer: announce the use of slot i's context; false when it is dead (then do not use it).
  bool BeginQuery(size_t i) noexcept;
  void EndQuery() noexcept { querying_.store(0, std::memory_order_seq_cst); }

  // Writer: iterate slots [0, size()).
  size_t size() const noexcept { return std::min(count_.load(std::memory_order_acquire), kSlots); }
  uint64_t ContextAt(size_t i) const noexcept {
    return slots_[i].context.load(std::memory_order_acquire);
  }
  int32_t DeviceAt(size_t i) const noexcept {
    return slots_[i].device.load(std::memory_order_relaxed);
  }
  bool AliveAt(size_t i) const noexcept { return slots_[i].alive.load(std::memory_order_acquire); }

  void ResetForTesting() noexcept;

 private:
  struct Slot {
    std::atomic<uint64_t> context{0};
    std::atomic<int32_t> device{-1};
    std::atomic<bool> alive{false};
  };
  void WaitForQuery(uint64_t context) noexcept;

  Slot slots_[kSlots];
  std::atomic<size_t> count_{0};
  std::atomic<uint64_t> querying_{0};
};

// CUfunction → interned kernel-name id, so a launch hashes a pointer instead of a mangled name.
class FunctionNames {
 public:
  static constexpr size_t kSlots = 1 << 15;
  static constexpr size_t kProbes = 32;

  // Returns the cached id of function, or interns name (intern(name) → id) and caches it.
  template <typename InternFn>
  uint32_t Get(uint64_t function, const char* name, InternFn intern) noexcept {
    if (function == 0)
      return intern(name);
    size_t i = MixPointer(function) & (kSlots - 1);
    for (size_t probe = 0; probe < kProbes; ++probe, i = (i + 1) & (kSlots - 1)) {
      uint64_t key = keys_[i].load(std::memory_order_acquire);
      if (key == function) {
        const uint32_t id = ids_[i].load(std::memory_order_acquire);
        return id != 0 ? id : intern(name);
      }
      if (key == 0) {
        if (keys_[i].compare_exchange_strong(key, function, std::memory_order_acq_rel)) {
          const uint32_t id = intern(name);
          ids_[i].store(id, std::memory_order_release);
          return id;
        }
        if (key == function)
          return intern(name);  // another thread is filling it in
      }
    }
    return intern(name);  // table full around this slot
  }

  void ResetForTesting() noexcept;

 private:
  std::atomic<uint64_t> keys_[kSlots] = {};
  std::atomic<uint32_t> ids_[kSlots] = {};
};

// Memory pools seen (created, allocated from, or set as a device's pool), for the writer's
// gauges. A pool being destroyed is flagged dead before the driver destroys it; the writer
// announces the pool it is about to query, so the destroying thread can wait for that query to
// end (DestroyBegin) instead of letting the writer use a freed handle.
class PoolSet {
 public:
  static constexpr size_t kSlots = 256;

  void Add(uint64_t pool, int32_t device) noexcept;
  // Hot-ish (ENTER of cuMemPoolDestroy): marks the pool dead, then waits (bounded) while the
  // writer is inside a query of it.
  void DestroyBegin(uint64_t pool) noexcept;

  size_t size() const noexcept { return std::min(count_.load(std::memory_order_acquire), kSlots); }
  uint64_t PoolAt(size_t i) const noexcept {
    return slots_[i].pool.load(std::memory_order_acquire);
  }
  int32_t DeviceAt(size_t i) const noexcept {
    return slots_[i].device.load(std::memory_order_relaxed);
  }

  // Writer: announce a query of slot i; false when the pool is dead (then do not query).
  bool BeginQuery(size_t i) noexcept;
  void EndQuery() noexcept { querying_.store(0, std::memory_order_seq_cst); }

  void ResetForTesting() noexcept;

 private:
  struct Slot {
    std::atomic<uint64_t> pool{0};
    std::atomic<int32_t> device{-1};
    std::atomic<bool> alive{false};
  };
  Slot slots_[kSlots];
  std::atomic<size_t> count_{0};
  std::atomic<uint64_t> querying_{0};
};

}  // namespace cuclimb::interposer
