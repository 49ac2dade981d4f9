// SPDX-License-Identifier: Apache-2.0
// Binary trace reading: the file header, chunk I/O and the stop reasons; the format library's
// Unpacker and ChunkDecoder do the checking and decoding.
#include "trace/binary_reader.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "interposer/format/crc32c.h"
#include "interposer/format/event_accessors.h"

namespace cuclimb::trace {

using format::ChunkHeader;
using format::FileHeader;

BinaryReader::BinaryReader(std::unique_ptr<ByteSource> source) : source_(std::move(source)) {
  header_.form = TraceForm::kBinary;
  total_bytes_ = source_->size();
}

BinaryReader::~BinaryReader() = default;

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
    if (k == 0)
      return absl::DataLossError("file header truncated");
    left -= k;
    bytes_consumed_ += k;
  }
  header_.format_major = h.format_major;
  header_.format_minor = h.format_minor;
  header_.clock = static_cast<format::ClockId>(h.clock_id);
  header_.base_clock_ns = h.base_clock_ns;
  header_.base_realtime_ns = h.base_realtime_ns;
  header_.producer.assign(h.producer, strnlen(h.producer, sizeof(h.producer)));
  sequenced_ = h.format_minor >= format::kSequencedMinor;
  return absl::OkStatus();
}

bool BinaryReader::Stop(StopReason reason, uint64_t offset, std::string message) {
  status_.reason = reason;
  status_.offset = offset;
  status_.message = std::move(message);
  in_chunk_ = false;
  return false;
}

bool BinaryReader::LoadChunk() {
  const uint64_t offset = bytes_consumed_;
  if (chunk_.header.type == static_cast<uint8_t>(format::ChunkType::kTrailer) && chunk_index_ > 0) {
    // Anything after the trailer is not ours; say so but keep the verdict "complete".
    char probe;
    const bool extra = source_->Read(&probe, 1) == 1;
    return Stop(StopReason::kComplete, offset,
                extra ? absl::StrFormat("complete; ignored bytes after the trailer at byte offset "
                                        "0x%x",
                                        offset)
                      : "complete");
  }
  ChunkHeader& h = chunk_.header;
  const size_t n = source_->Read(&h, sizeof(h));
  bytes_consumed_ += n;
  if (n == 0) {
    return Stop(StopReason::kNoTrailer, offset,
                absl::StrFormat("no trailer: the file ends cleanly after %d chunks at byte offset "
                                "0x%x (the producer did not finish)",
                                chunk_index_, offset));
  }
  if (n < sizeof(h)) {
    return Stop(StopReason::kTruncated, offset,
                absl::StrFormat("truncated: file ends %d bytes into the header of chunk %d at byte "
                                "offset 0x%x",
                                n, chunk_index_, offset));
  }
  if (std::string what = format::CheckChunkHeader(h); !what.empty()) {
    return Stop(StopReason::kCorrupt, offset,
                absl::StrFormat("chunk %d at byte offset 0x%x: %s", chunk_index_, offset, what));
  }
  // Read the payload before trusting the rest of the header: the checksum covers both, and a cut
  // file must read as truncated even when the partial header is garbage-free.
  chunk_.stored.resize(h.stored_bytes);
  const size_t got = source_->Read(chunk_.stored.data(), h.stored_bytes);
  bytes_consumed_ += got;
  if (got < h.stored_bytes) {
    return Stop(
        StopReason::kTruncated, offset,
        absl::StrFormat("truncated: file ends inside chunk %d at byte offset 0x%x (%d of %d "
                        "payload bytes present)",
                        chunk_index_, offset, got, h.stored_bytes));
  }
  chunk_.place = {chunk_index_, offset};
  chunk_.sequenced = sequenced_;
  if (!unpacker_.Unpack(&chunk_) || !decoder_.Start(&chunk_, this)) {
    return Stop(StopReason::kCorrupt, offset,
                chunk_.error.empty() ? decoder_.error() : chunk_.error);
  }
  ++chunk_index_;
  status_.chunks = chunk_index_;
  in_chunk_ = true;
  return true;
}

bool BinaryReader::ReadTrailer() {
  Event ev{};
  const size_t n = decoder_.Decode(&ev, 1, this);
  if (n == 1) {
    trailer_ = ev;
    if (format::TrailerEvents(ev) != status_.events) {
      return Stop(
          StopReason::kCorrupt, chunk_.place.offset,
          absl::StrFormat("chunk %d at byte offset 0x%x: trailer counts %d events but %d "
                          "were read: data is missing",
                          chunk_.place.index, chunk_.place.offset, ev.size, status_.events));
    }
    if (decoder_.Decode(&ev, 1, this) == 1) {
      return Stop(StopReason::kCorrupt, chunk_.place.offset,
                  absl::StrFormat("chunk %d at byte offset 0x%x: two trailer events",
                                  chunk_.place.index, chunk_.place.offset));
    }
  }
  if (decoder_.failed())
    return Stop(StopReason::kCorrupt, chunk_.place.offset, decoder_.error());
  in_chunk_ = false;
  return true;
}

size_t BinaryReader::Read(Event* out, size_t max) {
  while (status_.reason == StopReason::kReading) {
    if (!in_chunk_) {
      if (!LoadChunk())
        break;
      continue;
    }
    if (chunk_.header.type == static_cast<uint8_t>(format::ChunkType::kTrailer)) {
      if (!ReadTrailer())
        break;
      continue;
    }
    const size_t n = decoder_.Decode(out, max, this);
    status_.skipped_records = decoder_.skipped_records();
    if (decoder_.failed()) {
      Stop(StopReason::kCorrupt, chunk_.place.offset, decoder_.error());
    } else if (n < max) {
      in_chunk_ = false;  // the chunk is done
    }
    status_.events += n;
    if (n > 0)
      return n;
  }
  return 0;
}

bool BinaryReader::Next(Event* ev) {
  return Read(ev, 1) == 1;
}

}  // namespace cuclimb::trace
