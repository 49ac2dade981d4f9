// SPDX-License-Identifier: Apache-2.0
// The fast path of decoding events from columns (v1.1 layout): one assembler per event type,
// generated at compile time from the schema. Any problem makes it return false; ChunkDecoder then
// says exactly what is wrong.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "address_history.h"
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

// Events are decoded a batch at a time: first every column's words for the batch's events are
// gathered from their planes (a tight loop per plane, which the compiler vectorizes), then each
// event is assembled from one word per field. Gathering word by word, event by event, cost twice
// as many instructions.
inline constexpr uint32_t kColumnBatch = 256;

// What the assemblers read: each column's words for the events of the batch (absent columns
// point at zeros), how many events of each type the batch has assembled, and the delta state.
// kColumnsV2 chunks add the address history and the escape columns, read word by word (an
// escape is rare) over the whole chunk.
struct ColumnBatch {
  const uint64_t* words[static_cast<size_t>(EventType::kCount)][kMaxColumnFields];
  uint32_t index[static_cast<size_t>(EventType::kCount)] = {};
  DecodeState delta;
  bool columns_v2 = false;  // a kColumnsV2 chunk: address history, times from previous ends
  AddressHistory history;
  ColumnPlanes escapes[static_cast<size_t>(EventType::kCount)];
  uint32_t escapes_used[static_cast<size_t>(EventType::kCount)] = {};
  uint32_t escape_count[static_cast<size_t>(EventType::kCount)] = {};
  // Why the last history-coded address could not be decoded (for the message).
  enum class HistoryError : uint8_t { kNone, kPastHistory, kNoEscape } history_error{};
};

namespace column_internal {

// The address of an alloc or free in a kColumnsV2 chunk, from its history word.
template <uint8_t kType>
bool AssembleHistoryAddress(Event* ev, ColumnBatch* b, uint64_t w) {
  constexpr auto type = static_cast<EventType>(kType);
  uint64_t addr = 0;
  if (w == 0) {
    uint32_t& used = b->escapes_used[kType];
    if (used >= b->escape_count[kType]) {
      b->history_error = ColumnBatch::HistoryError::kNoEscape;
      return false;
    }
    addr = b->history.FromEscape(GatherWord(b->escapes[kType], used++));
  } else if (!b->history.Take(FindList(type), w, &addr)) {
    b->history_error = ColumnBatch::HistoryError::kPastHistory;
    return false;
  }
  b->history.Push(PushList(type), addr);
  ev->addr = addr;
  return true;
}

template <uint8_t kType, size_t kField>
inline bool AssembleField(Event* ev, ColumnBatch* b, uint32_t k) {
  constexpr FieldSpec f = kEventSchema[kType].fields[kField];
  const uint64_t* words = b->words[kType][kField];
  DecodeState* st = &b->delta;
  if constexpr (f.coding == Coding::kDims) {
    uint32_t* d = DimsOf(ev, f.slot);
    for (uint32_t j = 0; j < 3; ++j) d[j] = static_cast<uint32_t>(words[3 * k + j]);
    return true;
  } else {
    const uint64_t w = words[k];
    if constexpr (f.coding == Coding::kTime) {
      st->prev_ts = WrappingAdd(b->columns_v2 ? st->prev_end : st->prev_ts, UnZigZag(w));
      ev->ts = st->prev_ts;
    } else if constexpr (f.coding == Coding::kUInt) {
      SetSlot(ev, f.slot, w);
    } else if constexpr (f.coding == Coding::kSInt) {
      SetSlot(ev, f.slot, static_cast<uint64_t>(UnZigZag(w)));
    } else if constexpr (f.coding == Coding::kDevice) {
      ev->device = DeviceFromWord(w);
    } else if constexpr (HistoryField(kType) == static_cast<int>(kField)) {
      if (b->columns_v2)
        return AssembleHistoryAddress<kType>(ev, b, w);
      uint64_t& prev = st->prev[static_cast<int>(f.slot)];
      prev += static_cast<uint64_t>(UnZigZag(w));
      SetSlot(ev, f.slot, prev);
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
bool AssembleFields(Event* ev, ColumnBatch* b, std::index_sequence<kFields...>) {
  static constexpr Event kBlank = MakeEvent(static_cast<EventType>(kType));
  std::memcpy(ev, &kBlank, sizeof(kBlank));
  const uint32_t k = b->index[kType]++;
  const bool ok = (AssembleField<kType, kFields>(ev, b, k) && ...);
  b->delta.prev_end = WrappingAdd(ev->ts, ev->dur);  // every type's ts is its field 0
  return ok;
}

template <uint8_t kType>
bool AssembleType(Event* ev, ColumnBatch* b) {
  return AssembleFields<kType>(ev, b, std::make_index_sequence<kEventSchema[kType].field_count>());
}

using AssembleFn = bool (*)(Event*, ColumnBatch*);

template <size_t... kTypes>
constexpr auto MakeAssemblers(std::index_sequence<kTypes...>) {
  return std::array<AssembleFn, sizeof...(kTypes) + 1>{nullptr, &AssembleType<kTypes + 1>...};
}

inline constexpr auto kAssemblers =
    MakeAssemblers(std::make_index_sequence<static_cast<size_t>(EventType::kCount) - 1>());

}  // namespace column_internal

// Assembles the batch's next event of a known type from its columns' words. False on a bad enum
// or an undefined id.
inline bool AssembleEvent(uint8_t type, Event* ev, ColumnBatch* b) {
  return column_internal::kAssemblers[type](ev, b);
}

}  // namespace cuclimb::format
