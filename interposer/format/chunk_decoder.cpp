// SPDX-License-Identifier: Apache-2.0
// Chunk decoding: checks, checksum, zstd, definitions, rows and columns, and what went wrong.
#include "chunk_decoder.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <zstd.h>

#include "address_history.h"
#include "crc32c.h"
#include "event_fields.h"
#include "varint.h"

namespace cuclimb::format {
namespace {

__attribute__((format(printf, 1, 2))) std::string Format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, args);
  va_end(args);
  return buf;
}

using ull = unsigned long long;

std::string Place(const ChunkPlace& place) {
  return Format("chunk %llu at byte offset 0x%llx", static_cast<ull>(place.index),
                static_cast<ull>(place.offset));
}

bool Fail(UnpackedChunk* chunk, const std::string& what) {
  chunk->error = Place(chunk->place) + ": " + what;
  return false;
}

// Reads a varint for the column chunk's head; false past the end.
bool Head(const uint8_t** p, const uint8_t* end, uint64_t* v) {
  *p = GetVarint(*p, end, v);
  return *p != nullptr;
}

// "launch.kernel", for messages about a column.
std::string ColumnName(uint8_t type, uint32_t field) {
  const EventSpec& spec = kEventSchema[type];
  return std::string(spec.json) + "." + spec.fields[field].json;
}

}  // namespace

std::string CheckChunkHeader(const ChunkHeader& h) {
  if (h.magic != kChunkMagic) {
    return Format("bad chunk magic 0x%08x (expected 0x%08x)", h.magic, kChunkMagic);
  }
  if (h.stored_bytes > kMaxChunkBytes || h.raw_bytes > kMaxChunkBytes) {
    return Format("payload size %u/%u exceeds the %u-byte cap", h.stored_bytes, h.raw_bytes,
                  kMaxChunkBytes);
  }
  return {};
}

Unpacker::~Unpacker() {
  ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(dctx_));
}

bool Unpacker::Decompress(const char* src, size_t src_size, char* dst, size_t dst_size) {
  if (dctx_ == nullptr)
    dctx_ = ZSTD_createDCtx();
  if (dctx_ == nullptr) {
    zstd_error_ = "zstd: out of memory";
    return false;
  }
  const size_t out =
      ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(dctx_), dst, dst_size, src, src_size);
  if (ZSTD_isError(out)) {
    zstd_error_ = std::string("zstd: ") + ZSTD_getErrorName(out);
    return false;
  }
  if (out != dst_size) {
    zstd_error_ = Format("decompressed to %zu bytes, header says %zu", out, dst_size);
    return false;
  }
  return true;
}

bool Unpacker::Unpack(UnpackedChunk* chunk) {
  const ChunkHeader& h = chunk->header;
  chunk->error.clear();
  chunk->streams.clear();
  if (std::string what = CheckChunkHeader(h); !what.empty())
    return Fail(chunk, what);
  uint32_t crc = Crc32c(0, &h, offsetof(ChunkHeader, crc));
  crc = Crc32c(crc, chunk->stored.data(), chunk->stored.size());
  if (crc != h.crc)
    return Fail(chunk, Format("checksum 0x%08x, expected 0x%08x", h.crc, crc));
  if (chunk->sequenced && h.sequence != static_cast<uint16_t>(chunk->place.index)) {
    return Fail(chunk, Format("sequence number %u, expected %u: chunks are missing, repeated or "
                              "out of order",
                              h.sequence, static_cast<unsigned>(chunk->place.index & 0xffff)));
  }
  if (h.type == static_cast<uint8_t>(ChunkType::kColumns) ||
      h.type == static_cast<uint8_t>(ChunkType::kColumnsV2)) {
    return UnpackColumns(chunk);
  }
  if (h.type != static_cast<uint8_t>(ChunkType::kEvents) &&
      h.type != static_cast<uint8_t>(ChunkType::kTrailer)) {
    return Fail(chunk, Format("unknown chunk type %u", h.type));
  }
  if (h.codec == static_cast<uint8_t>(Codec::kRaw)) {
    if (h.raw_bytes != h.stored_bytes) {
      return Fail(chunk, Format("raw chunk with stored size %u != raw size %u", h.stored_bytes,
                                h.raw_bytes));
    }
    chunk->bytes.swap(chunk->stored);
    return true;
  }
  if (h.codec != static_cast<uint8_t>(Codec::kZstd)) {
    return Fail(chunk, Format("unknown codec %u", h.codec));
  }
  chunk->bytes.resize(h.raw_bytes);
  if (!Decompress(chunk->stored.data(), chunk->stored.size(), chunk->bytes.data(),
                  chunk->bytes.size())) {
    return Fail(chunk, zstd_error_);
  }
  return true;
}

