// SPDX-License-Identifier: Apache-2.0
// Reader of the binary trace form: the only code in the analyzer that sees wire structs.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "trace/event_decoder.h"
#include "trace/reader.h"

namespace cuclimb::trace {

class BinaryReader : public TraceReader {
 public:
  explicit BinaryReader(std::unique_ptr<ByteSource> source);
  ~BinaryReader() override;

  // Reads and validates the file header; must succeed before Next().
  absl::Status Start();
  bool Next(Event* ev) override;

 private:
  bool LoadChunk();
  // Decodes the record at p_. Returns false on damage (status set). *delivered says whether
  // *ev now holds an event for the caller.
  bool DecodeRecord(Event* ev, bool* delivered);
  bool DecodeEvent(uint8_t type, const uint8_t* p, const uint8_t* end, Event* ev);
  bool DefineString(const uint8_t* p, const uint8_t* end);
  bool DefineStack(const uint8_t* p, const uint8_t* end);
  bool Stop(StopReason reason, uint64_t offset, std::string message);
  bool CorruptRecord(const std::string& what);
  uint64_t RecordOffset() const;

  std::unique_ptr<ByteSource> source_;
  std::string stored_;
  std::string raw_;
  std::vector<uint64_t> frame_scratch_;
  void* zstd_dctx_ = nullptr;
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  const uint8_t* record_start_ = nullptr;
  uint64_t chunk_offset_ = 0;  // file offset of the current chunk's header
  uint64_t chunk_index_ = 0;
  uint64_t record_index_ = 0;  // within the current chunk
  uint8_t chunk_type_ = 0;
  DecodeState state_;
};

}  // namespace cuclimb::trace
