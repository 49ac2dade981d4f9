// SPDX-License-Identifier: Apache-2.0
// Writes events read from any trace (or built by tests) as a binary trace.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "interposer/format/trace_encoder.h"
#include "trace/reader.h"

namespace cuclimb::trace {

// A reader's tables as the encoder's source tables.
class ReaderTables : public format::SourceTables {
 public:
  ReaderTables(const StringTable* strings, const StackTable* stacks)
      : strings_(strings), stacks_(stacks) {}
  std::string_view String(uint32_t id) const override { return strings_->Get(id); }
  void Stack(uint32_t id, std::vector<uint64_t>* frames) const override {
    const absl::Span<const uint64_t> s = stacks_->Get(id);
    frames->assign(s.begin(), s.end());
  }

 private:
  const StringTable* strings_;
  const StackTable* stacks_;
};

class BinaryTraceWriter {
 public:
  // Receives the encoded bytes in order; an error stops the writer.
  using Sink = std::function<absl::Status(std::string_view)>;

  // layout kRows writes format 1.0 (tests of the old layout); the default is the current one.
  BinaryTraceWriter(const TraceHeader& header, Sink sink,
                    int zstd_level = format::kDefaultZstdLevel, size_t chunk_bytes = 1u << 20,
                    format::ChunkLayout layout = format::ChunkLayout::kColumnsV2);

  // Adds ev, whose string and stack ids refer to `strings` and `stacks` (the same tables for
  // every call). Definitions are written before first use; ids are renumbered densely. A string
  // or stack the format cannot hold (over a cap) is an error: nothing is cut.
  absl::Status Add(const Event& ev, const StringTable& strings, const StackTable& stacks);
  // Seals the last chunk and writes the trailer (events written, `dropped`, `status`).
  absl::Status Finish(int64_t trailer_ts, int64_t dropped, std::string_view status);
  // Seals the last chunk without a trailer, as a killed producer would leave the file.
  absl::Status FinishWithoutTrailer();

  uint64_t events_written() const { return encoder_.events(); }

 private:
  absl::Status CheckDefinitions(const Event& ev, const StringTable& strings,
                                const StackTable& stacks) const;
  absl::Status Write();

  Sink sink_;
  format::TraceEncoder encoder_;
  std::string out_;
};

// Convenience: a sink appending to a string.
BinaryTraceWriter::Sink StringSink(std::string* out);

}  // namespace cuclimb::trace