bool Unpacker::UnpackColumns(UnpackedChunk* chunk) {
  const ChunkHeader& h = chunk->header;
  if (h.codec != static_cast<uint8_t>(Codec::kRaw)) {
    return Fail(chunk, Format("column chunk with codec %u (blocks carry their own)", h.codec));
  }
  const auto* p = reinterpret_cast<const uint8_t*>(chunk->stored.data());
  const uint8_t* end = p + chunk->stored.size();
  uint64_t events = 0, definitions = 0, stream_count = 0;
  if (!Head(&p, end, &events) || !Head(&p, end, &definitions) || !Head(&p, end, &stream_count)) {
    return Fail(chunk, "column chunk head truncated");
  }
  if (events + definitions != h.record_count || events > h.raw_bytes) {
    return Fail(chunk,
                Format("column chunk holds %llu events and %llu definitions, header says "
                       "%u records",
                       static_cast<ull>(events), static_cast<ull>(definitions), h.record_count));
  }
  if (stream_count > kMaxEscapeKey + 2) {
    return Fail(chunk, Format("%llu streams exceed the cap of %u", static_cast<ull>(stream_count),
                              kMaxEscapeKey + 2));
  }
  chunk->events = static_cast<uint32_t>(events);
  chunk->definitions = static_cast<uint32_t>(definitions);
  // The directory. Sizes add up to the header's raw_bytes, which is capped.
  std::vector<UnpackedChunk::Stream> all;
  all.reserve(stream_count);
  uint64_t offset = 0;
  for (uint64_t i = 0; i < stream_count; ++i) {
    uint64_t key = 0, size = 0;
    if (!Head(&p, end, &key) || !Head(&p, end, &size)) {
      return Fail(chunk, "column chunk directory truncated");
    }
    if (size > h.raw_bytes - offset) {
      return Fail(chunk, Format("stream %llu runs past the %u unpacked bytes", static_cast<ull>(i),
                                h.raw_bytes));
    }
    all.push_back({static_cast<uint32_t>(std::min<uint64_t>(key, UINT32_MAX)),
                   static_cast<uint32_t>(offset), static_cast<uint32_t>(size)});
    offset += size;
  }
  if (offset != h.raw_bytes) {
    return Fail(chunk, Format("streams hold %llu bytes, header says %u", static_cast<ull>(offset),
                              h.raw_bytes));
  }
  uint64_t block_count = 0;
  if (!Head(&p, end, &block_count) || block_count > stream_count + 1) {
    return Fail(chunk, "bad column chunk block count");
  }
  struct Block {
    uint8_t codec;
    uint64_t stored, raw;
  };
  std::vector<Block> blocks(block_count);
  uint64_t stored_total = 0, raw_total = 0;
  for (Block& b : blocks) {
    if (p >= end)
      return Fail(chunk, "column chunk block list truncated");
    b.codec = *p++;
    if (!Head(&p, end, &b.stored) || !Head(&p, end, &b.raw)) {
      return Fail(chunk, "column chunk block list truncated");
    }
    if (b.stored > kMaxChunkBytes || b.raw > kMaxChunkBytes) {
      return Fail(chunk, "column chunk block larger than a chunk");
    }
    stored_total += b.stored;
    raw_total += b.raw;
  }
  if (stored_total != static_cast<uint64_t>(end - p) || raw_total != h.raw_bytes) {
    return Fail(chunk, Format("blocks hold %llu/%llu bytes, the chunk %llu/%u",
                              static_cast<ull>(stored_total), static_cast<ull>(raw_total),
                              static_cast<ull>(end - p), h.raw_bytes));
  }
  chunk->bytes.resize(h.raw_bytes);
  char* out = chunk->bytes.data();
  for (size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    const char* src = reinterpret_cast<const char*>(p);
    if (b.codec == static_cast<uint8_t>(Codec::kRaw)) {
      if (b.stored != b.raw)
        return Fail(chunk, Format("raw block %zu changes size", i));
      std::memcpy(out, src, b.raw);
    } else if (b.codec == static_cast<uint8_t>(Codec::kZstd)) {
      if (!Decompress(src, b.stored, out, b.raw)) {
        return Fail(chunk, Format("block %zu: %s", i, zstd_error_.c_str()));
      }
    } else {
      return Fail(chunk, Format("block %zu has unknown codec %u", i, b.codec));
    }
    p += b.stored;
    out += b.raw;
  }
  // Keep the known streams, checking their sizes against the types.
  const auto* bytes = reinterpret_cast<const uint8_t*>(chunk->bytes.data());
  std::memset(chunk->type_counts, 0, sizeof(chunk->type_counts));
  bool seen_types = false, seen_definitions = false;
  for (const UnpackedChunk::Stream& s : all) {
    if (s.key == kTypesKey) {
      if (seen_types || s.size != events)
        return Fail(chunk, "bad event type stream");
      seen_types = true;
      CountTypes(bytes + s.offset, s.size, chunk->type_counts);
      chunk->streams.push_back(s);
    } else if (s.key == kDefinitionsKey) {
      if (seen_definitions)
        return Fail(chunk, "two definition streams");
      seen_definitions = true;
      chunk->streams.push_back(s);
    }
  }
  if (!seen_types && events > 0)
    return Fail(chunk, "events without an event type stream");
  const bool columns_v2 = h.type == static_cast<uint8_t>(ChunkType::kColumnsV2);
  std::memset(chunk->escape_counts, 0xff, sizeof(chunk->escape_counts));  // none seen yet
  for (const UnpackedChunk::Stream& s : all) {
    if (s.key < 2 || s.key > kMaxEscapeKey)
      continue;
    const auto [type, field, plane, escape] = ParseColumnKey(s.key);
    if (!IsEventType(static_cast<uint8_t>(type)) || field >= kEventSchema[type].field_count) {
      continue;  // a newer minor's field
    }
    if (escape) {
      if (!columns_v2 || HistoryField(static_cast<uint8_t>(type)) != static_cast<int>(field))
        continue;  // a newer minor's escape column
      // Escape words are as many as the misses, known only once decoded: the planes must agree
      // with each other here, and with the misses at the end of the chunk.
      uint32_t& count = chunk->escape_counts[type];
      if (count != UINT32_MAX && count != s.size) {
        return Fail(chunk, Format("escape column %s plane %u holds %u bytes, another plane %u",
                                  ColumnName(static_cast<uint8_t>(type), field).c_str(), plane,
                                  s.size, count));
      }
      if (s.size > chunk->type_counts[type]) {
        return Fail(chunk, Format("escape column %s holds %u words for %u events",
                                  ColumnName(static_cast<uint8_t>(type), field).c_str(), s.size,
                                  chunk->type_counts[type]));
      }
      count = s.size;
      chunk->streams.push_back(s);
      continue;
    }
    if (type == static_cast<uint32_t>(EventType::kTrailer)) {
      return Fail(chunk, "trailer column in an events chunk");
    }
    const uint32_t per_event = kEventSchema[type].fields[field].coding == Coding::kDims ? 3 : 1;
    if (s.size != uint64_t{chunk->type_counts[type]} * per_event) {
      return Fail(chunk, Format("column %s plane %u holds %u bytes for %u events",
                                ColumnName(static_cast<uint8_t>(type), field).c_str(), plane,
                                s.size, chunk->type_counts[type]));
    }
    chunk->streams.push_back(s);
  }
  for (uint32_t& count : chunk->escape_counts) count = count == UINT32_MAX ? 0 : count;
  return true;
}

