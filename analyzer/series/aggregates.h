// SPDX-License-Identifier: Apache-2.0
// What one pass over a trace accumulates: per-slot arrays keyed by dense ids, plus the state
// that is live at the end. Slots are Boundaries' (iterations/segmenter.h): 0 = prologue,
// 2i+1 / 2i+2 = iteration i and the gap after it. FoldSlots() turns them into iterations.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "series/address_map.h"
#include "series/host_functions.h"
#include "series/slot_vec.h"

namespace cuclimb::analysis {

// Per-slot arrays are SlotVecs (series/slot_vec.h): paged, zero pages absent.
inline void SlotAdd(SlotVec& v, uint32_t slot, double x) {
  v.Add(slot, x);
}
inline void SlotMax(SlotVec& v, uint32_t slot, double x) {
  v.Max(slot, x);
}

// Memory kinds beyond format::MemoryKind used as allocation keys.
inline constexpr uint8_t kVmmMappingKind = 15;  // cuMemMap ranges (vmm events)
// Pseudo string id naming the API of launch events that carry none.
inline constexpr uint32_t kLaunchApiId = 0xFFFFFF01u;

// An allocation key: every dimension at once; groupings are sums over keys.
struct AllocKey {
  uint8_t kind = 0;        // format::MemoryKind or kVmmMappingKind
  uint8_t size_class = 0;  // SizeClass(size)
  uint32_t api = 0;        // string id
  uint32_t stack = 0;      // stack id
};
struct AllocSeries {
  SlotVec allocs, frees, alloc_bytes, free_bytes, temps, temp_bytes;
  // Bytes freed from handles allocated in the prologue are in free_bytes like any other.
};

struct HandleKey {
  uint8_t type = 0;  // format::HandleType
  uint32_t api = 0, stack = 0;
};
struct HandleSeries {
  SlotVec creates, destroys;
};

struct HeapSeries {
  uint64_t heap = 0;
  uint32_t name = 0;  // string id
  uint64_t size = 0;  // registered heap size
  SlotVec regions, frees, bytes, free_bytes;
};

struct GaugeKey {
  uint32_t name = 0;
  uint64_t pool = 0;
  int32_t device = -1;
};
// A gauge keeps the last sample of each slot, not a sum: dense arrays (there are a few gauges).
struct GaugeSeries {
  std::vector<double> value;  // last value (by timestamp) in each slot
  std::vector<int64_t> ts;    // its timestamp; INT64_MIN = no sample
};

struct KernelSeries {
  SlotVec launches, executions, gpu_ns;
};
struct ApiSeries {
  SlotVec calls, ns;
};

struct RangeSeries {
  uint32_t name = 0, domain = 0;
  SlotVec total_ns, count, api_ns, sync_ns, gpu_ns;
  absl::flat_hash_map<uint32_t, uint64_t> instances_by_tid;
};

// An allocation (or mapping, handle, region) live right now.
struct LiveAlloc {
  uint64_t size = 0;
  uint64_t serial = 0;
  int64_t ts = 0;
  uint32_t key = 0;
  uint32_t slot = 0;
  uint64_t corr = 0;           // correlation id of the allocating call
  bool from_activity = false;  // recorded from a CUPTI MEMORY2 record (tid 0), not a callback
};

struct ProcessRecord {
  bool seen = false;
  int64_t pid = 0, rank = -1;
  uint32_t cmd = 0, host = 0, exe = 0;
  uint64_t driver = 0, cupti = 0;
};
struct DeviceRecord {
  int32_t ordinal = -1;
  uint32_t name = 0, uuid = 0;
  uint64_t total = 0;
  int64_t cc = 0;
};
struct ThreadRecord {
  uint32_t name = 0;
  uint64_t events = 0, cuda_calls = 0;
};

struct Aggregates {
  // Allocations.
  std::vector<AllocKey> alloc_keys;
  std::vector<AllocSeries> alloc_series;
  AddressMap<LiveAlloc> live_allocs;  // address → allocation
  AddressMap<LiveAlloc> live_maps;    // VMM mapped address → mapping
  // Allocations, mappings and handles freed in the last two slots that saw a free (the aggregator
  // does not know where the loop ends): once iterations are known, those freed in the epilogue —
  // the program's tear-down — count as survivors of the loop next to those never freed.
  struct FreedAlloc {
    uint64_t addr = 0;
    LiveAlloc live;
    uint32_t free_slot = 0;
    int handle_type = -1;  // a destroyed handle's type (live.key indexes handle_keys); −1 = memory
  };
  std::vector<FreedAlloc> recent_frees;
  uint32_t recent_free_slot = 0;  // the highest slot of a free so far
  uint64_t unmatched_frees = 0, replaced_allocations = 0, unmatched_unmaps = 0;
  uint64_t activity_duplicates = 0;  // MEMORY2 records of calls the callbacks also recorded
  uint64_t alloc_serial = 0;
  // VMM physical handles and reserved address ranges.
  absl::flat_hash_map<uint64_t, uint64_t> vmm_physical;  // handle → bytes
  SlotVec vmm_physical_created, vmm_physical_released, vmm_physical_bytes_delta;
  SlotVec va_reserved_delta;
  absl::flat_hash_map<uint64_t, uint64_t> va_reserved;  // address → bytes
  // Peak of all tracked allocations (not VMM mappings: their memory is the physical handle).
  int64_t live_bytes = 0, peak_bytes = 0, peak_ts = 0;
  uint32_t peak_slot = 0;
  int64_t live_by_kind[16] = {};
  int64_t peak_by_kind[16] = {};
  SlotVec peak_per_slot;
  std::map<int, uint64_t> lifetime_iterations;  // iterations lived → frees (−1 = unknown)

