// SPDX-License-Identifier: Apache-2.0
// The fast path of decoding an event from columns (v1.1 layout): one function per event type,
// generated at compile time from the schema, gathering each field's word from its byte planes.
// Any problem makes it return false; ChunkDecoder then says exactly what is wrong.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "column_layout.h"
#include "event_fields.h"
#include "row_decoder.h"
#include "trace_format.h"

namespace cuclimb::format {

// The planes of one column that are present (absent planes are zero).
struct ColumnPlanes {
  const uint8_t* plane[kMaxPlanes];
  uint8_t shift[kMaxPlanes];
  uint8_t count = 0;
};

inline uint64_t GatherWord(const ColumnPlanes& c, size_t i) {
  uint64_t w = 0;
  for (uint8_t k = 0; k < c.count; ++k) w |= static_cast<uint64_t>(c.plane[k][i]) << c.shift[k];
  return w;
}

// Everything the column decoders read: the planes by (type, field), how many events of each type
// were decoded, and the delta state.
struct ColumnState {
  ColumnPlanes columns[static_cast<size_t>(EventType::kCount)][kMaxColumnFields];
  uint32_t position[static_cast<size_t>(EventType::kCount)] = {};
  DecodeState delta;
};

namespace column_internal {

template <uint8_t kType, size_t kField>
inline bool GatherField(Event* ev, ColumnState* cs, uint32_t n) {
  constexpr FieldSpec f = kEventSchema[kType].fields[kField];
  const ColumnPlanes& c = cs->columns[kType][kField];
  DecodeState* st = &cs->delta;
  if constexpr (f.coding == Coding::kDims) {
    uint32_t* d = DimsOf(ev, f.slot);
    for (uint32_t k = 0; k < 3; ++k) d[k] = static_cast<uint32_t>(GatherWord(c, 3 * size_t{n} + k));
    return true;
  } else {
    const uint64_t w = GatherWord(c, n);
    if constexpr (f.coding == Coding::kTime) {
      st->prev_ts = WrappingAdd(st->prev_ts, UnZigZag(w));
      ev->ts = st->prev_ts;
    } else if constexpr (f.coding == Coding::kUInt) {
      SetSlot(ev, f.slot, w);
    } else if constexpr (f.coding == Coding::kSInt) {
      SetSlot(ev, f.slot, static_cast<uint64_t>(UnZigZag(w)));
    } else if constexpr (f.coding == Coding::kDevice) {
      ev->device = DeviceFromWord(w);
    } else if constexpr (f.coding == Coding::kHex || f.coding == Coding::kDelta) {
      uint64_t& prev = st->prev[static_cast<int>(f.slot)];
      prev += static_cast<uint64_t>(UnZigZag(w));
      SetSlot(ev, f.slot, prev);
    } else if constexpr (f.coding == Coding::kString) {
      if (w >= st->strings)
        return false;
      SetSlot(ev, f.slot, w);
    } else if constexpr (f.coding == Coding::kStack) {
      if (w >= st->stacks)
        return false;
      SetSlot(ev, f.slot, w);
    } else if constexpr (f.coding == Coding::kEnum) {
      constexpr auto names = NamesOf(static_cast<EnumKind>(kEventSchema[kType].enum_kind));
      if (w >= names.count)
        return false;
      SetSlot(ev, f.slot, w);
    }
    return true;
  }
}

template <uint8_t kType, size_t... kFields>
bool GatherFields(Event* ev, ColumnState* cs, std::index_sequence<kFields...>) {
  static constexpr Event kBlank = MakeEvent(static_cast<EventType>(kType));
  std::memcpy(ev, &kBlank, sizeof(kBlank));
  const uint32_t n = cs->position[kType]++;
  return (GatherField<kType, kFields>(ev, cs, n) && ...);
}

template <uint8_t kType>
bool GatherType(Event* ev, ColumnState* cs) {
  return GatherFields<kType>(ev, cs, std::make_index_sequence<kEventSchema[kType].field_count>());
}

using GatherFn = bool (*)(Event*, ColumnState*);

template <size_t... kTypes>
constexpr auto MakeGatherers(std::index_sequence<kTypes...>) {
  return std::array<GatherFn, sizeof...(kTypes) + 1>{nullptr, &GatherType<kTypes + 1>...};
}

inline constexpr auto kGatherers =
    MakeGatherers(std::make_index_sequence<static_cast<size_t>(EventType::kCount) - 1>());

}  // namespace column_internal

// Decodes the next event of a known type from its columns. False on a bad enum or an undefined
// id; the type's position then has advanced past the event.
inline bool FastDecodeColumns(uint8_t type, Event* ev, ColumnState* cs) {
  return column_internal::kGatherers[type](ev, cs);
}

}  // namespace cuclimb::format
