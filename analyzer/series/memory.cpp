// SPDX-License-Identifier: Apache-2.0
// The streaming pass, memory part: allocations (address + serial identity), VMM, handles,
// gauges, NVTX heaps and regions.
#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

#include "interposer/format/trace_format.h"
#include "series/aggregator.h"
#include "util/saturating.h"

namespace cuclimb::analysis {

using format::EventType;
using trace::Event;

namespace {

// Iteration of a slot as far as slots tell: −1 for the prologue.
int64_t IterOf(uint32_t slot) {
  return slot == 0 ? -1 : (static_cast<int64_t>(slot) - 1) / 2;
}

}  // namespace

void Aggregator::ProcessMemory(const Event& ev, uint32_t slot) {
  switch (ev.type) {
    case EventType::kAlloc:
      OnAlloc(ev, slot);
      break;
    case EventType::kFree:
      OnFree(ev, slot);
      break;
    case EventType::kVmm:
      OnVmm(ev, slot);
      break;
    case EventType::kCreate:
    case EventType::kDestroy:
      OnHandle(ev, slot);
      break;
    case EventType::kGauge:
      OnGauge(ev, slot);
      break;
    case EventType::kHeap:
    case EventType::kHeapDestroy:
    case EventType::kHeapReset:
      OnHeap(ev, slot);
      break;
    case EventType::kRegion:
      OnRegion(ev, slot);
      break;
    case EventType::kRegionFree:
      OnRegionFree(ev, slot);
      break;
    default:
      break;
  }
}

void Aggregator::TakeMemory(Aggregator* memory) {
  // Every Aggregates field the handlers of this file write, and no other.
  Aggregates& m = memory->a_;
  a_.alloc_keys = std::move(m.alloc_keys);
  a_.alloc_series = std::move(m.alloc_series);
  a_.live_allocs = std::move(m.live_allocs);
  a_.live_maps = std::move(m.live_maps);
  a_.recent_frees = std::move(m.recent_frees);
  a_.recent_free_slot = m.recent_free_slot;
  a_.unmatched_frees = m.unmatched_frees;
  a_.replaced_allocations = m.replaced_allocations;
  a_.unmatched_unmaps = m.unmatched_unmaps;
  a_.activity_duplicates = m.activity_duplicates;
  a_.alloc_serial = m.alloc_serial;
  a_.vmm_physical = std::move(m.vmm_physical);
  a_.vmm_physical_created = std::move(m.vmm_physical_created);
  a_.vmm_physical_released = std::move(m.vmm_physical_released);
  a_.vmm_physical_bytes_delta = std::move(m.vmm_physical_bytes_delta);
  a_.va_reserved_delta = std::move(m.va_reserved_delta);
  a_.va_reserved = std::move(m.va_reserved);
  a_.live_bytes = m.live_bytes;
  a_.peak_bytes = m.peak_bytes;
  a_.peak_ts = m.peak_ts;
  a_.peak_slot = m.peak_slot;
  std::copy(std::begin(m.live_by_kind), std::end(m.live_by_kind), std::begin(a_.live_by_kind));
  std::copy(std::begin(m.peak_by_kind), std::end(m.peak_by_kind), std::begin(a_.peak_by_kind));
  a_.peak_per_slot = std::move(m.peak_per_slot);
  a_.lifetime_iterations = std::move(m.lifetime_iterations);
  a_.handle_keys = std::move(m.handle_keys);
  a_.handle_series = std::move(m.handle_series);
  a_.live_handles = std::move(m.live_handles);
  a_.unmatched_destroys = m.unmatched_destroys;
  a_.heaps = std::move(m.heaps);
  a_.heap_index = std::move(m.heap_index);
  a_.live_regions = std::move(m.live_regions);
  a_.region_handles = std::move(m.region_handles);
  a_.unmatched_region_frees = m.unmatched_region_frees;
  a_.gauge_keys = std::move(m.gauge_keys);
  a_.gauges = std::move(m.gauges);
}

uint32_t Aggregator::AllocKeyIndex(uint8_t kind, uint64_t size, uint32_t api, uint32_t stack) {
  const uint8_t cls = SizeClass(size);
  // kind 4 bits | class 7 bits | api 24 bits | stack 29 bits (ids are capped at 2^24).
  const uint64_t packed = (uint64_t{kind} & 0xf) << 60 | (uint64_t{cls} & 0x7f) << 53 |
                          (uint64_t{api} & 0xffffff) << 29 | (uint64_t{stack} & 0x1fffffff);
  if (const auto* known = alloc_key_index_.find(packed); known != nullptr) [[likely]]
    return known->second;
  const auto index = static_cast<uint32_t>(a_.alloc_keys.size());
  alloc_key_index_.try_emplace(packed, index);
  a_.alloc_keys.push_back({kind, cls, api, stack});
  a_.alloc_series.emplace_back();
  return index;
}

void Aggregator::NoteFreeAny(uint64_t addr, const LiveAlloc& live, uint32_t slot, int handle_type) {
  if (slot > a_.recent_free_slot) {
    a_.recent_free_slot = slot;
    std::erase_if(a_.recent_frees,
                  [slot](const Aggregates::FreedAlloc& f) { return f.free_slot + 1 < slot; });
  }
  if (slot + 1 >= a_.recent_free_slot)
    a_.recent_frees.push_back({addr, live, slot, handle_type});
}

void Aggregator::Retire(LiveAlloc& live, uint32_t slot, bool count_lifetime) {
  AllocSeries& s = a_.alloc_series[live.key];
  const double size = static_cast<double>(live.size);
  SlotAdd(s.frees, slot, 1);
  SlotAdd(s.free_bytes, slot, size);
  const int64_t born = IterOf(live.slot), died = IterOf(slot);
  if (born >= 0 && born == died) {
    SlotAdd(s.temps, slot, 1);
    SlotAdd(s.temp_bytes, slot, size);
  }
  if (count_lifetime) {
    const int64_t lived = born < 0 ? -1 : std::max<int64_t>(died - born, 0);
    if (lived < kShortLives) [[likely]]
      ++short_lives_[static_cast<size_t>(lived + 1)];
    else
      ++a_.lifetime_iterations[static_cast<int>(std::min<int64_t>(lived, INT32_MAX))];
  }
  const uint8_t kind = a_.alloc_keys[live.key].kind;
  if (kind != kVmmMappingKind) {
    a_.live_bytes = util::SaturatingSub(a_.live_bytes, util::SaturatingInt64(live.size));
    a_.live_by_kind[kind & 15] =
        util::SaturatingSub(a_.live_by_kind[kind & 15], util::SaturatingInt64(live.size));
  }
}

void Aggregator::OnAlloc(const Event& ev, uint32_t slot) {
  // CUPTI MEMORY2 records (tid 0) repeat what the allocation callbacks already recorded, with the
  // same correlation id; they alone see graph and CUDA-internal allocations.
  const bool activity = ev.tid == 0;
  if (activity && SeenCallback(ev.corr)) {
    ++a_.activity_duplicates;
    return;
  }
  if (!activity)
    NoteCallback(ev.corr);
  const uint8_t kind = ev.kind < static_cast<uint8_t>(format::MemoryKind::kCount) ? ev.kind : 0;
  const uint32_t key = AllocKeyIndex(kind, ev.size, ev.api, ev.stack);
  LiveAlloc live{ev.size, ++a_.alloc_serial, ev.ts, key, slot, ev.corr, activity};
  auto [it, inserted] = a_.live_allocs.try_emplace(ev.addr, live);
  if (!inserted) {
    LiveAlloc& old = it->second;
    if (!activity && old.from_activity && old.corr == ev.corr && ev.corr != 0) {
      // The MEMORY2 record came first: the callback's record (with its stack) replaces it.
      ++a_.activity_duplicates;
      AllocSeries& os = a_.alloc_series[old.key];
      SlotAdd(os.allocs, old.slot, -1);
      SlotAdd(os.alloc_bytes, old.slot, -static_cast<double>(old.size));
      const uint8_t old_kind = a_.alloc_keys[old.key].kind;
      a_.live_bytes = util::SaturatingSub(a_.live_bytes, util::SaturatingInt64(old.size));
      a_.live_by_kind[old_kind & 15] =
          util::SaturatingSub(a_.live_by_kind[old_kind & 15], util::SaturatingInt64(old.size));
    } else {
      // The same address again without a free: the free was not seen (dropped, or made by a
      // path cuclimb does not hook). The old allocation ends here.
      ++a_.replaced_allocations;
      Retire(old, slot, false);
    }
    it->second = live;
  }
  AllocSeries& s = a_.alloc_series[key];
  SlotAdd(s.allocs, slot, 1);
  SlotAdd(s.alloc_bytes, slot, static_cast<double>(ev.size));
  a_.live_bytes = util::SaturatingAdd(a_.live_bytes, util::SaturatingInt64(ev.size));
  a_.live_by_kind[kind] =
      util::SaturatingAdd(a_.live_by_kind[kind], util::SaturatingInt64(ev.size));
  a_.peak_by_kind[kind] = std::max(a_.peak_by_kind[kind], a_.live_by_kind[kind]);
  SlotMax(a_.peak_per_slot, slot, static_cast<double>(a_.live_bytes));
  if (a_.live_bytes > a_.peak_bytes) {
    a_.peak_bytes = a_.live_bytes;
    a_.peak_ts = ev.ts;
    a_.peak_slot = slot;
  }
}

void Aggregator::OnFree(const Event& ev, uint32_t slot) {
  if (ev.tid == 0 && SeenCallback(ev.corr)) {
    ++a_.activity_duplicates;
    return;
  }
  if (ev.tid != 0)
    NoteCallback(ev.corr);
  auto* it = a_.live_allocs.find(ev.addr);
  if (it == nullptr) {
    ++a_.unmatched_frees;  // allocated before recording started, or its record was dropped
    return;
  }
  Retire(it->second, slot, true);
  NoteFree(ev.addr, it->second, slot);
  a_.live_allocs.erase(it);
}

void Aggregator::OnVmm(const Event& ev, uint32_t slot) {
  switch (static_cast<format::VmmOp>(ev.kind)) {
    case format::VmmOp::kReserve:
      a_.va_reserved[ev.addr] = ev.size;
      SlotAdd(a_.va_reserved_delta, slot, static_cast<double>(ev.size));
      break;
    case format::VmmOp::kFreeVa:
      if (auto it = a_.va_reserved.find(ev.addr); it != a_.va_reserved.end()) {
        SlotAdd(a_.va_reserved_delta, slot, -static_cast<double>(it->second));
        a_.va_reserved.erase(it);
      }
      break;
    case format::VmmOp::kCreate:
      if (a_.vmm_physical.emplace(ev.handle, ev.size).second) {
        SlotAdd(a_.vmm_physical_created, slot, 1);
        SlotAdd(a_.vmm_physical_bytes_delta, slot, static_cast<double>(ev.size));
      }
      break;
    case format::VmmOp::kRelease:
      if (auto it = a_.vmm_physical.find(ev.handle); it != a_.vmm_physical.end()) {
        SlotAdd(a_.vmm_physical_released, slot, 1);
        SlotAdd(a_.vmm_physical_bytes_delta, slot, -static_cast<double>(it->second));
        a_.vmm_physical.erase(it);
      }
      break;
    case format::VmmOp::kMap: {
      const uint32_t key = AllocKeyIndex(kVmmMappingKind, ev.size, ev.api, ev.stack);
      LiveAlloc live{ev.size, ++a_.alloc_serial, ev.ts, key, slot};
      auto [it, inserted] = a_.live_maps.try_emplace(ev.addr, live);
      if (!inserted) {
        ++a_.replaced_allocations;
        Retire(it->second, slot, false);
        it->second = live;
      }
      SlotAdd(a_.alloc_series[key].allocs, slot, 1);
      SlotAdd(a_.alloc_series[key].alloc_bytes, slot, static_cast<double>(ev.size));
      break;
    }
    case format::VmmOp::kUnmap:
      if (auto* it = a_.live_maps.find(ev.addr); it != nullptr) {
        Retire(it->second, slot, true);
        NoteFree(ev.addr, it->second, slot);
        a_.live_maps.erase(it);
      } else {
        ++a_.unmatched_unmaps;
      }
      break;
    default:
      break;
  }
}

void Aggregator::OnHandle(const Event& ev, uint32_t slot) {
  const std::pair<uint8_t, uint64_t> id{ev.kind, ev.handle};
  if (ev.type == EventType::kCreate) {
    const uint64_t packed = (uint64_t{ev.kind} & 0xff) << 56 | (uint64_t{ev.api} & 0xffffff) << 29 |
                            (uint64_t{ev.stack} & 0x1fffffff);
    auto [kit, knew] =
        handle_key_index_.try_emplace(packed, static_cast<uint32_t>(a_.handle_keys.size()));
    if (knew) {
      a_.handle_keys.push_back({ev.kind, ev.api, ev.stack});
      a_.handle_series.emplace_back();
    }
    const uint32_t key = kit->second;
    LiveAlloc live{0, ++a_.alloc_serial, ev.ts, key, slot};
    auto [it, inserted] = a_.live_handles.try_emplace(id, live);
    if (!inserted) {
      SlotAdd(a_.handle_series[it->second.key].destroys, slot, 1);
      it->second = live;
    }
    SlotAdd(a_.handle_series[key].creates, slot, 1);
    return;
  }
  auto it = a_.live_handles.find(id);
  if (it == a_.live_handles.end()) {
    ++a_.unmatched_destroys;
    return;
  }
  SlotAdd(a_.handle_series[it->second.key].destroys, slot, 1);
  NoteFree(ev.handle, it->second, slot, ev.kind);
  a_.live_handles.erase(it);
}

void Aggregator::OnGauge(const Event& ev, uint32_t slot) {
  auto [it, inserted] = gauge_index_.try_emplace(std::make_tuple(ev.name, ev.handle, ev.device),
                                                 static_cast<uint32_t>(a_.gauges.size()));
  if (inserted) {
    a_.gauge_keys.push_back({ev.name, ev.handle, ev.device});
    a_.gauges.emplace_back();
  }
  GaugeSeries& g = a_.gauges[it->second];
  if (slot >= g.ts.size()) {
    g.ts.resize(slot + 1 + g.ts.size() / 2, std::numeric_limits<int64_t>::min());
    g.value.resize(g.ts.size(), 0.0);
  }
  if (ev.ts >= g.ts[slot]) {
    g.ts[slot] = ev.ts;
    g.value[slot] = static_cast<double>(ev.value);
  }
}

void Aggregator::DropRegion(HeapSeries& heap, const LiveAlloc& live, uint32_t slot) {
  SlotAdd(heap.frees, slot, 1);
  SlotAdd(heap.free_bytes, slot, static_cast<double>(live.size));
}

void Aggregator::OnHeap(const Event& ev, uint32_t slot) {
  auto [it, inserted] =
      a_.heap_index.try_emplace(ev.handle, static_cast<uint32_t>(a_.heaps.size()));
  if (inserted) {
    a_.heaps.emplace_back();
    a_.heaps.back().heap = ev.handle;
  }
  HeapSeries& heap = a_.heaps[it->second];
  if (ev.type == EventType::kHeap) {
    if (ev.name != 0)
      heap.name = ev.name;
    heap.size = ev.size;
    return;
  }
  // Reset or destroy: every region of the heap goes.
  auto regions = a_.live_regions.find(ev.handle);
  if (regions == a_.live_regions.end())
    return;
  for (const auto& [addr, live] : regions->second) DropRegion(heap, live, slot);
  a_.live_regions.erase(regions);
}

void Aggregator::OnRegion(const Event& ev, uint32_t slot) {
  auto [hit, hnew] = a_.heap_index.try_emplace(ev.aux, static_cast<uint32_t>(a_.heaps.size()));
  if (hnew) {
    a_.heaps.emplace_back();
    a_.heaps.back().heap = ev.aux;
  }
  HeapSeries& heap = a_.heaps[hit->second];
  LiveAlloc live{ev.size, ++a_.alloc_serial, ev.ts, hit->second, slot};
  auto& regions = a_.live_regions[ev.aux];
  auto [it, inserted] = regions.try_emplace(ev.addr, live);
  if (!inserted) {
    DropRegion(heap, it->second, slot);
    it->second = live;
  }
  if (ev.handle != 0)
    a_.region_handles[ev.handle] = {ev.aux, ev.addr};
  SlotAdd(heap.regions, slot, 1);
  SlotAdd(heap.bytes, slot, static_cast<double>(ev.size));
}

void Aggregator::OnRegionFree(const Event& ev, uint32_t slot) {
  uint64_t heap = ev.aux, addr = ev.addr;
  if (addr == 0 && ev.handle != 0) {
    auto h = a_.region_handles.find(ev.handle);
    if (h == a_.region_handles.end()) {
      ++a_.unmatched_region_frees;
      return;
    }
    heap = h->second.first;
    addr = h->second.second;
    a_.region_handles.erase(h);
  }
  auto free_in = [&](uint64_t h) {
    auto regions = a_.live_regions.find(h);
    if (regions == a_.live_regions.end())
      return false;
    auto it = regions->second.find(addr);
    if (it == regions->second.end())
      return false;
    DropRegion(a_.heaps[a_.heap_index[h]], it->second, slot);
    regions->second.erase(it);
    return true;
  };
  if (heap != 0 ? free_in(heap) : false)
    return;
  if (heap == 0) {
    // No heap given: the address identifies the region in whichever heap holds it.
    for (const HeapSeries& h : a_.heaps) {
      if (free_in(h.heap))
        return;
    }
  }
  ++a_.unmatched_region_frees;
}

}  // namespace cuclimb::analysis
