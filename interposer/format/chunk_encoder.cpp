// SPDX-License-Identifier: Apache-2.0
// Chunk encoding: schema-driven field coding in rows (v1.0) or columns (v1.1), zstd compression,
// CRC-32C framing.
#include "chunk_encoder.h"

#include <algorithm>
#include <cstring>
#include <new>

#include <zstd.h>

#include "crc32c.h"
#include "event_fields.h"
#include "varint.h"

namespace cuclimb::format {

static_assert(kDeltaSlots <= 16, "ChunkEncoder::prev_ is too small");

namespace {

template <typename T>
void AppendBytes(std::string* to, const T* data, size_t size) {
  to->append(reinterpret_cast<const char*>(data), size);
}

void AppendVarint(std::string* to, uint64_t v) {
  uint8_t buf[kMaxVarintBytes];
  AppendBytes(to, buf, static_cast<size_t>(PutVarint(buf, v) - buf));
}

struct Stream {
  uint32_t key;
  uint32_t bytes;
  uint32_t type, field, plane;  // column planes; unused for definitions and types
  const std::vector<uint64_t>* words;
};

// Appends a stream per nonzero byte plane of `words`.
void AddPlanes(const std::vector<uint64_t>& words, uint32_t type, uint32_t field, bool escape,
               std::vector<Stream>* streams) {
  if (words.empty())
    return;
  uint64_t any = 0;
  for (uint64_t w : words) any |= w;
  // An escape column's length is not the type's event count: its plane 0 is always written,
  // so that the reader knows how many words it has even when they are all zero.
  if (escape)
    any |= 1;
  for (uint32_t plane = 0; plane < kMaxPlanes; ++plane) {
    if (((any >> (8 * plane)) & 0xff) != 0) {
      streams->push_back({escape ? EscapeKey(type, field, plane) : ColumnKey(type, field, plane),
                          static_cast<uint32_t>(words.size()), type, field, plane, &words});
    }
  }
}

}  // namespace

FileHeader MakeFileHeader(ClockId clock, int64_t base_clock_ns, int64_t base_realtime_ns,
                          std::string_view producer, ChunkLayout layout) {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.format_major = kFormatMajor;
  h.format_minor = layout == ChunkLayout::kRows ? 0 : layout == ChunkLayout::kColumns ? 1 : 2;
  static_assert(kFormatMinor == 2, "MakeFileHeader: a layout per minor");
  h.header_bytes = sizeof(FileHeader);
  h.clock_id = static_cast<uint32_t>(clock);
  h.base_clock_ns = base_clock_ns;
  h.base_realtime_ns = base_realtime_ns;
  std::memcpy(h.producer, producer.data(), std::min(producer.size(), sizeof(h.producer) - 1));
  h.header_crc = Crc32c(0, &h, offsetof(FileHeader, header_crc));
  return h;
}

ChunkEncoder::ChunkEncoder(int zstd_level, ChunkLayout layout)
    : zstd_level_(zstd_level), layout_(layout) {
  history_.Reset();
}

ChunkEncoder::~ChunkEncoder() {
  ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_ctx_));
}

bool ChunkEncoder::AppendRecord(std::string* to, uint8_t type, const uint8_t* body,
                                size_t body_size) {
  try {
    uint8_t head[1 + kMaxVarintBytes];
    head[0] = type;
    uint8_t* end = PutVarint(head + 1, body_size);
    AppendBytes(to, head, static_cast<size_t>(end - head));
    AppendBytes(to, body, body_size);
  } catch (const std::bad_alloc&) {
    return false;
  }
  ++records_;
  pending_bytes_ += 1 + body_size;
  return true;
}

bool ChunkEncoder::DefineString(uint32_t id, std::string_view bytes) {
  if (bytes.size() > kMaxStringBytes)
    return false;
  try {
    uint8_t head[kMaxVarintBytes];
    std::string body(reinterpret_cast<const char*>(head),
                     static_cast<size_t>(PutVarint(head, id) - head));
    body.append(bytes);
    return AppendRecord(&definitions_, kDefString, reinterpret_cast<const uint8_t*>(body.data()),
                        body.size());
  } catch (const std::bad_alloc&) {
    return false;
  }
}

bool ChunkEncoder::DefineStack(uint32_t id, const uint64_t* frames, size_t count) {
  if (count > kMaxStackFrames)
    return false;
  uint8_t body[(kMaxStackFrames + 2) * kMaxVarintBytes];
  uint8_t* p = PutVarint(body, id);
  p = PutVarint(p, count);
  for (size_t i = 0; i < count; ++i) p = PutVarint(p, frames[i]);
  return AppendRecord(&definitions_, kDefStack, body, static_cast<size_t>(p - body));
}

