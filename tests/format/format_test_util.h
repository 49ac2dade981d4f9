// SPDX-License-Identifier: Apache-2.0
// Helpers of the format library's tests: definition tables, random events of every type, decoding
// a run of chunks, and hand-made column chunks.
#pragma once

#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "interposer/format/chunk_decoder.h"
#include "interposer/format/column_layout.h"
#include "interposer/format/crc32c.h"
#include "interposer/format/event_fields.h"
#include "interposer/format/trace_encoder.h"
#include "interposer/format/varint.h"

namespace cuclimb::format::test_util {

class Tables : public DefinitionTables, public SourceTables {
 public:
  Tables() : strings_(1), stacks_(1) {}
  uint32_t string_count() const override { return static_cast<uint32_t>(strings_.size()); }
  uint32_t stack_count() const override { return static_cast<uint32_t>(stacks_.size()); }
  uint64_t string_bytes() const override { return string_bytes_; }
  uint64_t stack_frames() const override { return stack_frames_; }
  void AddString(std::string_view bytes) override {
    strings_.emplace_back(bytes);
    string_bytes_ += bytes.size();
  }
  void AddStack(const uint64_t* frames, size_t count) override {
    stacks_.emplace_back(frames, frames + count);
    stack_frames_ += count;
  }
  std::string_view String(uint32_t id) const override { return strings_.at(id); }
  void Stack(uint32_t id, std::vector<uint64_t>* frames) const override {
    *frames = stacks_.at(id);
  }

  std::vector<std::string> strings_;
  std::vector<std::vector<uint64_t>> stacks_;
  uint64_t string_bytes_ = 0;  // tests may preset these to sit near a cap
  uint64_t stack_frames_ = 0;
};

// Random events of every type, every slot its schema uses set to a random (sometimes extreme,
// sometimes absent) value; string ids below `strings`, stack ids below `stacks`.
inline std::vector<Event> RandomEvents(uint32_t seed, size_t n, uint32_t strings, uint32_t stacks) {
  std::mt19937_64 rng(seed);
  auto value = [&]() -> uint64_t {
    switch (rng() % 5) {
      case 0:
        return 0;
      case 1:
        return rng() % 100;
      case 2:
        return rng();
      case 3:
        return ~uint64_t{0} - rng() % 3;
      default:
        return rng() % 100000;
    }
  };
  std::vector<Event> out;
  int64_t ts = 1000;
  for (size_t i = 0; i < n; ++i) {
    const auto type =
        static_cast<EventType>(1 + rng() % (static_cast<int>(EventType::kTrailer) - 1));
    Event ev = MakeEvent(type);
    const EventSpec& spec = SpecOf(type);
    for (uint8_t k = 0; k < spec.field_count; ++k) {
      const FieldSpec& f = spec.fields[k];
      switch (f.coding) {
        case Coding::kTime:
          ts += static_cast<int64_t>(rng() % 5000) - 1000;  // sometimes backwards, like GPU records
          ev.ts = ts;
          break;
        case Coding::kString:
          SetSlot(&ev, f.slot, rng() % strings);
          break;
        case Coding::kStack:
          SetSlot(&ev, f.slot, rng() % stacks);
          break;
        case Coding::kEnum:
          SetSlot(&ev, f.slot, rng() % NamesOf(static_cast<EnumKind>(spec.enum_kind)).count);
          break;
        case Coding::kDevice:
          ev.device = static_cast<int32_t>(rng() % 3) - 1;
          break;
        case Coding::kDims:
          for (int d = 0; d < 3; ++d) DimsOf(&ev, f.slot)[d] = static_cast<uint32_t>(value());
          break;
        default:
          SetSlot(&ev, f.slot, value());
          break;
      }
    }
    out.push_back(ev);
  }
  return out;
}

// Decodes every chunk of `bytes` (a sequence of chunks, no file header).
inline std::vector<Event> DecodeAll(const std::string& bytes, Tables* tables, std::string* error,
                                    bool sequenced = true) {
  std::vector<Event> out;
  Unpacker unpacker;
  ChunkDecoder decoder;
  UnpackedChunk chunk;
  size_t pos = 0;
  for (uint64_t index = 0; pos + sizeof(ChunkHeader) <= bytes.size(); ++index) {
    std::memcpy(&chunk.header, bytes.data() + pos, sizeof(ChunkHeader));
    chunk.stored.assign(bytes, pos + sizeof(ChunkHeader), chunk.header.stored_bytes);
    chunk.place = {index, pos};
    chunk.sequenced = sequenced;
    pos += sizeof(ChunkHeader) + chunk.header.stored_bytes;
    if (!unpacker.Unpack(&chunk)) {
      *error = chunk.error;
      return out;
    }
    if (!decoder.Start(&chunk, tables)) {
      *error = decoder.error();
      return out;
    }
    Event batch[7];
    while (size_t n = decoder.Decode(batch, 7, tables)) out.insert(out.end(), batch, batch + n);
    if (decoder.failed()) {
      *error = decoder.error();
      return out;
    }
  }
  return out;
}

inline bool Same(const std::vector<Event>& a, const std::vector<Event>& b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(Event)) != 0)
      return false;
  }
  return true;
}

// Hand-made column chunks: a payload from (key, bytes) streams in one raw block.
inline std::string ColumnChunk(uint32_t events,
                               const std::vector<std::pair<uint32_t, std::string>>& streams,
                               ChunkType type = ChunkType::kColumns) {
  auto varint = [](std::string* s, uint64_t v) {
    uint8_t buf[kMaxVarintBytes];
    s->append(reinterpret_cast<char*>(buf), static_cast<size_t>(PutVarint(buf, v) - buf));
  };
  std::string payload, data;
  varint(&payload, events);
  varint(&payload, 0);
  varint(&payload, streams.size());
  for (const auto& [key, bytes] : streams) {
    varint(&payload, key);
    varint(&payload, bytes.size());
    data += bytes;
  }
  varint(&payload, 1);
  payload.push_back(static_cast<char>(Codec::kRaw));
  varint(&payload, data.size());
  varint(&payload, data.size());
  payload += data;
  ChunkHeader h{};
  h.magic = kChunkMagic;
  h.type = static_cast<uint8_t>(type);
  h.stored_bytes = static_cast<uint32_t>(payload.size());
  h.raw_bytes = static_cast<uint32_t>(data.size());
  h.record_count = events;
  h.crc = Crc32c(Crc32c(0, &h, offsetof(ChunkHeader, crc)), payload.data(), payload.size());
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h)) + payload;
}

}  // namespace cuclimb::format::test_util
