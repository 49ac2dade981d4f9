// SPDX-License-Identifier: Apache-2.0
// Writes events read from any trace (or built by tests) as a binary trace.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "interposer/format/chunk_encoder.h"
#include "trace/reader.h"

namespace cuclimb::trace {

class BinaryTraceWriter {
 public:
  // Receives the encoded bytes in order; an error stops the writer.
  using Sink = std::function<absl::Status(std::string_view)>;

  BinaryTraceWriter(const TraceHeader& header, Sink sink, int zstd_level = 3,
                    size_t chunk_bytes = 1u << 20);

  // Adds ev, whose string and stack ids refer to `strings` and `stacks` (the same tables for
  // every call). Definitions are written before first use; ids are renumbered densely.
  absl::Status Add(const Event& ev, const StringTable& strings, const StackTable& stacks);
  // Seals the last chunk and writes the trailer (events written, `dropped`, `status`).
  absl::Status Finish(int64_t trailer_ts, int64_t dropped, std::string_view status);
  // Seals the last chunk without a trailer, as a killed producer would leave the file.
  absl::Status FinishWithoutTrailer();

  uint64_t events_written() const { return events_; }

 private:
  uint32_t MapString(uint32_t id, const StringTable& strings);
  uint32_t MapStack(uint32_t id, const StringTable& strings, const StackTable& stacks);
  absl::Status SealChunk(format::ChunkType type);

  Sink sink_;
  format::ChunkEncoder encoder_;
  size_t chunk_bytes_;
  std::string out_;
  std::vector<uint32_t> string_map_;  // input id → output id (0 = not yet written)
  std::vector<uint32_t> stack_map_;
  std::vector<uint64_t> frames_;
  uint32_t next_string_ = 1;
  uint32_t next_stack_ = 1;
  uint64_t events_ = 0;
  bool encoder_failed_ = false;
};

// Convenience: a sink appending to a string.
BinaryTraceWriter::Sink StringSink(std::string* out);

}  // namespace cuclimb::trace