bool ChunkEncoder::Add(const Event& ev) {
  const uint8_t raw_type = static_cast<uint8_t>(ev.type);
  if (!IsEventType(raw_type))
    return false;
  if (layout_ == ChunkLayout::kRows || ev.type == EventType::kTrailer)
    return AddRow(ev);
  return AddColumns(ev);
}

bool ChunkEncoder::AddRow(const Event& ev) {
  const EventSpec& spec = SpecOf(ev.type);
  // Upper bound: every field a 10-byte varint, dims three of them.
  uint8_t body[32 * 3 * kMaxVarintBytes];
  uint8_t* p = body;
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    const FieldSpec& f = spec.fields[i];
    switch (f.coding) {
      case Coding::kTime:
        p = PutVarint(p, ZigZag(WrappingSub(ev.ts, prev_ts_)));
        prev_ts_ = ev.ts;
        break;
      case Coding::kUInt:
      case Coding::kString:
      case Coding::kStack:
        p = PutVarint(p, GetSlot(ev, f.slot));
        break;
      case Coding::kSInt:
      case Coding::kDevice:
        p = PutVarint(p, ZigZag(static_cast<int64_t>(GetSlot(ev, f.slot))));
        break;
      case Coding::kHex:
      case Coding::kDelta: {
        const uint64_t v = GetSlot(ev, f.slot);
        uint64_t& prev = prev_[static_cast<int>(f.slot)];
        p = PutVarint(p, ZigZag(static_cast<int64_t>(v - prev)));
        prev = v;
        break;
      }
      case Coding::kEnum:
        *p++ = static_cast<uint8_t>(GetSlot(ev, f.slot));
        break;
      case Coding::kDims: {
        const uint32_t* d = DimsOf(ev, f.slot);
        for (int k = 0; k < 3; ++k) p = PutVarint(p, d[k]);
        break;
      }
    }
  }
  return AppendRecord(&rows_, static_cast<uint8_t>(ev.type), body, static_cast<size_t>(p - body));
}

bool ChunkEncoder::AddColumns(const Event& ev) {
  const EventSpec& spec = SpecOf(ev.type);
  std::vector<uint64_t>* columns = columns_[static_cast<uint8_t>(ev.type)];
  const int history_field =
      layout_ == ChunkLayout::kColumnsV2 ? HistoryField(static_cast<uint8_t>(ev.type)) : -1;
  std::vector<uint64_t>& escapes = escapes_[static_cast<uint8_t>(ev.type)];
  // Reserve first, so that a failed allocation leaves no column longer than the others.
  try {
    for (uint8_t i = 0; i < spec.field_count; ++i) {
      std::vector<uint64_t>& c = columns[i];
      if (c.size() + 3 > c.capacity())
        c.reserve(std::max<size_t>(256, c.capacity() * 2));
    }
    if (history_field >= 0 && escapes.size() + 1 > escapes.capacity())
      escapes.reserve(std::max<size_t>(256, escapes.capacity() * 2));
    types_.push_back(static_cast<char>(ev.type));
  } catch (const std::bad_alloc&) {
    return false;
  }
  size_t bytes = 1;
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    const FieldSpec& f = spec.fields[i];
    std::vector<uint64_t>& column = columns[i];
    uint64_t word = 0;
    switch (f.coding) {
      case Coding::kTime:
        // 1.2: from the end of the previous event (its ts + dur), which on a busy thread is
        // where the next call starts: the gaps between calls vary less than call-to-call times.
        word =
            ZigZag(WrappingSub(ev.ts, layout_ == ChunkLayout::kColumnsV2 ? prev_end_ : prev_ts_));
        prev_ts_ = ev.ts;
        prev_end_ = WrappingAdd(ev.ts, ev.dur);
        break;
      case Coding::kUInt:
      case Coding::kString:
      case Coding::kStack:
      case Coding::kEnum:
        word = GetSlot(ev, f.slot);
        break;
      case Coding::kSInt:
        word = ZigZag(static_cast<int64_t>(GetSlot(ev, f.slot)));
        break;
      case Coding::kDevice:
        word = DeviceWord(ev.device);
        break;
      case Coding::kHex:
      case Coding::kDelta: {
        const uint64_t v = GetSlot(ev, f.slot);
        if (i == history_field) {
          word = history_.Find(FindList(ev.type), v);
          if (word == 0) {
            escapes.push_back(history_.EscapeWord(v));
            bytes += std::max(1u, WordBytes(escapes.back()));
          }
          history_.Push(PushList(ev.type), v);
          break;
        }
        uint64_t& prev = prev_[static_cast<int>(f.slot)];
        word = ZigZag(static_cast<int64_t>(v - prev));
        prev = v;
        break;
      }
      case Coding::kDims: {
        const uint32_t* d = DimsOf(ev, f.slot);
        column.push_back(d[0]);
        column.push_back(d[1]);
        word = d[2];
        bytes += std::max(1u, WordBytes(d[0])) + std::max(1u, WordBytes(d[1]));
        break;
      }
    }
    column.push_back(word);
    bytes += std::max(1u, WordBytes(word));
  }
  ++records_;
  pending_bytes_ += bytes;
  return true;
}

