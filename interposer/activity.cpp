// SPDX-License-Identifier: Apache-2.0
// Activity-record translation of activity.h.
#include "interposer/activity.h"

#include <tuple>

#include "interposer/clock.h"
#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

using format::Event;
using format::EventType;
using format::MemoryKind;

MemoryKind KindOf(CUpti_ActivityMemoryKind kind, bool pooled) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return MemoryKind::kPinned;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return pooled ? MemoryKind::kPool : MemoryKind::kDevice;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return MemoryKind::kManaged;
    default:
      return MemoryKind::kUnknown;
  }
}

int64_t Ts(uint64_t cupti_ns) {
  return ToTraceNs(static_cast<int64_t>(cupti_ns));
}

}  // namespace

void ActivityTranslator::InternNames() noexcept {
  str_memory2_ = InternString("MEMORY2");
  str_memory_pool_ = InternString("MEMORY_POOL");
  // Not "pool.reserved"/"pool.used": CUPTI identifies a pool by the base address of its memory,
  // not by the CUmemoryPool handle that the writer's gauges and the API events carry.
  str_reserved_ = InternString("memory2.pool.reserved");
  str_used_ = InternString("memory2.pool.used");
}

size_t ActivityTranslator::PoolGauges(int64_t ts, int32_t device, uint64_t pool, uint64_t reserved,
                                      uint64_t used, Event* out) noexcept {
  PoolSeen* seen = nullptr;
  for (size_t i = 0; i < pool_count_; ++i) {
    if (pools_[i].pool == pool)
      seen = &pools_[i];
  }
  if (seen == nullptr) {
    if (pool_count_ < kPools) {
      seen = &pools_[pool_count_++];
      *seen = PoolSeen{pool, ~uint64_t{0}, ~uint64_t{0}};
    } else {
      seen = &pools_[pool % kPools];  // many pools: evict, at worst a repeated gauge
      *seen = PoolSeen{pool, ~uint64_t{0}, ~uint64_t{0}};
    }
  }
  // Only when the pool's reserved size changed (it grew, or gave memory back): the used size
  // changes with every allocation, which the alloc/free events already say, and one gauge pair
  // per record would double the trace of an allocation-heavy program.
  if (reserved == seen->reserved)
    return 0;
  size_t n = 0;
  for (auto [name, value, last] : {std::tuple{str_reserved_, reserved, &seen->reserved},
                                   std::tuple{str_used_, used, &seen->used}}) {
    Event ev = format::MakeEvent(EventType::kGauge);
    ev.ts = ts;
    ev.device = device;
    ev.name = name;
    ev.value = static_cast<int64_t>(value);
    ev.handle = pool;
    out[n++] = ev;
    *last = value;
  }
  return n;
}

size_t ActivityTranslator::Translate(const CUpti_Activity* record, Event* out) noexcept {
  ++records_;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemory4*>(record);
      const bool pooled =
          m->memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
      const bool alloc = m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
      if (!alloc && m->memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
        ++unknown_;
        return 0;
      }
      Event ev = format::MakeEvent(alloc ? EventType::kAlloc : EventType::kFree);
      ev.ts = Ts(m->timestamp);
      ev.api = str_memory2_;
      ev.kind = static_cast<uint8_t>(KindOf(m->memoryKind, pooled));
      ev.addr = m->address;
      ev.size = m->bytes;
      ev.device = static_cast<int32_t>(m->deviceId);
      ev.corr = m->correlationId;
      if (pooled)
        ev.aux = m->memoryPoolConfig.address;
      out[0] = ev;
      size_t n = 1;
      if (pooled && m->memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) {
        n += PoolGauges(ev.ts, ev.device, m->memoryPoolConfig.address,
                        m->memoryPoolConfig.pool.size, m->memoryPoolConfig.utilizedSize, out + n);
      }
      return n;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY_POOL: {
      const auto* p = reinterpret_cast<const CUpti_ActivityMemoryPool3*>(record);
      const int64_t ts = Ts(p->timestamp);
      const auto device = static_cast<int32_t>(p->deviceId);
      size_t n = 0;
      if (p->memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED) {
        Event ev = format::MakeEvent(EventType::kPoolTrim);
        ev.ts = ts;
        ev.handle = p->address;
        ev.size = p->minBytesToKeep;
        out[n++] = ev;
      } else if (p->memoryPoolOperationType != CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_CREATED &&
                 p->memoryPoolOperationType !=
                     CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED) {
        ++unknown_;
        return 0;
      }
      if (p->memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL) {
        const bool destroyed =
            p->memoryPoolOperationType == CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED;
        n += PoolGauges(ts, device, p->address, destroyed ? 0 : p->size,
                        destroyed ? 0 : p->utilizedSize, out + n);
      }
      return n;
    }
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      Event ev = format::MakeEvent(EventType::kKernel);
      ev.ts = Ts(k->start);
      ev.dur = k->end >= k->start ? static_cast<int64_t>(k->end - k->start) : 0;
      ev.name = k->name != nullptr ? InternString(k->name) : format::kNoString;
      ev.stream = k->streamId;
      ev.corr = k->correlationId;
      ev.device = static_cast<int32_t>(k->deviceId);
      ev.grid[0] = static_cast<uint32_t>(k->gridX);
      ev.grid[1] = static_cast<uint32_t>(k->gridY);
      ev.grid[2] = static_cast<uint32_t>(k->gridZ);
      ev.block[0] = static_cast<uint32_t>(k->blockX);
      ev.block[1] = static_cast<uint32_t>(k->blockY);
      ev.block[2] = static_cast<uint32_t>(k->blockZ);
      ev.size = static_cast<uint64_t>(k->dynamicSharedMemory);
      ev.handle = k->graphId;
      out[0] = ev;
      return 1;
    }
    default:
      ++unknown_;
      return 0;
  }
}

}  // namespace cuclimb::interposer
