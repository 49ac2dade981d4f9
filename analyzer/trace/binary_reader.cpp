// SPDX-License-Identifier: Apache-2.0
// Binary trace reading: the file header, chunk I/O and the stop reasons; the format library's
// Unpacker and ChunkDecoder do the checking and decoding.
#include "trace/binary_reader.h"

#include <algorithm>
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

BinaryReader::~BinaryReader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : workers_) t.join();
}

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

std::unique_ptr<BinaryReader::Slot> BinaryReader::Frame() {
  auto slot = std::make_unique<Slot>();
  const uint64_t offset = bytes_consumed_;
  const uint64_t index = framed_;
  auto stop = [&](StopReason reason, std::string message) {
    slot->stop = reason;
    slot->offset = offset;
    slot->message = std::move(message);
    framing_done_ = true;
    return std::move(slot);
  };
  if (spare_.empty()) {
    slot->chunk = std::make_unique<format::UnpackedChunk>();
  } else {
    slot->chunk = std::move(spare_.back());
    spare_.pop_back();
  }
  format::UnpackedChunk& c = *slot->chunk;
  ChunkHeader& h = c.header;
  const size_t n = source_->Read(&h, sizeof(h));
  bytes_consumed_ += n;
  if (n == 0) {
    return stop(StopReason::kNoTrailer,
                absl::StrFormat("no trailer: the file ends cleanly after %d chunks at byte offset "
                                "0x%x (the producer did not finish)",
                                index, offset));
  }
  if (n < sizeof(h)) {
    return stop(StopReason::kTruncated,
                absl::StrFormat("truncated: file ends %d bytes into the header of chunk %d at byte "
                                "offset 0x%x",
                                n, index, offset));
  }
  if (std::string what = format::CheckChunkHeader(h); !what.empty()) {
    return stop(StopReason::kCorrupt,
                absl::StrFormat("chunk %d at byte offset 0x%x: %s", index, offset, what));
  }
  // Read the payload before trusting the rest of the header: the checksum covers both, and a cut
  // file must read as truncated even when the partial header is garbage-free.
  c.stored.resize(h.stored_bytes);
  const size_t got = source_->Read(c.stored.data(), h.stored_bytes);
  bytes_consumed_ += got;
  if (got < h.stored_bytes) {
    return stop(
        StopReason::kTruncated,
        absl::StrFormat("truncated: file ends inside chunk %d at byte offset 0x%x (%d of %d "
                        "payload bytes present)",
                        index, offset, got, h.stored_bytes));
  }
  c.place = {index, offset};
  c.sequenced = sequenced_;
  slot->data = &c;
  ++framed_;
  // Nothing after the trailer is read ahead: LoadChunk() looks there itself.
  if (h.type == static_cast<uint8_t>(format::ChunkType::kTrailer))
    framing_done_ = true;
  return slot;
}

std::unique_ptr<BinaryReader::Slot> BinaryReader::NextSlot() {
  if (workers_.empty()) {
    std::unique_ptr<Slot> slot = Frame();
    if (slot->stop == StopReason::kReading) {
      slot->ok = unpacker_.Unpack(slot->chunk.get());
      slot->unpacked = true;
    }
    return slot;
  }
  // Frame ahead (I/O stays on this thread; only unpacking is handed out), then wait for the
  // oldest chunk.
  while (!framing_done_ && inflight_.size() < depth_) {
    std::unique_ptr<Slot> slot = Frame();
    Slot* raw = slot.get();
    std::lock_guard<std::mutex> lock(mutex_);
    if (raw->stop == StopReason::kReading) {
      working_.push_back(raw);
      work_ready_.notify_one();
    } else {
      raw->unpacked = true;
    }
    inflight_.push_back(std::move(slot));
  }
  std::unique_lock<std::mutex> lock(mutex_);
  Slot* front = inflight_.front().get();
  while (!front->unpacked) {
    if (!Help(lock))
      work_done_.wait(lock, [front] { return front->unpacked; });
  }
  std::unique_ptr<Slot> slot = std::move(inflight_.front());
  inflight_.pop_front();
  return slot;
}