bool ChunkDecoder::ChunkError(const std::string& what) {
  error_ = Place(chunk_->place) + ": " + what;
  p_ = end_ = nullptr;
  return false;
}

bool ChunkDecoder::RecordError(const std::string& what) {
  const auto* base = reinterpret_cast<const uint8_t*>(chunk_->bytes.data());
  error_ = Format("%s, record %llu (payload offset %lld): ", Place(chunk_->place).c_str(),
                  static_cast<ull>(record_index_), static_cast<long long>(record_start_ - base)) +
           what;
  p_ = end_ = nullptr;
  return false;
}

bool ChunkDecoder::Start(const UnpackedChunk* chunk, DefinitionTables* tables) {
  chunk_ = chunk;
  error_.clear();
  record_index_ = 0;
  event_index_ = 0;
  types_ = nullptr;
  const auto* bytes = reinterpret_cast<const uint8_t*>(chunk->bytes.data());
  const bool columns = chunk->header.type == static_cast<uint8_t>(ChunkType::kColumns) ||
                       chunk->header.type == static_cast<uint8_t>(ChunkType::kColumnsV2);
  if (!columns) {
    begin_ = p_ = bytes;
    end_ = p_ + chunk->bytes.size();
    rows_ = DecodeState{};
    return true;
  }
  p_ = end_ = nullptr;
  columns_.Start(chunk->header.type == static_cast<uint8_t>(ChunkType::kColumnsV2),
                 chunk->escape_counts);
  for (const UnpackedChunk::Stream& s : chunk->streams) {
    const uint8_t* data = bytes + s.offset;
    if (s.key == kTypesKey) {
      types_ = data;
    } else if (s.key == kDefinitionsKey) {
      begin_ = record_start_ = data;
      if (tables != nullptr && !ApplyDefinitions(data, data + s.size, tables))
        return false;
    } else {
      const auto [type, field, plane, escape] = ParseColumnKey(s.key);
      ColumnPlanes& c = escape ? columns_.escapes(type) : columns_.planes(type, field);
      for (uint8_t k = 0; k < c.count; ++k) {
        if (c.shift[k] == 8 * plane)
          return ChunkError("a column plane appears twice");
      }
      c.plane[c.count] = data;
      c.shift[c.count] = static_cast<uint8_t>(8 * plane);
      ++c.count;
    }
  }
  if (tables == nullptr) {  // StartDetached()
    columns_.Begin(types_, types_ != nullptr ? chunk->events : 0, kMaxStrings, kMaxStacks, true);
  } else {
    columns_.Begin(types_, types_ != nullptr ? chunk->events : 0, tables->string_count(),
                   tables->stack_count());
  }
  return true;
}

