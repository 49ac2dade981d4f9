// SPDX-License-Identifier: Apache-2.0
// The kinds of accumulators: one table of what each counts, in which unit, how it is written in
// the report and through which CUDA calls it can cost a range time. Everything that depends on
// the kind reads it from here (docs/report-schema.md, "Accumulators").
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cuclimb::analysis {

enum class AccumulatorKind : uint8_t {
  kDeviceAllocations,
  kPoolReserved,
  kNvtxRegions,
  kPinnedAllocations,
  kManagedAllocations,
  kVmmMappings,
  kHostFunction,
  kEvents,
  kStreams,
  kModules,
  kGraphs,
  kCount,
};

// What a kind's handles are: how the evidence names their birth and their end.
enum class HandleNature : uint8_t { kAllocation, kHandle, kRegion, kNone };

// Where a candidate's own series sit among the report's state series (`state`, report-schema.md
// "State"): the metric of its level and of its live bytes ("" when it has none) and the
// dimension they are keyed by; allocation kinds key theirs "kind: key" (one call site may
// allocate several kinds), the others by the candidate's key.
struct CandidateSeriesNames {
  const char* metric;
  const char* bytes_metric;
  const char* dimension;
  bool key_has_kind;
};

struct AccumulatorKindInfo {
  AccumulatorKind kind;
  const char* name;  // the report's `kind` string (schema)
  const char* unit;  // the report's `unit`: "handles", "bytes" or "samples"
  // Smallest meaningful step of the series (the trend's resolution) and the least growth over
  // the tested window that counts as an accumulator, in `unit`.
  double resolution;
  double min_growth;
  // State that lives on (counts toward "the only state that grows"); pool reserve follows the
  // allocations in it and host samples are time, not state.
  bool is_state;
  // A rate whose growth must also be ≥ min_climb_pct (host samples are a time, not a level).
  bool needs_relative_growth;
  HandleNature nature;
  // Substrings of API names through which the state can cost a range time (its API family);
  // empty: any range can pay for it (host code, NVTX regions).
  std::array<std::string_view, 8> apis;
  CandidateSeriesNames series;
};

// In ranking order: the prior for ties puts allocator state before handle leaks.
// clang-format off
inline constexpr std::array<AccumulatorKindInfo, static_cast<size_t>(AccumulatorKind::kCount)>
    kAccumulatorKinds = {{
  // kind                                name                  unit       res  min growth  state  rel.
  {AccumulatorKind::kDeviceAllocations,  "device_allocations",  "handles", 0.5, 2,          true,  false,
   HandleNature::kAllocation, {"Alloc", "Free", "Malloc", "MemPool", "MemCreate", "MemMap"},
   {"live_handles", "live_bytes", "call_site", true}},
  {AccumulatorKind::kPoolReserved,       "pool_reserved",       "bytes",   1.0, 1 << 20,    false, false,
   HandleNature::kNone, {"Alloc", "Free", "Malloc", "MemPool", "MemCreate", "MemMap"},
   {"pool.reserved", "", "pool", false}},
  {AccumulatorKind::kNvtxRegions,        "nvtx_regions",        "handles", 0.5, 2,          true,  false,
   HandleNature::kRegion, {},
   {"live_regions", "live_region_bytes", "heap", false}},
  {AccumulatorKind::kPinnedAllocations,  "pinned_allocations",  "handles", 0.5, 2,          true,  false,
   HandleNature::kAllocation, {"Alloc", "Free", "Malloc", "HostRegister", "HostUnregister"},
   {"live_handles", "live_bytes", "call_site", true}},
  {AccumulatorKind::kManagedAllocations, "managed_allocations", "handles", 0.5, 2,          true,  false,
   HandleNature::kAllocation, {"Alloc", "Free", "Malloc", "Prefetch", "Advise"},
   {"live_handles", "live_bytes", "call_site", true}},
  {AccumulatorKind::kVmmMappings,        "vmm_mappings",        "handles", 0.5, 2,          true,  false,
   HandleNature::kAllocation,
   {"MemMap", "MemUnmap", "MemCreate", "MemRelease", "SetAccess", "AddressReserve", "Alloc", "Free"},
   {"live_handles", "live_bytes", "call_site", true}},
  {AccumulatorKind::kHostFunction,       "host_function",       "samples", 0.5, 2,          false, true,
   HandleNature::kNone, {},
   {"inclusive_samples", "", "function", false}},
  {AccumulatorKind::kEvents,             "events",              "handles", 0.5, 2,          true,  false,
   HandleNature::kHandle, {"Event"},
   {"", "", "", false}},
  // Leaked streams cost time where streams are made and ended; launches and waits on other
  // streams do not pay for them.
  {AccumulatorKind::kStreams,            "streams",             "handles", 0.5, 2,          true,  false,
   HandleNature::kHandle, {"StreamCreate", "StreamDestroy"},
   {"", "", "", false}},
  // Every loaded module is searched when a kernel is resolved.
  {AccumulatorKind::kModules,            "modules",             "handles", 0.5, 2,          true,  false,
   HandleNature::kHandle, {"Launch", "Module", "Library", "Kernel"},
   {"", "", "", false}},
  {AccumulatorKind::kGraphs,             "graphs",              "handles", 0.5, 2,          true,  false,
   HandleNature::kHandle, {"Graph"},
   {"", "", "", false}},
}};
// clang-format on

inline const AccumulatorKindInfo& Info(AccumulatorKind kind) {
  return kAccumulatorKinds[static_cast<size_t>(kind)];
}

// Whether the kind's growth can be measured in bytes (its unit, or a live-bytes series).
inline bool HasBytes(const AccumulatorKindInfo& info) {
  return std::string_view(info.unit) == "bytes" || *info.series.bytes_metric != '\0';
}

// The kind named `name` in the report, if any.
std::optional<AccumulatorKind> AccumulatorKindNamed(std::string_view name);

// Whether an API of this name belongs to the kind's family (always for kinds without one).
bool InApiFamily(const AccumulatorKindInfo& info, std::string_view api);

}  // namespace cuclimb::analysis
