// SPDX-License-Identifier: Apache-2.0
// Generic access to an Event's slots, driven by the schema in trace_format.h.
#pragma once

#include <cstdint>

#include "trace_format.h"

namespace cuclimb::format {

// Reads a scalar slot as 64 bits (signed slots are sign-extended). kGrid/kBlock read x.
constexpr uint64_t GetSlot(const Event& ev, Slot slot) {
  switch (slot) {
    case Slot::kTs:
      return static_cast<uint64_t>(ev.ts);
    case Slot::kDur:
      return static_cast<uint64_t>(ev.dur);
    case Slot::kTid:
      return ev.tid;
    case Slot::kAddr:
      return ev.addr;
    case Slot::kSize:
      return ev.size;
    case Slot::kStream:
      return ev.stream;
    case Slot::kHandle:
      return ev.handle;
    case Slot::kCorr:
      return ev.corr;
    case Slot::kAux:
      return ev.aux;
    case Slot::kValue:
      return static_cast<uint64_t>(ev.value);
    case Slot::kName:
      return ev.name;
    case Slot::kApi:
      return ev.api;
    case Slot::kDomain:
      return ev.domain;
    case Slot::kText:
      return ev.text;
    case Slot::kStack:
      return ev.stack;
    case Slot::kDevice:
      return static_cast<uint64_t>(static_cast<int64_t>(ev.device));
    case Slot::kKind:
      return ev.kind;
    case Slot::kGrid:
      return ev.grid[0];
    case Slot::kBlock:
      return ev.block[0];
  }
  return 0;
}

// Writes a scalar slot, truncating to the slot's width. kGrid/kBlock write x.
constexpr void SetSlot(Event* ev, Slot slot, uint64_t v) {
  switch (slot) {
    case Slot::kTs:
      ev->ts = static_cast<int64_t>(v);
      break;
    case Slot::kDur:
      ev->dur = static_cast<int64_t>(v);
      break;
    case Slot::kTid:
      ev->tid = static_cast<uint32_t>(v);
      break;
    case Slot::kAddr:
      ev->addr = v;
      break;
    case Slot::kSize:
      ev->size = v;
      break;
    case Slot::kStream:
      ev->stream = v;
      break;
    case Slot::kHandle:
      ev->handle = v;
      break;
    case Slot::kCorr:
      ev->corr = v;
      break;
    case Slot::kAux:
      ev->aux = v;
      break;
    case Slot::kValue:
      ev->value = static_cast<int64_t>(v);
      break;
    case Slot::kName:
      ev->name = static_cast<uint32_t>(v);
      break;
    case Slot::kApi:
      ev->api = static_cast<uint32_t>(v);
      break;
    case Slot::kDomain:
      ev->domain = static_cast<uint32_t>(v);
      break;
    case Slot::kText:
      ev->text = static_cast<uint32_t>(v);
      break;
    case Slot::kStack:
      ev->stack = static_cast<uint32_t>(v);
      break;
    case Slot::kDevice:
      ev->device = static_cast<int32_t>(static_cast<int64_t>(v));
      break;
    case Slot::kKind:
      ev->kind = static_cast<uint8_t>(v);
      break;
    case Slot::kGrid:
      ev->grid[0] = static_cast<uint32_t>(v);
      break;
    case Slot::kBlock:
      ev->block[0] = static_cast<uint32_t>(v);
      break;
  }
}

constexpr const uint32_t* DimsOf(const Event& ev, Slot slot) {
  return slot == Slot::kGrid ? ev.grid : ev.block;
}
constexpr uint32_t* DimsOf(Event* ev, Slot slot) {
  return slot == Slot::kGrid ? ev->grid : ev->block;
}

// Number of slots that carry delta state for kHex/kDelta codings: every slot up to kValue.
inline constexpr int kDeltaSlots = static_cast<int>(Slot::kValue) + 1;

// True when the field holds its "absent" value (JSON writers omit such optional fields).
constexpr bool IsAbsent(const Event& ev, const FieldSpec& f) {
  if (f.coding == Coding::kDims) {
    const uint32_t* d = DimsOf(ev, f.slot);
    return d[0] == 0 && d[1] == 0 && d[2] == 0;
  }
  if (f.coding == Coding::kDevice)
    return ev.device == kNoDevice;
  return GetSlot(ev, f.slot) == 0;
}

}  // namespace cuclimb::format
