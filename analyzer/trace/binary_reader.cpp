// SPDX-License-Identifier: Apache-2.0
// Binary trace decoding: chunk framing, checksums, zstd, schema-driven fields, validation.
#include "trace/binary_reader.h"

#include <cstring>

#include <zstd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "interposer/format/crc32c.h"
#include "interposer/format/event_fields.h"
#include "interposer/format/varint.h"

namespace cuclimb::trace {

using format::ChunkHeader;
using format::Coding;
using format::FieldSpec;
using format::FileHeader;

BinaryReader::BinaryReader(std::unique_ptr<ByteSource> source) : source_(std::move(source)) {
  header_.form = TraceForm::kBinary;
  total_bytes_ = source_->size();
}

BinaryReader::~BinaryReader() { ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(zstd_dctx_)); }

absl::Status BinaryReader::Start() {
  FileHeader h{};
  const size_t n = source_->Read(&h, sizeof(h));
  bytes_consumed_ = n;
  if (n < sizeof(h)) {
    return absl::DataLossError(
        absl::StrFormat("file header truncated: %d of %d bytes present", n, sizeof(h)));
  }
  if (std::memcmp(h.magic, format::kMagic, sizeof(h.magic)) != 0) {
    return absl::InvalidArgumentError("not a cuclimb trace: bad magic");
  }
  if (h.format_major != format::kFormatMajor) {
    return absl::FailedPreconditionError(
        absl::StrFormat("trace format %d.%d is not readable by this cuclimb (reads %d.x)",
                        h.format_major, h.format_minor, format::kFormatMajor));
  }
  const uint32_t crc = format::Crc32c(0, &h, offsetof(FileHeader, header_crc));
  if (crc != h.header_crc) {
    return absl::DataLossError(absl::StrFormat(
        "file header at byte offset 0x0: checksum 0x%08x, expected 0x%08x", h.header_crc, crc));
  }
  if (h.header_bytes < sizeof(h) || h.header_bytes > 4096) {
    return absl::DataLossError(
        absl::StrFormat("file header at byte offset 0x0: header size %d is out of range [64, 4096]",
                        h.header_bytes));
  }
  // A later minor may extend the header: skip what this reader does not know.
  for (uint32_t left = h.header_bytes - sizeof(h); left > 0;) {
    char skip[256];
    const size_t k = source_->Read(skip, std::min<size_t>(left, sizeof(skip)));
    if (k == 0) return absl::DataLossError("file header truncated");
    left -= k;
    bytes_consumed_ += k;
  }
  header_.format_major = h.format_major;
  header_.format_minor = h.format_minor;
  header_.clock = static_cast<format::ClockId>(h.clock_id);
  header_.base_clock_ns = h.base_clock_ns;
  header_.base_realtime_ns = h.base_realtime_ns;
  header_.producer.assign(h.producer, strnlen(h.producer, sizeof(h.producer)));
  return absl::OkStatus();
}

bool BinaryReader::Stop(StopReason reason, uint64_t offset, std::string message) {
  status_.reason = reason;
  status_.offset = offset;
  status_.message = std::move(message);
  p_ = end_ = nullptr;
  return false;
}

uint64_t BinaryReader::RecordOffset() const {
  return chunk_offset_ + sizeof(ChunkHeader) +
         static_cast<uint64_t>(record_start_ - reinterpret_cast<const uint8_t*>(raw_.data()));
}

bool BinaryReader::CorruptRecord(const std::string& what) {
  // The offset is into the decompressed payload of the chunk; name both to be precise.
  return Stop(StopReason::kCorrupt, chunk_offset_,
              absl::StrFormat("chunk %d at byte offset 0x%x, record %d (payload offset %d): %s",
                              chunk_index_, chunk_offset_, record_index_,
                              record_start_ - reinterpret_cast<const uint8_t*>(raw_.data()), what));
}