bool ChunkEncoder::Compress(const char* data, size_t size, int level, std::string* to,
                            Codec* codec) {
  *codec = Codec::kRaw;
  if (level <= 0 || size == 0)
    return true;
  if (zstd_ctx_ == nullptr)
    zstd_ctx_ = ZSTD_createCCtx();
  if (zstd_ctx_ == nullptr)
    return false;
  to->resize(ZSTD_compressBound(size));
  const size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_ctx_), to->data(), to->size(),
                                     data, size, level);
  if (ZSTD_isError(n))
    return false;
  to->resize(n);
  if (n < size)
    *codec = Codec::kZstd;  // keep raw when compression does not pay
  return true;
}

int ChunkEncoder::LevelFor(SealPace pace) const {
  if (zstd_level_ != kAutoZstdLevel)
    return zstd_level_;
  // A paced chunk comes at most about once a second, so a small one compressed harder costs the
  // writer a bounded share of a core (a few %, docs/performance.md); small chunks are the ones
  // whose fixed costs (an entropy table per block) weigh most.
  return pace == SealPace::kPaced && records_ <= kSmallChunkEvents ? kSmallChunkZstdLevel
                                                                   : kDefaultZstdLevel;
}

bool ChunkEncoder::GroupBlocks(size_t first, int level, std::vector<Block>* blocks) {
  if (level <= 0 || blocks->size() - first < 2)
    return true;
  // Joining two streams saves a block's framing and entropy tables, and costs where their byte
  // distributions differ; a fast level decides, the chunk's level compresses.
  const int trial = std::min(level, kTrialZstdLevel);
  auto stored = [&](const Block& b, size_t* bytes) {
    Codec codec = Codec::kRaw;
    if (!Compress(unpacked_.data() + b.offset, b.size, trial, &compressed_, &codec))
      return false;
    *bytes = codec == Codec::kRaw ? b.size : compressed_.size();
    return true;
  };
  // Pairs of neighbours decide, so that the trials cost about two compressions of the chunk
  // however many streams end up in one block.
  std::vector<Block>& all = *blocks;
  size_t out = first;
  size_t previous_alone = 0;
  if (!stored(all[first], &previous_alone))
    return false;
  for (size_t i = first + 1; i < all.size(); ++i) {
    size_t alone = 0, pair = 0;
    const Block& previous = all[i - 1];
    if (!stored(all[i], &alone) ||
        !stored(Block{previous.offset, previous.size + all[i].size}, &pair))
      return false;
    if (pair < previous_alone + alone)
      all[out].size += all[i].size;
    else
      all[++out] = all[i];
    previous_alone = alone;
  }
  all.resize(out + 1);
  return true;
}

