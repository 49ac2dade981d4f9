// SPDX-License-Identifier: Apache-2.0
// Chunk encoding: schema-driven field coding, zstd compression, CRC-32C framing.
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

FileHeader MakeFileHeader(ClockId clock, int64_t base_clock_ns, int64_t base_realtime_ns,
                          std::string_view producer) {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof(kMagic));
  h.format_major = kFormatMajor;
  h.format_minor = kFormatMinor;
  h.header_bytes = sizeof(FileHeader);
  h.clock_id = static_cast<uint32_t>(clock);
  h.base_clock_ns = base_clock_ns;
  h.base_realtime_ns = base_realtime_ns;
  std::memcpy(h.producer, producer.data(), std::min(producer.size(), sizeof(h.producer) - 1));
  h.header_crc = Crc32c(0, &h, offsetof(FileHeader, header_crc));
  return h;
}

ChunkEncoder::ChunkEncoder(int zstd_level) : zstd_level_(zstd_level) {}

ChunkEncoder::~ChunkEncoder() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_ctx_)); }

bool ChunkEncoder::AppendRecord(uint8_t type, const uint8_t* body, size_t body_size) {
  try {
    uint8_t head[1 + kMaxVarintBytes];
    head[0] = type;
    uint8_t* end = PutVarint(head + 1, body_size);
    raw_.append(reinterpret_cast<const char*>(head), end - head);
    raw_.append(reinterpret_cast<const char*>(body), body_size);
  } catch (const std::bad_alloc&) {
    return false;
  }
  ++records_;
  return true;
}

bool ChunkEncoder::DefineString(uint32_t id, std::string_view bytes) {
  if (bytes.size() > kMaxStringBytes) bytes = bytes.substr(0, kMaxStringBytes);
  try {
    std::string body;
    body.resize(kMaxVarintBytes);
    auto* start = reinterpret_cast<uint8_t*>(body.data());
    body.resize(PutVarint(start, id) - start);
    body.append(bytes);
    return AppendRecord(kDefString, reinterpret_cast<const uint8_t*>(body.data()), body.size());
  } catch (const std::bad_alloc&) {
    return false;
  }
}

bool ChunkEncoder::DefineStack(uint32_t id, const uint64_t* frames, size_t count) {
  if (count > kMaxStackFrames) count = kMaxStackFrames;
  uint8_t body[(kMaxStackFrames + 2) * kMaxVarintBytes];
  uint8_t* p = PutVarint(body, id);
  p = PutVarint(p, count);
  for (size_t i = 0; i < count; ++i) p = PutVarint(p, frames[i]);
  return AppendRecord(kDefStack, body, p - body);
}

bool ChunkEncoder::Add(const Event& ev) {
  const uint8_t raw_type = static_cast<uint8_t>(ev.type);
  if (!IsEventType(raw_type)) return false;
  const EventSpec& spec = kEventSchema[raw_type];
  // Upper bound: every field a 10-byte varint, dims three of them.
  uint8_t body[32 * 3 * kMaxVarintBytes];
  uint8_t* p = body;
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    const FieldSpec& f = spec.fields[i];
    switch (f.coding) {
      case Coding::kTime:
        // Modulo 2^64, as the reader adds it back: any two timestamps have a delta.
        p = PutVarint(p, ZigZag(static_cast<int64_t>(static_cast<uint64_t>(ev.ts) -
                                                     static_cast<uint64_t>(prev_ts_))));
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
  return AppendRecord(raw_type, body, p - body);
}

bool ChunkEncoder::Seal(ChunkType type, std::string* out) {
  if (raw_.size() > kMaxChunkBytes) return false;  // callers seal long before this
  const char* payload = raw_.data();
  size_t stored = raw_.size();
  Codec codec = Codec::kRaw;
  try {
    if (zstd_level_ > 0 && !raw_.empty()) {
      if (zstd_ctx_ == nullptr) zstd_ctx_ = ZSTD_createCCtx();
      if (zstd_ctx_ == nullptr) return false;
      compressed_.resize(ZSTD_compressBound(raw_.size()));
      const size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_ctx_), compressed_.data(),
                                         compressed_.size(), raw_.data(), raw_.size(), zstd_level_);
      if (ZSTD_isError(n)) return false;
      if (n < raw_.size()) {  // keep raw when compression does not pay
        payload = compressed_.data();
        stored = n;
        codec = Codec::kZstd;
      }
    }
    ChunkHeader h{};
    h.magic = kChunkMagic;
    h.type = static_cast<uint8_t>(type);
    h.codec = static_cast<uint8_t>(codec);
    h.stored_bytes = static_cast<uint32_t>(stored);
    h.raw_bytes = static_cast<uint32_t>(raw_.size());
    h.record_count = records_;
    uint32_t crc = Crc32c(0, &h, offsetof(ChunkHeader, crc));
    h.crc = Crc32c(crc, payload, stored);
    out->append(reinterpret_cast<const char*>(&h), sizeof(h));
    out->append(payload, stored);
  } catch (const std::bad_alloc&) {
    return false;
  }
  raw_.clear();
  records_ = 0;
  prev_ts_ = 0;
  std::memset(prev_, 0, sizeof(prev_));
  return true;
}

}  // namespace cuclimb::format
