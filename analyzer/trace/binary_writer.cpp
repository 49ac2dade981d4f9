// SPDX-License-Identifier: Apache-2.0
// Binary trace writing for convert and tests: id renumbering, chunking, trailer.
#include "trace/binary_writer.h"

#include "interposer/format/event_fields.h"

namespace cuclimb::trace {

using format::Coding;

BinaryTraceWriter::Sink StringSink(std::string* out) {
  return [out](std::string_view bytes) {
    out->append(bytes);
    return absl::OkStatus();
  };
}

BinaryTraceWriter::BinaryTraceWriter(const TraceHeader& header, Sink sink, int zstd_level,
                                     size_t chunk_bytes)
    : sink_(std::move(sink)), encoder_(zstd_level), chunk_bytes_(chunk_bytes) {
  const format::FileHeader h = format::MakeFileHeader(header.clock, header.base_clock_ns,
                                                      header.base_realtime_ns, header.producer);
  out_.assign(reinterpret_cast<const char*>(&h), sizeof(h));
}

uint32_t BinaryTraceWriter::MapString(uint32_t id, const StringTable& strings) {
  if (id == 0) return 0;
  if (id >= string_map_.size()) string_map_.resize(id + 1, 0);
  if (string_map_[id] == 0) {
    string_map_[id] = next_string_;
    encoder_failed_ |= !encoder_.DefineString(next_string_++, strings.Get(id));
  }
  return string_map_[id];
}

uint32_t BinaryTraceWriter::MapStack(uint32_t id, const StringTable& strings,
                                     const StackTable& stacks) {
  if (id == 0) return 0;
  if (id >= stack_map_.size()) stack_map_.resize(id + 1, 0);
  if (stack_map_[id] == 0) {
    frames_.clear();
    for (uint64_t frame : stacks.Get(id)) {
      frames_.push_back(format::IsStringFrame(frame)
                            ? format::StringFrame(MapString(
                                  static_cast<uint32_t>(format::FrameValue(frame)), strings))
                            : frame);
    }
    stack_map_[id] = next_stack_;
    encoder_failed_ |= !encoder_.DefineStack(next_stack_++, frames_.data(), frames_.size());
  }
  return stack_map_[id];
}

absl::Status BinaryTraceWriter::SealChunk(format::ChunkType type) {
  if (encoder_failed_) return absl::ResourceExhaustedError("trace encoder ran out of memory");
  if (encoder_.pending_records() > 0 && !encoder_.Seal(type, &out_)) {
    return absl::InternalError("chunk compression failed");
  }
  absl::Status s = sink_(out_);
  out_.clear();
  return s;
}

absl::Status BinaryTraceWriter::Add(const Event& ev, const StringTable& strings,
                                    const StackTable& stacks) {
  Event mapped = ev;
  const format::EventSpec& spec = format::SpecOf(ev.type);
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    const format::FieldSpec& f = spec.fields[i];
    if (f.coding == Coding::kString) {
      format::SetSlot(&mapped, f.slot,
                      MapString(static_cast<uint32_t>(format::GetSlot(ev, f.slot)), strings));
    } else if (f.coding == Coding::kStack) {
      format::SetSlot(&mapped, f.slot,
                      MapStack(static_cast<uint32_t>(format::GetSlot(ev, f.slot)), strings, stacks));
    }
  }
  if (!encoder_.Add(mapped)) return absl::InvalidArgumentError("event of unknown type");
  ++events_;
  if (encoder_.pending_bytes() >= chunk_bytes_) return SealChunk(format::ChunkType::kEvents);
  return absl::OkStatus();
}

absl::Status BinaryTraceWriter::Finish(int64_t trailer_ts, int64_t dropped,
                                       std::string_view status) {
  if (absl::Status s = SealChunk(format::ChunkType::kEvents); !s.ok()) return s;
  Event trailer = format::MakeEvent(format::EventType::kTrailer);
  trailer.ts = trailer_ts;
  trailer.size = events_;
  trailer.value = dropped;
  if (!status.empty()) {
    trailer.text = next_string_++;
    encoder_failed_ |= !encoder_.DefineString(trailer.text, status);
  }
  encoder_.Add(trailer);
  return SealChunk(format::ChunkType::kTrailer);
}

absl::Status BinaryTraceWriter::FinishWithoutTrailer() {
  return SealChunk(format::ChunkType::kEvents);
}

}  // namespace cuclimb::trace