bool BinaryReader::LoadChunk() {
  if (after_trailer_) {
    // Anything after the trailer is not ours; say so but keep the verdict "complete".
    const uint64_t offset = bytes_consumed_;
    char probe;
    const bool extra = source_->Read(&probe, 1) == 1;
    return Stop(StopReason::kComplete, offset,
                extra ? absl::StrFormat("complete; ignored bytes after the trailer at byte offset "
                                        "0x%x",
                                        offset)
                      : "complete");
  }
  std::unique_ptr<Slot> next = NextSlot();
  Retire();  // before its chunk is reused
  current_ = std::move(next);
  Slot* slot = current_.get();
  if (slot->chunk != nullptr) {
    if (chunk_ != nullptr)
      spare_.push_back(std::move(chunk_));
    chunk_ = std::move(slot->chunk);
  }
  if (slot->stop != StopReason::kReading)
    return Stop(slot->stop, slot->offset, slot->message);
  if (!slot->ok)
    return Stop(StopReason::kCorrupt, chunk_->place.offset, chunk_->error);
  // A column chunk's definitions, all applied here in file order; a prefetch worker may be
  // decoding its events meanwhile (the chunk is only read on both sides).
  if (!decoder_.Start(chunk_.get(), this)) {
    return Stop(StopReason::kCorrupt, chunk_->place.offset, decoder_.error());
  }
  ahead_ = slot->ahead ? slot : nullptr;  // set by the worker that unpacked it, before `unpacked`
  taken_ = 0;
  taken_skipped_ = 0;
  ++chunk_index_;
  status_.chunks = chunk_index_;
  after_trailer_ = chunk_->header.type == static_cast<uint8_t>(format::ChunkType::kTrailer);
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
          StopReason::kCorrupt, chunk_->place.offset,
          absl::StrFormat("chunk %d at byte offset 0x%x: trailer counts %d events but %d "
                          "were read: data is missing",
                          chunk_->place.index, chunk_->place.offset, ev.size, status_.events));
    }
    if (decoder_.Decode(&ev, 1, this) == 1) {
      return Stop(StopReason::kCorrupt, chunk_->place.offset,
                  absl::StrFormat("chunk %d at byte offset 0x%x: two trailer events",
                                  chunk_->place.index, chunk_->place.offset));
    }
  }
  if (decoder_.failed())
    return Stop(StopReason::kCorrupt, chunk_->place.offset, decoder_.error());
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
    if (ahead_ != nullptr || partial_ != nullptr) {
      // Events decoded ahead: copied out of their batch.
      if (partial_ == nullptr) {
        partial_ = NextAhead();
        partial_at_ = 0;
        if (partial_ == nullptr)
          continue;
      }
      const size_t n = std::min(max, partial_->size - partial_at_);
      std::memcpy(static_cast<void*>(out), partial_->events + partial_at_, n * sizeof(Event));
      partial_at_ += n;
      if (partial_at_ == partial_->size) {
        batches_.GiveBack(partial_);
        partial_ = nullptr;
      }
      status_.events += n;
      return n;
    }
    if (after_trailer_) {
      if (!ReadTrailer())
        break;
      continue;
    }
    const size_t n = decoder_.Decode(out, max, this);
    status_.skipped_records = decoder_.skipped_records() + skipped_ahead_;
    if (decoder_.failed()) {
      Stop(StopReason::kCorrupt, chunk_->place.offset, decoder_.error());
    } else if (n < max) {
      in_chunk_ = false;  // the chunk is done
    }
    status_.events += n;
    if (n > 0)
      return n;
  }
  return 0;
}

EventBatch* BinaryReader::TakeBatch() {
  if (workers_.empty())
    return nullptr;  // nothing is decoded ahead
  while (status_.reason == StopReason::kReading && partial_ == nullptr) {
    if (!in_chunk_) {
      if (!LoadChunk())
        break;
      continue;
    }
    if (ahead_ == nullptr)
      break;  // Read() decodes these events
    if (EventBatch* batch = NextAhead()) {
      status_.events += batch->size;
      return batch;
    }
  }
  return nullptr;
}

bool BinaryReader::Next(Event* ev) {
  return Read(ev, 1) == 1;
}

}  // namespace cuclimb::trace