bool ChunkDecoder::StartDetached(const UnpackedChunk* chunk) {
  const uint8_t type = chunk->header.type;
  if (type != static_cast<uint8_t>(ChunkType::kColumns) &&
      type != static_cast<uint8_t>(ChunkType::kColumnsV2)) {
    return false;
  }
  return Start(chunk, nullptr);
}

bool ChunkDecoder::ApplyDefinitions(const uint8_t* p, const uint8_t* end,
                                    DefinitionTables* tables) {
  while (p < end) {
    record_start_ = p;
    const uint8_t type = *p;
    uint64_t len = 0;
    const uint8_t* body = GetVarint(p + 1, end, &len);
    if (body == nullptr)
      return RecordError("bad record length varint");
    if (len > static_cast<uint64_t>(end - body))
      return RecordError("definition runs past its stream");
    p = body + len;
    bool ok = false;
    if (type == kDefString) {
      ok = DefineString(body, p, tables);
    } else if (type == kDefStack) {
      ok = DefineStack(body, p, tables);
    } else {
      return RecordError(Format("record type 0x%02x in the definition stream", type));
    }
    if (!ok)
      return false;
    ++record_index_;
  }
  return true;
}

bool ChunkDecoder::DefineString(const uint8_t* p, const uint8_t* end, DefinitionTables* tables) {
  uint64_t id = 0;
  p = GetVarint(p, end, &id);
  if (p == nullptr)
    return RecordError("bad string id varint");
  const uint32_t expected = tables->string_count();
  if (id != expected) {
    return RecordError(
        Format("string id %llu defined, expected %u", static_cast<ull>(id), expected));
  }
  if (expected >= kMaxStrings)
    return RecordError(Format("more than %u strings", kMaxStrings));
  const auto size = static_cast<uint64_t>(end - p);
  if (size > kMaxStringBytes) {
    return RecordError(Format("string of %llu bytes exceeds the %u-byte cap",
                              static_cast<ull>(size), kMaxStringBytes));
  }
  if (tables->string_bytes() + size > kMaxStringTableBytes) {
    return RecordError(
        Format("strings exceed the %llu MiB cap of a trace's string table (the "
               "recorder never writes more than half of it)",
               static_cast<ull>(kMaxStringTableBytes >> 20)));
  }
  tables->AddString(std::string_view(reinterpret_cast<const char*>(p), size));
  return true;
}

