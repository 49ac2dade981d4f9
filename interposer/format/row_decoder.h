// SPDX-License-Identifier: Apache-2.0
// The fast path of decoding an event record (v1.0 row layout): one function per event type,
// generated at compile time from the schema, so no field costs a runtime switch. Any problem
// makes it return false; ChunkDecoder then decodes the record again slowly to say exactly what is
// wrong.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "event_fields.h"
#include "trace_format.h"
#include "varint.h"

namespace cuclimb::format {

// Delta state and the ids defined so far, while a chunk is decoded.
struct DecodeState {
  int64_t prev_ts = 0;
  int64_t prev_end = 0;    // column chunks: previous event's ts + dur (what 1.2 times count from)
  uint64_t prev[16] = {};  // per Slot, for kHex / kDelta
  uint64_t strings = 1;    // ids below this are defined
  uint64_t stacks = 1;
};

namespace row_internal {

template <uint8_t kType, size_t kField>
inline bool DecodeField(const uint8_t*& p, const uint8_t* end, Event* ev, DecodeState* st) {
  constexpr FieldSpec f = kEventSchema[kType].fields[kField];
  if constexpr (f.coding == Coding::kEnum) {
    if (p >= end)
      return false;
    constexpr auto names = NamesOf(static_cast<EnumKind>(kEventSchema[kType].enum_kind));
    if (*p >= names.count)
      return false;
    SetSlot(ev, f.slot, *p++);
    return true;
  } else {
    uint64_t v;
    p = GetVarint(p, end, &v);
    if (p == nullptr)
      return false;
    if constexpr (f.coding == Coding::kTime) {
      st->prev_ts = WrappingAdd(st->prev_ts, UnZigZag(v));
      ev->ts = st->prev_ts;
    } else if constexpr (f.coding == Coding::kUInt) {
      SetSlot(ev, f.slot, v);
    } else if constexpr (f.coding == Coding::kSInt || f.coding == Coding::kDevice) {
      SetSlot(ev, f.slot, static_cast<uint64_t>(UnZigZag(v)));
    } else if constexpr (f.coding == Coding::kHex || f.coding == Coding::kDelta) {
      uint64_t& prev = st->prev[static_cast<int>(f.slot)];
      prev += static_cast<uint64_t>(UnZigZag(v));
      SetSlot(ev, f.slot, prev);
    } else if constexpr (f.coding == Coding::kString) {
      if (v >= st->strings)
        return false;
      SetSlot(ev, f.slot, v);
    } else if constexpr (f.coding == Coding::kStack) {
      if (v >= st->stacks)
        return false;
      SetSlot(ev, f.slot, v);
    } else if constexpr (f.coding == Coding::kDims) {
      uint32_t* d = DimsOf(ev, f.slot);
      d[0] = static_cast<uint32_t>(v);
      for (int k = 1; k < 3; ++k) {
        p = GetVarint(p, end, &v);
        if (p == nullptr)
          return false;
        d[k] = static_cast<uint32_t>(v);
      }
    }
    return true;
  }
}

template <uint8_t kType, size_t... kFields>
bool DecodeFields(const uint8_t* p, const uint8_t* end, Event* ev, DecodeState* st,
                  std::index_sequence<kFields...>) {
  // Copy a constant blank rather than zero-filling: GCC zero-fills 128 bytes with `rep stos`,
  // whose start-up cost was 40% of decoding a launch event.
  static constexpr Event kBlank = MakeEvent(static_cast<EventType>(kType));
  std::memcpy(ev, &kBlank, sizeof(kBlank));
  return (DecodeField<kType, kFields>(p, end, ev, st) && ...);
}

template <uint8_t kType>
bool DecodeType(const uint8_t* p, const uint8_t* end, Event* ev, DecodeState* st) {
  return DecodeFields<kType>(p, end, ev, st,
                             std::make_index_sequence<kEventSchema[kType].field_count>());
}

using DecodeFn = bool (*)(const uint8_t*, const uint8_t*, Event*, DecodeState*);

template <size_t... kTypes>
constexpr auto MakeDecoders(std::index_sequence<kTypes...>) {
  // Entry 0 is never called: IsEventType() excludes it.
  return std::array<DecodeFn, sizeof...(kTypes) + 1>{nullptr, &DecodeType<kTypes + 1>...};
}

inline constexpr auto kDecoders =
    MakeDecoders(std::make_index_sequence<static_cast<size_t>(EventType::kCount) - 1>());

}  // namespace row_internal

// Decodes an event body of a known type. False on truncation, a bad enum or an undefined id.
inline bool FastDecodeRow(uint8_t type, const uint8_t* p, const uint8_t* end, Event* ev,
                          DecodeState* st) {
  return row_internal::kDecoders[type](p, end, ev, st);
}

}  // namespace cuclimb::format