bool BinaryReader::LoadChunk() {
  chunk_offset_ = bytes_consumed_;
  if (chunk_type_ == static_cast<uint8_t>(format::ChunkType::kTrailer)) {
    // Anything after the trailer is not ours; say so but keep the verdict "complete".
    char probe;
    const bool extra = source_->Read(&probe, 1) == 1;
    return Stop(StopReason::kComplete, chunk_offset_,
                extra ? absl::StrFormat("complete; ignored bytes after the trailer at byte offset 0x%x",
                                        chunk_offset_)
                      : "complete");
  }
  ChunkHeader h{};
  const size_t n = source_->Read(&h, sizeof(h));
  bytes_consumed_ += n;
  if (n == 0) {
    return Stop(StopReason::kNoTrailer, chunk_offset_,
                absl::StrFormat("no trailer: the file ends cleanly after %d chunks at byte offset "
                                "0x%x (the producer did not finish)",
                                chunk_index_, chunk_offset_));
  }
  if (n < sizeof(h)) {
    return Stop(StopReason::kTruncated, chunk_offset_,
                absl::StrFormat("truncated: file ends %d bytes into the header of chunk %d at byte "
                                "offset 0x%x",
                                n, chunk_index_, chunk_offset_));
  }
  auto corrupt = [&](const std::string& what) {
    return Stop(StopReason::kCorrupt, chunk_offset_,
                absl::StrFormat("chunk %d at byte offset 0x%x: %s", chunk_index_, chunk_offset_,
                                what));
  };
  if (h.magic != format::kChunkMagic) {
    return corrupt(absl::StrFormat("bad chunk magic 0x%08x (expected 0x%08x)", h.magic,
                                   format::kChunkMagic));
  }
  if (h.stored_bytes > format::kMaxChunkBytes || h.raw_bytes > format::kMaxChunkBytes) {
    return corrupt(absl::StrFormat("payload size %d/%d exceeds the %d-byte cap", h.stored_bytes,
                                   h.raw_bytes, format::kMaxChunkBytes));
  }
  // Read the payload before trusting the rest of the header: the checksum covers both, and a cut
  // file must read as truncated even when the partial header is garbage-free.
  stored_.resize(h.stored_bytes);
  const size_t got = source_->Read(stored_.data(), h.stored_bytes);
  bytes_consumed_ += got;
  if (got < h.stored_bytes) {
    return Stop(StopReason::kTruncated, chunk_offset_,
                absl::StrFormat("truncated: file ends inside chunk %d at byte offset 0x%x (%d of %d "
                                "payload bytes present)",
                                chunk_index_, chunk_offset_, got, h.stored_bytes));
  }
  uint32_t crc = format::Crc32c(0, &h, offsetof(ChunkHeader, crc));
  crc = format::Crc32c(crc, stored_.data(), stored_.size());
  if (crc != h.crc) {
    return corrupt(absl::StrFormat("checksum 0x%08x, expected 0x%08x", h.crc, crc));
  }
  if (h.type != static_cast<uint8_t>(format::ChunkType::kEvents) &&
      h.type != static_cast<uint8_t>(format::ChunkType::kTrailer)) {
    return corrupt(absl::StrFormat("unknown chunk type %d", h.type));
  }
  if (h.codec == static_cast<uint8_t>(format::Codec::kRaw)) {
    if (h.raw_bytes != h.stored_bytes) {
      return corrupt(absl::StrFormat("raw chunk with stored size %d != raw size %d",
                                     h.stored_bytes, h.raw_bytes));
    }
    raw_.swap(stored_);
  } else if (h.codec == static_cast<uint8_t>(format::Codec::kZstd)) {
    if (zstd_dctx_ == nullptr) zstd_dctx_ = ZSTD_createDCtx();
    raw_.resize(h.raw_bytes);
    const size_t out = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(zstd_dctx_), raw_.data(),
                                           raw_.size(), stored_.data(), stored_.size());
    if (ZSTD_isError(out) || out != h.raw_bytes) {
      return corrupt(ZSTD_isError(out)
                         ? absl::StrCat("zstd: ", ZSTD_getErrorName(out))
                         : absl::StrFormat("decompressed to %d bytes, header says %d", out,
                                           h.raw_bytes));
    }
  } else {
    return corrupt(absl::StrFormat("unknown codec %d", h.codec));
  }
  chunk_type_ = h.type;
  p_ = reinterpret_cast<const uint8_t*>(raw_.data());
  end_ = p_ + raw_.size();
  record_index_ = 0;
  state_.prev_ts = 0;
  std::memset(state_.prev, 0, sizeof(state_.prev));
  ++chunk_index_;
  status_.chunks = chunk_index_;
  return true;
}

