// SPDX-License-Identifier: Apache-2.0
// Lock-free tables of tables.h.
#include "interposer/tables.h"

#include <algorithm>

#include <sched.h>

#include "interposer/clock.h"

namespace cuclimb::interposer {

void ContextTable::Put(uint64_t context, int32_t device) noexcept {
  const size_t n = size();
  for (size_t i = 0; i < n; ++i) {
    if (slots_[i].context.load(std::memory_order_acquire) == context) {
      slots_[i].device.store(device, std::memory_order_relaxed);
      slots_[i].alive.store(true, std::memory_order_release);
      return;
    }
  }
  const size_t i = count_.fetch_add(1, std::memory_order_acq_rel);
  if (i >= kSlots)
    return;
  slots_[i].device.store(device, std::memory_order_relaxed);
  slots_[i].alive.store(true, std::memory_order_relaxed);
  slots_[i].context.store(context, std::memory_order_release);
}

int32_t ContextTable::DeviceOf(uint64_t context) const noexcept {
  const size_t n = size();
  for (size_t i = n; i-- > 0;) {
    if (slots_[i].context.load(std::memory_order_acquire) == context) {
      return slots_[i].device.load(std::memory_order_relaxed);
    }
  }
  return -1;
}

// Dekker-style handshake with BeginQuery (all seq_cst): either the writer sees the context dead,
// or this thread sees the writer's query and waits for it to end. Bounded (100 ms): the writer's
// queries do not wait for application threads, so they end quickly in practice.
void ContextTable::WaitForQuery(uint64_t context) noexcept {
  const int64_t deadline = ClockNs() + 100'000'000;
  while (ClockNs() < deadline) {
    const uint64_t q = querying_.load(std::memory_order_seq_cst);
    if (q == 0 || (context != 0 && q != context))
      break;
    sched_yield();
  }
}

void ContextTable::DestroyBegin(uint64_t context) noexcept {
  const size_t n = size();
  bool known = false;
  for (size_t i = 0; i < n; ++i) {
    if (slots_[i].context.load(std::memory_order_acquire) == context) {
      slots_[i].alive.store(false, std::memory_order_seq_cst);
      known = true;
    }
  }
  if (known)
    WaitForQuery(context);
}

void ContextTable::DestroyDevice(int32_t device) noexcept {
  const size_t n = size();
  bool any = false;
  for (size_t i = 0; i < n; ++i) {
    if (slots_[i].device.load(std::memory_order_relaxed) == device) {
      slots_[i].alive.store(false, std::memory_order_seq_cst);
      any = true;
    }
  }
  if (any)
    WaitForQuery(0);
}

bool ContextTable::BeginQuery(size_t i) noexcept {
  const uint64_t context = slots_[i].context.load(std::memory_order_acquire);
  querying_.store(context, std::memory_order_seq_cst);
  if (context == 0 || !slots_[i].alive.load(std::memory_order_seq_cst)) {
    querying_.store(0, std::memory_order_seq_cst);
    return false;
  }
  return true;
}

bool ContextTable::Alive(uint64_t context) const noexcept {
  const size_t n = size();
  for (size_t i = 0; i < n; ++i) {
    if (slots_[i].context.load(std::memory_order_acquire) == context) {
      return slots_[i].alive.load(std::memory_order_acquire);
    }
  }
  return false;
}

void ContextTable::ResetForTesting() noexcept {
  for (Slot& s : slots_) {
    s.context.store(0);
    s.device.store(-1);
    s.alive.store(false);
  }
  count_.store(0);
  querying_.store(0);
}

void FunctionNames::ResetForTesting() noexcept {
  for (size_t i = 0; i < kSlots; ++i) {
    keys_[i].store(0);
    ids_[i].store(0);
  }
}

void PoolSet::Add(uint64_t pool, int32_t device) noexcept {
  if (pool == 0)
    return;
  const size_t n = size();
  for (size_t i = 0; i < n; ++i) {
    if (slots_[i].pool.load(std::memory_order_acquire) == pool) {
      if (device >= 0)
        slots_[i].device.store(device, std::memory_order_relaxed);
      slots_[i].alive.store(true, std::memory_order_release);  // a handle value reused
      return;
    }
  }
  const size_t i = count_.fetch_add(1, std::memory_order_acq_rel);
  if (i >= kSlots)
    return;
  slots_[i].device.store(device, std::memory_order_relaxed);
  slots_[i].alive.store(true, std::memory_order_relaxed);
  slots_[i].pool.store(pool, std::memory_order_release);
}

void PoolSet::DestroyBegin(uint64_t pool) noexcept {
  const size_t n = size();
  for (size_t i = 0; i < n; ++i) {
    if (slots_[i].pool.load(std::memory_order_acquire) == pool) {
      slots_[i].alive.store(false, std::memory_order_seq_cst);
    }
  }
  // Dekker-style handshake with BeginQuery: both sides use seq_cst, so either the writer sees
  // the pool dead, or we see its query and wait for it to end. The wait is bounded (100 ms):
  // the writer's query never waits for this thread, so it ends quickly in practice.
  const int64_t deadline = ClockNs() + 100'000'000;
  while (querying_.load(std::memory_order_seq_cst) == pool && ClockNs() < deadline) {
    sched_yield();
  }
}

bool PoolSet::BeginQuery(size_t i) noexcept {
  const uint64_t pool = slots_[i].pool.load(std::memory_order_acquire);
  querying_.store(pool, std::memory_order_seq_cst);
  if (!slots_[i].alive.load(std::memory_order_seq_cst)) {
    querying_.store(0, std::memory_order_seq_cst);
    return false;
  }
  return true;
}

void PoolSet::ResetForTesting() noexcept {
  for (Slot& s : slots_) {
    s.pool.store(0);
    s.device.store(-1);
    s.alive.store(false);
  }
  count_.store(0);
  querying_.store(0);
}

}  // namespace cuclimb::interposer
