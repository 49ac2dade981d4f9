// SPDX-License-Identifier: Apache-2.0
// The column chunk layouts, v1.1 (ChunkType::kColumns) and v1.2 (ChunkType::kColumnsV2): what the
// encoder writes and the decoder reads, defined once.
//
// Why columns: a record layout interleaves fields of every kind, so the compressor sees a mix of
// timestamps, ids and handles and models none of them well. Here every field of every event type
// is a column, and every byte position of a column's values is its own stream ("plane"): the low
// bytes of nanosecond durations (near-uniform), their high bytes (a few values) and the handle
// columns (mostly one value) each get their own statistics. On H200 recordings this takes
// launch-heavy traces from 5.9 to about 4.2 bytes per event, most of which is the nanosecond
// jitter of host timestamps and durations (docs/performance.md).
//
// Payload of a kColumns chunk (the ChunkHeader's codec is kRaw: blocks carry their own codec):
//   varint event_count
//   varint definition_count           string and stack definitions made by this chunk
//   varint stream_count
//   stream_count × (varint key, varint bytes)      the streams, in the order they are packed
//   varint block_count
//   block_count × (u8 codec, varint stored_bytes, varint raw_bytes)
//   the blocks' stored bytes, in order
// The blocks decompress to one byte string (ChunkHeader::raw_bytes long in all); the streams are
// consecutive slices of it, in directory order. Stream keys:
//   kDefinitionsKey  records as in the v1.0 layout, only kDefString and kDefStack; they all apply
//                    before the chunk's first event
//   kTypesKey        one byte per event: its EventType
//   ColumnKey(type, field, plane)   byte `plane` (0 = least significant) of the column words of
//                    field `field` (index in the type's schema) of every event of `type`, in
//                    event order; a kDims field has three words per event (x, y, z)
//   EscapeKey(type, field, plane)   kColumnsV2 only: byte `plane` of the escape words of a field
//                    coded by the address history (address_history.h), one word per event whose
//                    address was not in the history, in event order
// A missing plane is all zeros, so a column whose words are all zero (an optional field never
// set) costs nothing. Unknown keys (a newer minor's fields) are skipped.
//
// kColumnsV2 differs from kColumns in two codings: times count from the previous event's end
// (below), and the `addr` columns of alloc and free hold indexes into the address history (0:
// the next escape word holds the address).
#pragma once

#include <cstdint>

#include "trace_format.h"
#include "varint.h"

namespace cuclimb::format {

inline constexpr uint32_t kDefinitionsKey = 0;
inline constexpr uint32_t kTypesKey = 1;
inline constexpr uint32_t kMaxColumnFields = 32;  // fields per event type the layout can name
inline constexpr uint32_t kMaxPlanes = 8;         // bytes of a 64-bit word

constexpr uint32_t ColumnKey(uint32_t type, uint32_t field, uint32_t plane) {
  return 2 + (type * kMaxColumnFields + field) * kMaxPlanes + plane;
}
// The largest key a column of a known type can have.
inline constexpr uint32_t kMaxColumnKey =
    ColumnKey(static_cast<uint32_t>(EventType::kCount) - 1, kMaxColumnFields - 1, kMaxPlanes - 1);
// Escape columns (kColumnsV2) follow the columns' keys.
constexpr uint32_t EscapeKey(uint32_t type, uint32_t field, uint32_t plane) {
  return ColumnKey(type, field, plane) + (kMaxColumnKey - 1);
}
inline constexpr uint32_t kMaxEscapeKey =
    EscapeKey(static_cast<uint32_t>(EventType::kCount) - 1, kMaxColumnFields - 1, kMaxPlanes - 1);
// The (type, field, plane) of a column or escape key.
struct ColumnId {
  uint32_t type, field, plane;
  bool escape;
};
constexpr ColumnId ParseColumnKey(uint32_t key) {
  const bool escape = key > kMaxColumnKey;
  const uint32_t k = escape ? key - (kMaxColumnKey - 1) - 2 : key - 2;
  return {k / kMaxPlanes / kMaxColumnFields, k / kMaxPlanes % kMaxColumnFields, k % kMaxPlanes,
          escape};
}

// Streams smaller than this share one compressed block; larger ones get a block each, or join
// the block of the stream before them where that compresses smaller (ChunkEncoder): an entropy
// table per byte plane, shared by neighbouring planes of one distribution.
inline constexpr uint32_t kOwnBlockBytes = 1024;

// Column words. Every coding maps its "absent" value to 0, so unset optional fields cost nothing:
//   kTime            zigzag(ts − previous event's ts in the chunk); kColumnsV2: zigzag(ts −
//                    (previous event's ts + its dur)), dur being 0 for types without one
//   kHex, kDelta     zigzag(value − previous value of the same slot in the chunk, any type)
//   kUInt, kString, kStack, kEnum   the value
//   kSInt            zigzag(value)
//   kDevice          zigzag(value − kNoDevice)
//   kDims            x, y and z, one word each
constexpr uint64_t DeviceWord(int32_t device) {
  return ZigZag(static_cast<int64_t>(device) - kNoDevice);
}
constexpr int32_t DeviceFromWord(uint64_t word) {
  return static_cast<int32_t>(WrappingAdd(UnZigZag(word), kNoDevice));
}

// Decoders find an event's time first and its duration next: every type's field 0 is `ts`.
constexpr bool EveryTypeStartsWithTs() {
  for (uint32_t t = 1; t < static_cast<uint32_t>(EventType::kCount); ++t) {
    if (kEventSchema[t].fields[0].coding != Coding::kTime)
      return false;
  }
  return true;
}
static_assert(EveryTypeStartsWithTs());

// Number of bytes a word needs (0 for 0).
constexpr uint32_t WordBytes(uint64_t word) {
  return word == 0 ? 0 : (64 - static_cast<uint32_t>(__builtin_clzll(word)) + 7) / 8;
}

}  // namespace cuclimb::format
