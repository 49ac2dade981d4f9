// SPDX-License-Identifier: Apache-2.0
// Binary trace writing for convert and tests, on the format library's TraceEncoder.
#include "trace/binary_writer.h"

#include "absl/strings/str_format.h"
#include "interposer/format/event_fields.h"

namespace cuclimb::trace {

BinaryTraceWriter::Sink StringSink(std::string* out) {
  return [out](std::string_view bytes) {
    out->append(bytes);
    return absl::OkStatus();
  };
}

BinaryTraceWriter::BinaryTraceWriter(const TraceHeader& header, Sink sink, int zstd_level,
                                     size_t chunk_bytes, format::ChunkLayout layout)
    : sink_(std::move(sink)), encoder_(zstd_level, layout, chunk_bytes) {
  const format::FileHeader h =
      encoder_.Header(header.clock, header.base_clock_ns, header.base_realtime_ns, header.producer);
  out_.assign(reinterpret_cast<const char*>(&h), sizeof(h));
}

absl::Status BinaryTraceWriter::Write() {
  if (out_.empty())
    return absl::OkStatus();
  absl::Status s = sink_(out_);
  out_.clear();
  return s;
}

absl::Status BinaryTraceWriter::CheckDefinitions(const Event& ev, const StringTable& strings,
                                                 const StackTable& stacks) const {
  const format::EventSpec& spec = format::SpecOf(ev.type);
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    const format::FieldSpec& f = spec.fields[i];
    const auto id = static_cast<uint32_t>(format::GetSlot(ev, f.slot));
    if (f.coding == format::Coding::kString && strings.Get(id).size() > format::kMaxStringBytes) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "field '%s' of a %s event holds a string of %d bytes; the trace format holds at most %d",
          f.json, spec.json, strings.Get(id).size(), format::kMaxStringBytes));
    }
    if (f.coding == format::Coding::kStack && stacks.Get(id).size() > format::kMaxStackFrames) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "field '%s' of a %s event holds a stack of %d frames; the trace format holds at most %d",
          f.json, spec.json, stacks.Get(id).size(), format::kMaxStackFrames));
    }
  }
  return absl::OkStatus();
}

absl::Status BinaryTraceWriter::Add(const Event& ev, const StringTable& strings,
                                    const StackTable& stacks) {
  if (!format::IsEventType(static_cast<uint8_t>(ev.type))) {
    return absl::InvalidArgumentError("event of unknown type");
  }
  const uint64_t failures = encoder_.definition_failures();
  const ReaderTables tables(&strings, &stacks);
  if (!encoder_.Add(ev, tables, &out_) || encoder_.definition_failures() != failures) {
    if (absl::Status s = CheckDefinitions(ev, strings, stacks); !s.ok())
      return s;
    return absl::ResourceExhaustedError(
        "the trace encoder could not add an event: out of memory, or more strings or stacks "
        "than a trace holds");
  }
  if (encoder_.seal_failures() > 0)
    return absl::InternalError("chunk compression failed");
  return Write();
}

absl::Status BinaryTraceWriter::Finish(int64_t trailer_ts, int64_t dropped,
                                       std::string_view status) {
  if (!encoder_.Finish(trailer_ts, dropped, status, &out_) || encoder_.definition_failures() > 0) {
    return absl::InternalError("the trailer could not be written");
  }
  return Write();
}

absl::Status BinaryTraceWriter::FinishWithoutTrailer() {
  if (!encoder_.SealEvents(&out_))
    return absl::InternalError("chunk compression failed");
  return Write();
}

}  // namespace cuclimb::trace
