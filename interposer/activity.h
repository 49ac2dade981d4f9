// SPDX-License-Identifier: Apache-2.0
// Translation of CUPTI activity records (MEMORY2 → CUpti_ActivityMemory4, MEMORY_POOL →
// CUpti_ActivityMemoryPool3, CONCURRENT_KERNEL → CUpti_ActivityKernel10; CUDA 13.0 layouts) into
// trace events. The buffers themselves are handled by activity_buffers.cpp.
//
// Runs on the writer thread (or the thread that forces a flush at exit). CUDA-free: unit tests
// feed it synthesized records. Record layouts change between CUPTI minors (13.2 replaces
// Kernel10), so lifecycle.cpp parses records only for a validated CUPTI version.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cupti.h>

#include "interposer/format/trace_format.h"

namespace cuclimb::interposer {

// Writer-side state of the translation: the last pool gauges emitted, so an unchanged pool
// emits nothing. Gauges from MEMORY2/MEMORY_POOL records are named memory2.pool.reserved and
// memory2.pool.used and carry the pool's base address as seen by CUPTI (on the H200: the address
// of the pool's first allocation), not the CUmemoryPool handle. Not thread-safe: one translator
// per consumer.
class ActivityTranslator {
 public:
  static constexpr size_t kMaxEvents = 4;  // events one record can produce

  // Interns the fixed names (cold; after the recorder started).
  void InternNames() noexcept;

  // Writes the events of record into out (at most kMaxEvents) and returns how many.
  size_t Translate(const CUpti_Activity* record, format::Event* out) noexcept;

  uint64_t records() const { return records_; }
  uint64_t unknown_records() const { return unknown_; }

 private:
  size_t PoolGauges(int64_t ts, int32_t device, uint64_t pool, uint64_t reserved, uint64_t used,
                    format::Event* out) noexcept;

  struct PoolSeen {
    uint64_t pool;
    uint64_t reserved;
    uint64_t used;
  };
  static constexpr size_t kPools = 64;
  PoolSeen pools_[kPools] = {};
  size_t pool_count_ = 0;
  uint32_t str_memory2_ = 0;
  uint32_t str_memory_pool_ = 0;
  uint32_t str_reserved_ = 0;
  uint32_t str_used_ = 0;
  uint64_t records_ = 0;
  uint64_t unknown_ = 0;
};

}  // namespace cuclimb::interposer