bool ChunkDecoder::DefineStack(const uint8_t* p, const uint8_t* end, DefinitionTables* tables) {
  uint64_t id = 0, count = 0;
  p = GetVarint(p, end, &id);
  if (p != nullptr)
    p = GetVarint(p, end, &count);
  if (p == nullptr)
    return RecordError("bad stack header varints");
  const uint32_t expected = tables->stack_count();
  if (id != expected) {
    return RecordError(
        Format("stack id %llu defined, expected %u", static_cast<ull>(id), expected));
  }
  if (expected >= kMaxStacks)
    return RecordError(Format("more than %u stacks", kMaxStacks));
  if (count > kMaxStackFrames) {
    return RecordError(Format("stack of %llu frames exceeds the cap of %u", static_cast<ull>(count),
                              kMaxStackFrames));
  }
  if (tables->stack_frames() + count > kMaxStackTableFrames) {
    return RecordError(
        Format("stacks exceed the cap of %llu Mi frames of a trace's stack table "
               "(the recorder never writes more than half of it)",
               static_cast<ull>(kMaxStackTableFrames >> 20)));
  }
  frames_.resize(count);
  const uint32_t strings = tables->string_count();
  for (uint64_t i = 0; i < count; ++i) {
    p = GetVarint(p, end, &frames_[i]);
    if (p == nullptr)
      return RecordError(Format("stack frame %llu truncated", static_cast<ull>(i)));
    if (IsStringFrame(frames_[i]) && FrameValue(frames_[i]) >= strings) {
      return RecordError(Format("stack frame %llu names undefined string %llu", static_cast<ull>(i),
                                static_cast<ull>(FrameValue(frames_[i]))));
    }
  }
  tables->AddStack(frames_.data(), frames_.size());
  return true;
}

size_t ChunkDecoder::Decode(Event* out, size_t max, DefinitionTables* tables) {
  if (failed() || chunk_ == nullptr)
    return 0;
  if (chunk_->header.type == static_cast<uint8_t>(ChunkType::kColumns) ||
      chunk_->header.type == static_cast<uint8_t>(ChunkType::kColumnsV2)) {
    return DecodeColumns(out, max);
  }
  return DecodeRows(out, max, tables);
}

size_t ChunkDecoder::DecodeRows(Event* out, size_t max, DefinitionTables* tables) {
  const bool trailer_chunk = chunk_->header.type == static_cast<uint8_t>(ChunkType::kTrailer);
  size_t n = 0;
  while (n < max && p_ < end_) {
    record_start_ = p_;
    const uint8_t type = *p_;
    uint64_t len = 0;
    const uint8_t* body = GetVarint(p_ + 1, end_, &len);
    if (body == nullptr) {
      RecordError("bad record length varint");
      return n;
    }
    if (len > static_cast<uint64_t>(end_ - body)) {
      RecordError(Format("record length %llu runs past the payload end (%lld left)",
                         static_cast<ull>(len), static_cast<long long>(end_ - body)));
      return n;
    }
    const uint8_t* body_end = body + len;
    p_ = body_end;
    if (type == kDefString || type == kDefStack) {
      const bool ok = type == kDefString ? DefineString(body, body_end, tables)
                                         : DefineStack(body, body_end, tables);
      if (!ok)
        return n;
    } else if (IsEventType(type)) {
      const bool is_trailer = type == static_cast<uint8_t>(EventType::kTrailer);
      if (is_trailer != trailer_chunk) {
        RecordError(is_trailer ? "trailer event outside the trailer chunk"
                               : "non-trailer event in the trailer chunk");
        return n;
      }
      rows_.strings = tables->string_count();
      rows_.stacks = tables->stack_count();
      if (!FastDecodeRow(type, body, body_end, &out[n], &rows_)) {
        // The slow path names the problem.
        if (CheckRow(type, body, body_end, &out[n])) {
          RecordError("fast and checked decoders disagree on this record");
        }
        return n;
      }
      ++n;
    } else {
      ++skipped_;  // a record type from a newer minor: skip by its length
    }
    ++record_index_;
  }
  return n;
}