  // Handles.
  std::vector<HandleKey> handle_keys;
  std::vector<HandleSeries> handle_series;
  absl::flat_hash_map<std::pair<uint8_t, uint64_t>, LiveAlloc> live_handles;
  uint64_t unmatched_destroys = 0;

  // NVTX memory regions.
  std::vector<HeapSeries> heaps;
  absl::flat_hash_map<uint64_t, uint32_t> heap_index;  // heap handle → heaps index
  absl::flat_hash_map<uint64_t, absl::flat_hash_map<uint64_t, LiveAlloc>> live_regions;
  absl::flat_hash_map<uint64_t, std::pair<uint64_t, uint64_t>> region_handles;  // → (heap, addr)
  uint64_t unmatched_region_frees = 0;

  // Gauges, kernels, APIs, synchronization, copies.
  std::vector<GaugeKey> gauge_keys;
  std::vector<GaugeSeries> gauges;
  std::vector<uint32_t> kernel_names;
  std::vector<KernelSeries> kernels;
  std::vector<uint32_t> api_names;
  std::vector<ApiSeries> apis;
  std::vector<uint32_t> sync_names;
  std::vector<ApiSeries> syncs;
  SlotVec copy_bytes, copies;

  // Ranges and their decomposition.
  std::vector<RangeSeries> ranges;
  // Without an NVTX iteration range, a pseudo range "(iteration)" collects the decomposition of
  // the boundary thread's time per iteration; its wall time comes from the iteration spans.
  int32_t iteration_range = -1;
  struct Part {
    uint32_t range = 0, name = 0;  // name: API, sync API or kernel string id
    SlotVec ns;
  };
  std::vector<Part> range_apis, range_syncs, range_kernels;
  uint64_t unmatched_pops = 0, unmatched_kernels = 0;

  // Host samples by leaf function (names_ is the function table).
  std::vector<std::string> functions;
  std::vector<SlotVec> function_samples;
  SlotVec samples;
  // And by every function on the stack (series/host_functions.h).
  HostFunctions host_functions;

  // Profiler overhead, drops, recording state.
  SlotVec overhead_ns, overhead_events, drops;
  std::map<uint32_t, int64_t> drops_by_reason;  // reason string id → count
  int64_t recording_pauses = 0;

  // Identity.
  ProcessRecord process;
  std::vector<DeviceRecord> devices;
  absl::flat_hash_map<uint32_t, ThreadRecord> threads;
  struct MappingRecord {
    uint32_t path;
    uint64_t base, size, offset;
  };
  std::vector<MappingRecord> mappings;
  int64_t first_ts = INT64_MAX, last_ts = INT64_MIN;
  uint64_t events = 0;
  SlotVec events_per_slot;
};

// Power-of-two size class: 0 for 0 bytes, else 1 + floor(log2(size − 1)) so that class c holds
// (2^(c−1), 2^c]; 1 byte is class 0 too.
inline uint8_t SizeClass(uint64_t size) {
  if (size <= 1)
    return 0;
  return static_cast<uint8_t>(64 - __builtin_clzll(size - 1));
}

}  // namespace cuclimb::analysis
