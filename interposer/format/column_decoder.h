// SPDX-License-Identifier: Apache-2.0
// The fast path of decoding events from columns (v1.1 and v1.2 layouts, column_layout.h): a batch
// of events at a time, column by column. Any problem stops the batch at the event that has it;
// ChunkDecoder then says exactly what is wrong (ColumnDecoder::Failure).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "address_history.h"
#include "column_layout.h"
#include "row_decoder.h"
#include "trace_format.h"

namespace cuclimb::format {

// The planes of one column that are present (absent planes are zero).
struct ColumnPlanes {
  const uint8_t* plane[kMaxPlanes];
  uint8_t shift[kMaxPlanes];
  uint8_t count = 0;
};

// Adds the events of each known type among types[0..n) to counts (kCount entries).
void CountTypes(const uint8_t* types, size_t n, uint32_t* counts);

inline uint64_t GatherWord(const ColumnPlanes& c, size_t i) {
  uint64_t w = 0;
  for (uint8_t k = 0; k < c.count; ++k) w |= static_cast<uint64_t>(c.plane[k][i]) << c.shift[k];
  return w;
}

// Events are decoded a window at a time: first each present column's words for the window's events
// are widened from their planes and, for the zigzag codings, decoded (tight loops the compiler
// vectorizes, AVX-512 or AVX2 where the CPU has it), then each event is assembled in order from one
// word per field by its type's assembler, generated from the schema. Columns that are absent (a
// field never set in the chunk) are not read: the blank event already holds what their zero words
// decode to. Event by event, field by field from the planes cost twice the instructions.
// The window whose words are widened at once: per column, the loops' start-up costs are spread
// over its events; its words (about 100 KiB) stay in the L2 cache.
inline constexpr uint32_t kColumnWindow = 1024;

class ColumnDecoder {
 public:
  static constexpr size_t kTypes = static_cast<size_t>(EventType::kCount);

  // Why decoding stopped early: at the chunk's event `index`.
  struct Failure {
    enum class Kind : uint8_t {
      kNone,
      kTrailer,      // a trailer event outside the trailer chunk
      kValue,        // field `field` holds `word`: an undefined id or an unknown enum value
      kPastHistory,  // the history word `word` of field `field` is past the history's end
      kNoEscape,     // the address needs an escape word the escape column does not have
      kOther,        // none of these, yet the event did not decode
    } kind = Kind::kNone;
    uint32_t index = 0;     // in the chunk, skipped events included
    uint8_t type = 0;       // of the event
    uint32_t position = 0;  // among the chunk's events of its type
    uint8_t field = 0;
    uint64_t word = 0;
  };

  // Starts a chunk: no planes, fresh delta state and history.
  void Start(bool columns_v2, const uint32_t escape_counts[kTypes]);
  // Once the planes are in place: the chunk's `events` types, and the ids defined (below
  // `strings` and `stacks`: the chunk's definitions apply before its events). With `track_ids`,
  // the largest string and stack ids of the windows widened so far are kept (max_string_id(),
  // max_stack_id()): a decoder that checks ids against the format's caps only (its chunk's
  // definitions not applied yet) learns what the tables must hold for the events it decoded.
  void Begin(const uint8_t* types, uint32_t events, uint64_t strings, uint64_t stacks,
             bool track_ids = false);
  uint64_t strings() const { return delta_.strings; }
  uint64_t stacks() const { return delta_.stacks; }
  // The largest ids the columns hold over every window opened since Begin(track_ids = true),
  // absent columns counting as id 0; a superset of the events decoded so far. 0 otherwise.
  uint64_t max_string_id() const { return max_string_id_; }
  uint64_t max_stack_id() const { return max_stack_id_; }
  // Where Start()'s caller puts the chunk's column and escape planes.
  ColumnPlanes& planes(uint32_t type, uint32_t field) { return planes_[type][field]; }
  ColumnPlanes& escapes(uint32_t type) { return escapes_[type]; }

  // Decodes up to max of the chunk's next events into out. Events of unknown types (a newer
  // minor's) are skipped and counted in *skipped. Returns the events written; on a problem they
  // are those before it, and *failure says where and what (else its kind is kNone).
  uint32_t Decode(Event* out, uint32_t max, uint32_t* skipped, Failure* failure);
  // The index of the next event to decode; events() when all are.
  uint32_t next() const { return next_; }
  uint32_t events() const { return events_; }

  // kColumnsV2, at the end of a chunk: the type whose escape words were not all used, or 0.
  uint8_t UnusedEscapes() const;

  uint32_t escapes_used(uint8_t type) const { return escapes_used_[type]; }
  uint32_t escape_count(uint8_t type) const { return escape_count_[type]; }
  const AddressHistory& history() const { return history_; }

 private:
  template <uint8_t kType, bool kColumnsV2>
  friend struct ColumnAssembler;
  friend struct ColumnLoop;

  // Counts the types of the next window's events and widens the words of their present columns.
  void OpenWindow();
  // The address of an alloc or free in a kColumnsV2 chunk, from its history word; false (and
  // history_error_ set) on damage.
  bool HistoryAddress(uint8_t type, uint64_t w, Event* ev);
  // The next escaped address of `type` (word 0); false (history_error_ set) when there is none.
  [[gnu::noinline]] bool EscapedAddress(uint8_t type, uint64_t* addr);
  // Names the first field of the failed event with a bad value (an undefined id or an unknown
  // enum value), in field order, as the assembler met them.
  void Explain(Failure* failure) const;

  ColumnPlanes planes_[kTypes][kMaxColumnFields];
  ColumnPlanes escapes_[kTypes];
  uint32_t present_[kTypes] = {};   // bit f: field f's column has planes in this chunk
  uint32_t position_[kTypes] = {};  // events of each type before the window
  DecodeState delta_;
  bool columns_v2_ = false;
  AddressHistory history_;
  uint32_t escapes_used_[kTypes] = {};
  uint32_t escape_count_[kTypes] = {};
  const uint8_t* types_ = nullptr;  // the chunk's events' types
  uint32_t events_ = 0;
  uint32_t next_ = 0;  // the next event to decode
  // The window [window_begin_, window_end_): each column's words (absent columns read zeros),
  // the events of each type it has, and those assembled so far.
  uint32_t window_end_ = 0;
  uint32_t window_count_[kTypes] = {};
  const uint64_t* words_[kTypes][kMaxColumnFields];
  uint32_t index_[kTypes] = {};
  bool track_ids_ = false;
  uint64_t max_string_id_ = 0;
  uint64_t max_stack_id_ = 0;
  Failure::Kind history_error_ = Failure::Kind::kNone;
  std::vector<uint64_t> buffer_;  // the words
  std::vector<uint64_t> zeros_;
};

}  // namespace cuclimb::format