bool BinaryReader::Next(Event* ev) {
  if (status_.reason != StopReason::kReading) return false;
  for (;;) {
    if (p_ == end_) {
      if (!LoadChunk()) return false;
      continue;
    }
    bool delivered = false;
    if (!DecodeRecord(ev, &delivered)) return false;
    if (delivered) return true;
  }
}

bool BinaryReader::DecodeRecord(Event* ev, bool* delivered) {
  record_start_ = p_;
  const uint8_t type = *p_;
  uint64_t len = 0;
  const uint8_t* body = format::GetVarint(p_ + 1, end_, &len);
  if (body == nullptr) return CorruptRecord("bad record length varint");
  if (len > static_cast<uint64_t>(end_ - body)) {
    return CorruptRecord(absl::StrFormat("record length %d runs past the payload end (%d left)",
                                         len, end_ - body));
  }
  const uint8_t* body_end = body + len;
  p_ = body_end;
  const bool trailer_chunk = chunk_type_ == static_cast<uint8_t>(format::ChunkType::kTrailer);
  bool ok = true;
  if (type == format::kDefString) {
    ok = DefineString(body, body_end);
  } else if (type == format::kDefStack) {
    ok = DefineStack(body, body_end);
  } else if (format::IsEventType(type)) {
    const bool is_trailer = type == static_cast<uint8_t>(EventType::kTrailer);
    if (is_trailer != trailer_chunk) {
      return CorruptRecord(is_trailer ? "trailer event outside the trailer chunk"
                                      : "non-trailer event in the trailer chunk");
    }
    state_.strings = strings_.size();
    state_.stacks = stacks_.size();
    ok = FastDecodeEvent(type, body, body_end, ev, &state_);
    if (!ok && DecodeEvent(type, body, body_end, ev)) {  // the slow path names the problem
      return CorruptRecord("fast and checked decoders disagree on this record");
    }
    if (ok && is_trailer) {
      trailer_ = *ev;
      if (ev->size != status_.events) {
        return CorruptRecord(absl::StrFormat("trailer counts %d events but %d were read: data "
                                             "is missing",
                                             ev->size, status_.events));
      }
    } else if (ok) {
      ++status_.events;
      *delivered = true;
    }
  } else {
    ++status_.skipped_records;  // a record type from a newer minor: skip by its length
  }
  ++record_index_;
  return ok;
}

bool BinaryReader::DefineString(const uint8_t* p, const uint8_t* end) {
  uint64_t id = 0;
  p = format::GetVarint(p, end, &id);
  if (p == nullptr) return CorruptRecord("bad string id varint");
  if (id != strings_.size()) {
    return CorruptRecord(absl::StrFormat("string id %d defined, expected %d", id, strings_.size()));
  }
  if (strings_.size() >= format::kMaxStrings) return CorruptRecord("too many strings");
  if (end - p > static_cast<ptrdiff_t>(format::kMaxStringBytes)) {
    return CorruptRecord(absl::StrFormat("string of %d bytes exceeds the %d-byte cap", end - p,
                                         format::kMaxStringBytes));
  }
  strings_.Define(std::string_view(reinterpret_cast<const char*>(p), end - p));
  return true;
}

