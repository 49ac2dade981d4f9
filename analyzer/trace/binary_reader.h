// SPDX-License-Identifier: Apache-2.0
// Reader of the binary trace form: file I/O around the format library's chunk decoder (the only
// code in the analyzer that sees wire structs).
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "interposer/format/chunk_decoder.h"
#include "trace/reader.h"

namespace cuclimb::trace {

class BinaryReader : public TraceReader, private format::DefinitionTables {
 public:
  explicit BinaryReader(std::unique_ptr<ByteSource> source);
  ~BinaryReader() override;

  // Reads and validates the file header; must succeed before Next().
  absl::Status Start();
  bool Next(Event* ev) override;
  size_t Read(Event* out, size_t max) override;

 private:
  // Reads, checks and starts the next chunk; false at the end or on damage (status set).
  bool LoadChunk();
  bool ReadTrailer();
  bool Stop(StopReason reason, uint64_t offset, std::string message);

  // format::DefinitionTables over strings_ and stacks_.
  uint32_t string_count() const override { return static_cast<uint32_t>(strings_.size()); }
  uint32_t stack_count() const override { return static_cast<uint32_t>(stacks_.size()); }
  uint64_t string_bytes() const override { return strings_.bytes(); }
  uint64_t stack_frames() const override { return stacks_.frames(); }
  void AddString(std::string_view bytes) override { strings_.Define(bytes); }
  void AddStack(const uint64_t* frames, size_t count) override {
    stacks_.Define(absl::MakeConstSpan(frames, count));
  }

  std::unique_ptr<ByteSource> source_;
  format::UnpackedChunk chunk_;
  format::Unpacker unpacker_;
  format::ChunkDecoder decoder_;
  bool sequenced_ = false;    // format ≥ 1.1: chunks carry sequence numbers
  bool in_chunk_ = false;     // decoder_ holds a chunk with events left
  uint64_t chunk_index_ = 0;  // of the next chunk to load
};

}  // namespace cuclimb::trace
