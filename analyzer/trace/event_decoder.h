// SPDX-License-Identifier: Apache-2.0
// The fast path of binary event decoding: one function per event type, generated at compile time
// from the schema, so no field costs a runtime switch. Any problem makes it return false; the
// reader then decodes the record again slowly to say exactly what is wrong.
#pragma once

#include <cstdint>
#include <array>
#include <cstring>
#include <utility>

#include "interposer/format/event_fields.h"
#include "interposer/format/trace_format.h"
#include "interposer/format/varint.h"

namespace cuclimb::trace {

struct DecodeState {
  int64_t prev_ts = 0;
  uint64_t prev[16] = {};    // per Slot, for kHex / kDelta
  uint64_t strings = 1;      // ids below this are defined
  uint64_t stacks = 1;
};

namespace internal {

using format::Coding;

template <uint8_t kType, size_t kField>
inline bool DecodeField(const uint8_t*& p, const uint8_t* end, format::Event* ev,
                        DecodeState* st) {
  constexpr format::FieldSpec f = format::kEventSchema[kType].fields[kField];
  if constexpr (f.coding == Coding::kEnum) {
    if (p >= end) return false;
    constexpr auto names = format::NamesOf(static_cast<format::EnumKind>(format::kEventSchema[kType].enum_kind));
    if (*p >= names.count) return false;
    format::SetSlot(ev, f.slot, *p++);
    return true;
  } else {
    uint64_t v;
    p = format::GetVarint(p, end, &v);
    if (p == nullptr) return false;
    if constexpr (f.coding == Coding::kTime) {
      // Modulo 2^64, as the encoder took the delta (no signed overflow on any input).
      st->prev_ts = static_cast<int64_t>(static_cast<uint64_t>(st->prev_ts) +
                                         static_cast<uint64_t>(format::UnZigZag(v)));
      ev->ts = st->prev_ts;
    } else if constexpr (f.coding == Coding::kUInt) {
      format::SetSlot(ev, f.slot, v);
    } else if constexpr (f.coding == Coding::kSInt || f.coding == Coding::kDevice) {
      format::SetSlot(ev, f.slot, static_cast<uint64_t>(format::UnZigZag(v)));
    } else if constexpr (f.coding == Coding::kHex || f.coding == Coding::kDelta) {
      uint64_t& prev = st->prev[static_cast<int>(f.slot)];
      prev += static_cast<uint64_t>(format::UnZigZag(v));
      format::SetSlot(ev, f.slot, prev);
    } else if constexpr (f.coding == Coding::kString) {
      if (v >= st->strings) return false;
      format::SetSlot(ev, f.slot, v);
    } else if constexpr (f.coding == Coding::kStack) {
      if (v >= st->stacks) return false;
      format::SetSlot(ev, f.slot, v);
    } else if constexpr (f.coding == Coding::kDims) {
      uint32_t* d = format::DimsOf(ev, f.slot);
      d[0] = static_cast<uint32_t>(v);
      for (int k = 1; k < 3; ++k) {
        p = format::GetVarint(p, end, &v);
        if (p == nullptr) return false;
        d[k] = static_cast<uint32_t>(v);
      }
    }
    return true;
  }
}

template <uint8_t kType, size_t... kFields>
bool DecodeFields(const uint8_t* p, const uint8_t* end, format::Event* ev, DecodeState* st,
                  std::index_sequence<kFields...>) {
  // Copy a constant blank rather than zero-filling: GCC zero-fills 128 bytes with `rep stos`,
  // whose start-up cost was 40% of decoding a launch event.
  static constexpr format::Event kBlank = format::MakeEvent(static_cast<format::EventType>(kType));
  std::memcpy(ev, &kBlank, sizeof(kBlank));
  return (DecodeField<kType, kFields>(p, end, ev, st) && ...);
}

template <uint8_t kType>
bool DecodeType(const uint8_t* p, const uint8_t* end, format::Event* ev, DecodeState* st) {
  return DecodeFields<kType>(p, end, ev, st,
                             std::make_index_sequence<format::kEventSchema[kType].field_count>());
}

using DecodeFn = bool (*)(const uint8_t*, const uint8_t*, format::Event*, DecodeState*);

template <size_t... kTypes>
constexpr auto MakeDecoders(std::index_sequence<kTypes...>) {
  // Entry 0 is never called: IsEventType() excludes it.
  return std::array<DecodeFn, sizeof...(kTypes) + 1>{nullptr, &DecodeType<kTypes + 1>...};
}

inline constexpr auto kDecoders = MakeDecoders(
    std::make_index_sequence<static_cast<size_t>(format::EventType::kCount) - 1>());

}  // namespace internal

// Decodes an event body of a known type. False on truncation, a bad enum or an undefined id.
inline bool FastDecodeEvent(uint8_t type, const uint8_t* p, const uint8_t* end, format::Event* ev,
                            DecodeState* st) {
  return internal::kDecoders[type](p, end, ev, st);
}

}  // namespace cuclimb::trace