bool BinaryReader::DefineStack(const uint8_t* p, const uint8_t* end) {
  uint64_t id = 0, count = 0;
  p = format::GetVarint(p, end, &id);
  if (p != nullptr) p = format::GetVarint(p, end, &count);
  if (p == nullptr) return CorruptRecord("bad stack header varints");
  if (id != stacks_.size()) {
    return CorruptRecord(absl::StrFormat("stack id %d defined, expected %d", id, stacks_.size()));
  }
  if (stacks_.size() >= format::kMaxStacks) return CorruptRecord("too many stacks");
  if (count > format::kMaxStackFrames) {
    return CorruptRecord(absl::StrFormat("stack of %d frames exceeds the cap of %d", count,
                                         format::kMaxStackFrames));
  }
  frame_scratch_.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    p = format::GetVarint(p, end, &frame_scratch_[i]);
    if (p == nullptr) return CorruptRecord(absl::StrFormat("stack frame %d truncated", i));
    if (format::IsStringFrame(frame_scratch_[i]) &&
        !strings_.Has(static_cast<uint32_t>(format::FrameValue(frame_scratch_[i])))) {
      return CorruptRecord(absl::StrFormat("stack frame %d names undefined string %d", i,
                                           format::FrameValue(frame_scratch_[i])));
    }
  }
  stacks_.Define(frame_scratch_);
  return true;
}

bool BinaryReader::DecodeEvent(uint8_t type, const uint8_t* p, const uint8_t* end, Event* ev) {
  const format::EventSpec& spec = format::kEventSchema[type];
  *ev = format::MakeEvent(static_cast<EventType>(type));
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    const FieldSpec& f = spec.fields[i];
    uint64_t v = 0;
    if (f.coding == Coding::kEnum) {
      if (p >= end) return CorruptRecord(absl::StrCat("field '", f.json, "' truncated"));
      v = *p++;
      const auto names = format::NamesOf(static_cast<format::EnumKind>(spec.enum_kind));
      if (v >= names.count) {
        return CorruptRecord(absl::StrFormat("field '%s' has unknown value %d", f.json, v));
      }
      format::SetSlot(ev, f.slot, v);
      continue;
    }
    p = format::GetVarint(p, end, &v);
    if (p == nullptr) return CorruptRecord(absl::StrCat("field '", f.json, "' truncated"));
    switch (f.coding) {
      case Coding::kTime:
        state_.prev_ts = static_cast<int64_t>(static_cast<uint64_t>(state_.prev_ts) +
                                              static_cast<uint64_t>(format::UnZigZag(v)));
        ev->ts = state_.prev_ts;
        break;
      case Coding::kUInt:
        format::SetSlot(ev, f.slot, v);
        break;
      case Coding::kSInt:
      case Coding::kDevice:
        format::SetSlot(ev, f.slot, static_cast<uint64_t>(format::UnZigZag(v)));
        break;
      case Coding::kHex:
      case Coding::kDelta: {
        uint64_t& prev = state_.prev[static_cast<int>(f.slot)];
        prev += static_cast<uint64_t>(format::UnZigZag(v));
        format::SetSlot(ev, f.slot, prev);
        break;
      }
      case Coding::kString:
        if (!strings_.Has(static_cast<uint32_t>(v)) || v > UINT32_MAX) {
          return CorruptRecord(absl::StrFormat("field '%s' names undefined string %d", f.json, v));
        }
        format::SetSlot(ev, f.slot, v);
        break;
      case Coding::kStack:
        if (!stacks_.Has(static_cast<uint32_t>(v)) || v > UINT32_MAX) {
          return CorruptRecord(absl::StrFormat("field '%s' names undefined stack %d", f.json, v));
        }
        format::SetSlot(ev, f.slot, v);
        break;
      case Coding::kDims: {
        uint32_t* d = format::DimsOf(ev, f.slot);
        d[0] = static_cast<uint32_t>(v);
        for (int k = 1; k < 3; ++k) {
          p = format::GetVarint(p, end, &v);
          if (p == nullptr) return CorruptRecord(absl::StrCat("field '", f.json, "' truncated"));
          d[k] = static_cast<uint32_t>(v);
        }
        break;
      }
      case Coding::kEnum:
        break;  // handled above
    }
  }
  return true;  // bytes left in the body are fields of a newer minor: ignored
}

}  // namespace cuclimb::trace