bool ChunkDecoder::CheckRow(uint8_t type, const uint8_t* p, const uint8_t* end, Event* ev) {
  const EventSpec& spec = kEventSchema[type];
  *ev = MakeEvent(static_cast<EventType>(type));
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    const FieldSpec& f = spec.fields[i];
    uint64_t v = 0;
    const std::string name = std::string("field '") + f.json + "'";
    if (f.coding == Coding::kEnum) {
      if (p >= end)
        return RecordError(name + " truncated");
      v = *p++;
      const auto names = NamesOf(static_cast<EnumKind>(spec.enum_kind));
      if (v >= names.count) {
        return RecordError(Format("%s has unknown value %llu", name.c_str(), static_cast<ull>(v)));
      }
      continue;
    }
    p = GetVarint(p, end, &v);
    if (p == nullptr)
      return RecordError(name + " truncated");
    if (f.coding == Coding::kString && v >= rows_.strings) {
      return RecordError(
          Format("%s names undefined string %llu", name.c_str(), static_cast<ull>(v)));
    }
    if (f.coding == Coding::kStack && v >= rows_.stacks) {
      return RecordError(
          Format("%s names undefined stack %llu", name.c_str(), static_cast<ull>(v)));
    }
    if (f.coding == Coding::kDims) {
      for (int k = 1; k < 3; ++k) {
        p = GetVarint(p, end, &v);
        if (p == nullptr)
          return RecordError(name + " truncated");
      }
    }
  }
  return true;  // bytes left in the body are fields of a newer minor: ignored
}

size_t ChunkDecoder::DecodeColumns(Event* out, size_t max) {
  ColumnDecoder::Failure failure;
  uint32_t skipped = 0;
  const uint32_t n = columns_.Decode(out, static_cast<uint32_t>(std::min<size_t>(max, UINT32_MAX)),
                                     &skipped, &failure);
  skipped_ += skipped;
  event_index_ = columns_.next();
  if (failure.kind != ColumnDecoder::Failure::Kind::kNone) {
    ColumnError(failure);
    return n;
  }
  if (columns_.next() == columns_.events() &&
      chunk_->header.type == static_cast<uint8_t>(ChunkType::kColumnsV2)) {
    CheckEscapesUsed();
  }
  return n;
}

void ChunkDecoder::CheckEscapesUsed() {
  if (const uint8_t t = columns_.UnusedEscapes(); t != 0) {
    error_ = Format("%s: escape column %s holds %u words, its events used %u",
                    Place(chunk_->place).c_str(), ColumnName(t, HistoryField(t)).c_str(),
                    columns_.escape_count(t), columns_.escapes_used(t));
  }
}

void ChunkDecoder::ColumnError(const ColumnDecoder::Failure& failure) {
  using Kind = ColumnDecoder::Failure::Kind;
  const std::string place = Place(chunk_->place);
  const uint8_t type = failure.type;
  if (failure.kind == Kind::kTrailer) {
    error_ = Format("%s, event %u: trailer event outside the trailer chunk", place.c_str(),
                    event_index_);
    return;
  }
  std::string what;
  if (failure.kind == Kind::kNoEscape) {
    what = Format("needs escape word %u of a column of %u", columns_.escapes_used(type) + 1,
                  columns_.escape_count(type));
  } else if (failure.kind == Kind::kPastHistory) {
    what = Format("names address %llu of a history of %u", static_cast<ull>(failure.word),
                  columns_.history().count(FindList(static_cast<EventType>(type))));
  } else if (failure.kind == Kind::kValue) {
    const Coding coding = kEventSchema[type].fields[failure.field].coding;
    const char* says = coding == Coding::kString  ? "names undefined string %llu"
                       : coding == Coding::kStack ? "names undefined stack %llu"
                                                  : "has unknown value %llu";
    what = Format(says, static_cast<ull>(failure.word));
  } else {
    error_ = Format("%s, event %u: an undecodable value", place.c_str(), event_index_);
    return;
  }
  error_ = Format("%s, event %u (column '%s'): ", place.c_str(), event_index_,
                  ColumnName(type, failure.field).c_str()) +
           what;
}

}  // namespace cuclimb::format
