// SPDX-License-Identifier: Apache-2.0
// Named accessors for Event slots whose meaning depends on the event type.
//
// Event is one 128-byte POD for every type (trace_format.h), so generic slots carry per-type
// meanings: a process's pid sits in `value`, its rank in `corr` as rank + 1 (0 = no rank). Code
// that reads or writes such a field goes through these functions, so the convention lives here,
// next to the schema that declares it, and not in every producer and consumer.
#pragma once

#include <cstdint>

#include "trace_format.h"

namespace cuclimb::format {

#define CUCLIMB_ACCESSOR(Name, member, Type)           \
  constexpr Type Name(const Event& ev) {               \
    return static_cast<Type>(ev.member);               \
  }                                                    \
  constexpr void Set##Name(Event* ev, Type v) {        \
    ev->member = static_cast<decltype(ev->member)>(v); \
  }

// process
CUCLIMB_ACCESSOR(ProcessPid, value, int64_t)
CUCLIMB_ACCESSOR(ProcessParentPid, handle, uint64_t)
CUCLIMB_ACCESSOR(ProcessDriverVersion, size, uint64_t)  // cuDriverGetVersion, e.g. 13000
CUCLIMB_ACCESSOR(ProcessCuptiVersion, aux, uint64_t)    // cuptiGetVersion, e.g. 130001
// The rank of the process in its job, −1 when it is not part of one (stored as rank + 1).
constexpr int64_t ProcessRank(const Event& ev) {
  return ev.corr == 0 ? -1 : static_cast<int64_t>(ev.corr - 1);
}
constexpr void SetProcessRank(Event* ev, int64_t rank) {
  ev->corr = rank < 0 ? 0 : static_cast<uint64_t>(rank) + 1;
}
// device
CUCLIMB_ACCESSOR(DeviceTotalBytes, size, uint64_t)
CUCLIMB_ACCESSOR(DeviceComputeCapability, value, int64_t)  // major * 10 + minor
// alloc
CUCLIMB_ACCESSOR(AllocPool, aux, uint64_t)
// copy
CUCLIMB_ACCESSOR(CopyDestination, addr, uint64_t)
CUCLIMB_ACCESSOR(CopySource, aux, uint64_t)
// gauge and pool_attr
CUCLIMB_ACCESSOR(GaugeValue, value, int64_t)
CUCLIMB_ACCESSOR(GaugePool, handle, uint64_t)
// start / end: the NVTX range id; push / start / mark: the integer payload
CUCLIMB_ACCESSOR(RangeId, addr, uint64_t)
CUCLIMB_ACCESSOR(NvtxPayload, value, int64_t)
// region, region_free
CUCLIMB_ACCESSOR(RegionHeap, aux, uint64_t)
// overhead
CUCLIMB_ACCESSOR(OverheadSelfNs, value, int64_t)
CUCLIMB_ACCESSOR(OverheadEvents, size, uint64_t)
// drops
CUCLIMB_ACCESSOR(DropCount, value, int64_t)
CUCLIMB_ACCESSOR(DropReason, text, uint32_t)  // string id
// recording
CUCLIMB_ACCESSOR(RecordingOn, value, int64_t)  // 0 paused, 1 resumed
// trailer
CUCLIMB_ACCESSOR(TrailerEvents, size, uint64_t)  // events written before the trailer
CUCLIMB_ACCESSOR(TrailerDropped, value, int64_t)
CUCLIMB_ACCESSOR(TrailerStatus, text, uint32_t)  // string id

#undef CUCLIMB_ACCESSOR

}  // namespace cuclimb::format