bool ChunkEncoder::PackColumns(int level, uint64_t* raw_total) {
  // The streams: definitions, types, then every plane with a nonzero byte. Small ones first
  // (they share block 0), then one block per large stream.
  std::vector<Stream> streams;
  const uint32_t events = static_cast<uint32_t>(types_.size());
  if (!definitions_.empty()) {
    streams.push_back(
        {kDefinitionsKey, static_cast<uint32_t>(definitions_.size()), 0, 0, 0, nullptr});
  }
  if (events > 0)
    streams.push_back({kTypesKey, events, 0, 0, 0, nullptr});
  for (uint32_t t = 1; t < static_cast<uint32_t>(EventType::kCount); ++t) {
    for (uint32_t f = 0; f < kMaxColumnFields; ++f)
      AddPlanes(columns_[t][f], t, f, false, &streams);
  }
  for (uint32_t t = 1; t < static_cast<uint32_t>(EventType::kCount); ++t) {
    const int field = HistoryField(static_cast<uint8_t>(t));
    if (field >= 0)
      AddPlanes(escapes_[t], t, static_cast<uint32_t>(field), true, &streams);
  }
  std::stable_partition(streams.begin(), streams.end(),
                        [](const Stream& s) { return s.bytes < kOwnBlockBytes; });
  uint64_t total = 0;
  for (const Stream& s : streams) total += s.bytes;
  if (total > kMaxChunkBytes)
    return false;
  unpacked_.resize(total);
  char* out = unpacked_.data();
  for (const Stream& s : streams) {
    if (s.key == kDefinitionsKey) {
      std::memcpy(out, definitions_.data(), s.bytes);
    } else if (s.key == kTypesKey) {
      std::memcpy(out, types_.data(), s.bytes);
    } else {
      const uint64_t* words = s.words->data();
      const unsigned shift = 8 * s.plane;
      for (uint32_t i = 0; i < s.bytes; ++i) out[i] = static_cast<char>(words[i] >> shift);
    }
    out += s.bytes;
  }
  // Blocks: [0, first large) shared, then the large streams, each joining the block before it
  // when one block takes fewer bytes than two.
  std::vector<Block> blocks;
  size_t offset = 0, i = 0;
  for (; i < streams.size() && streams[i].bytes < kOwnBlockBytes; ++i) offset += streams[i].bytes;
  if (offset > 0)
    blocks.push_back({0, offset});
  const size_t first_large = blocks.size();
  for (; i < streams.size(); ++i) {
    blocks.push_back({offset, streams[i].bytes});
    offset += streams[i].bytes;
  }
  if (!GroupBlocks(first_large, level, &blocks))
    return false;
  payload_.clear();
  AppendVarint(&payload_, events);
  AppendVarint(&payload_, records_ - events);
  AppendVarint(&payload_, streams.size());
  for (const Stream& s : streams) {
    AppendVarint(&payload_, s.key);
    AppendVarint(&payload_, s.bytes);
  }
  AppendVarint(&payload_, blocks.size());
  std::string block_data;
  for (const Block& b : blocks) {
    Codec codec = Codec::kRaw;
    if (!Compress(unpacked_.data() + b.offset, b.size, level, &compressed_, &codec))
      return false;
    const std::string_view stored = codec == Codec::kRaw
                                        ? std::string_view(unpacked_.data() + b.offset, b.size)
                                        : std::string_view(compressed_);
    payload_.push_back(static_cast<char>(codec));
    AppendVarint(&payload_, stored.size());
    AppendVarint(&payload_, b.size);
    block_data.append(stored);
  }
  payload_.append(block_data);
  *raw_total = total;
  return payload_.size() <= kMaxChunkBytes;
}

bool ChunkEncoder::Frame(ChunkType type, Codec codec, const char* payload, size_t stored,
                         uint64_t raw, std::string* out) {
  ChunkHeader h{};
  h.magic = kChunkMagic;
  h.type = static_cast<uint8_t>(type);
  h.codec = static_cast<uint8_t>(codec);
  h.sequence = layout_ == ChunkLayout::kRows ? 0 : sequence_;
  h.stored_bytes = static_cast<uint32_t>(stored);
  h.raw_bytes = static_cast<uint32_t>(raw);
  h.record_count = records_;
  const uint32_t crc = Crc32c(0, &h, offsetof(ChunkHeader, crc));
  h.crc = Crc32c(crc, payload, stored);
  AppendBytes(out, &h, sizeof(h));
  out->append(payload, stored);
  return true;
}

bool ChunkEncoder::Seal(ChunkType type, std::string* out, SealPace pace) {
  const size_t out_size = out->size();
  const int level = LevelFor(pace);
  try {
    if (type == ChunkType::kEvents && layout_ != ChunkLayout::kRows) {
      uint64_t raw = 0;
      if (!PackColumns(level, &raw))
        return false;
      Frame(layout_ == ChunkLayout::kColumns ? ChunkType::kColumns : ChunkType::kColumnsV2,
            Codec::kRaw, payload_.data(), payload_.size(), raw, out);
    } else {
      // Records: the definitions first (still before first use), then the events.
      payload_ = definitions_;
      payload_ += rows_;
      if (!types_.empty() || payload_.size() > kMaxChunkBytes)
        return false;
      Codec codec = Codec::kRaw;
      if (!Compress(payload_.data(), payload_.size(), level, &compressed_, &codec))
        return false;
      const std::string& stored = codec == Codec::kRaw ? payload_ : compressed_;
      Frame(type, codec, stored.data(), stored.size(), payload_.size(), out);
    }
  } catch (const std::bad_alloc&) {
    out->resize(out_size);
    return false;
  }
  ++sequence_;
  Reset();
  return true;
}

void ChunkEncoder::Reset() {
  definitions_.clear();
  rows_.clear();
  types_.clear();
  for (auto& by_field : columns_) {
    for (std::vector<uint64_t>& c : by_field) c.clear();
  }
  for (std::vector<uint64_t>& e : escapes_) e.clear();
  history_.Reset();
  records_ = 0;
  pending_bytes_ = 0;
  prev_ts_ = 0;
  prev_end_ = 0;
  std::memset(prev_, 0, sizeof(prev_));
}

}  // namespace cuclimb::format
