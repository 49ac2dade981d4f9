// SPDX-License-Identifier: Apache-2.0
// Encodes events and string/stack definitions into framed, checksummed, compressed chunks.
//
// Used by the interposer's writer thread and by `cuclimb convert`. Not thread-safe. Never throws:
// allocation failures are reported through the return values (the interposer must survive them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "trace_format.h"

namespace cuclimb::format {

// Builds the 64-byte file header, producer truncated to 19 bytes.
FileHeader MakeFileHeader(ClockId clock, int64_t base_clock_ns, int64_t base_realtime_ns,
                          std::string_view producer);

class ChunkEncoder {
 public:
  // zstd_level 0 stores payloads raw (tests, debugging); otherwise a zstd level (1..19).
  explicit ChunkEncoder(int zstd_level = 3);
  ~ChunkEncoder();
  ChunkEncoder(const ChunkEncoder&) = delete;
  ChunkEncoder& operator=(const ChunkEncoder&) = delete;

  // Each returns false when memory ran out; the record is then not added.
  bool DefineString(uint32_t id, std::string_view bytes);
  // frames: words made by PcFrame()/StringFrame(), innermost first; at most kMaxStackFrames.
  bool DefineStack(uint32_t id, const uint64_t* frames, size_t count);
  bool Add(const Event& ev);

  size_t pending_bytes() const { return raw_.size(); }
  uint32_t pending_records() const { return records_; }

  // Frames the pending records as one chunk and appends it to *out; resets delta state.
  // Returns false on allocation or compression failure (pending records are kept).
  bool Seal(ChunkType type, std::string* out);

 private:
  bool AppendRecord(uint8_t type, const uint8_t* body, size_t body_size);

  int zstd_level_;
  void* zstd_ctx_ = nullptr;  // ZSTD_CCtx*, created lazily
  std::string raw_;
  std::string compressed_;
  uint32_t records_ = 0;
  int64_t prev_ts_ = 0;
  uint64_t prev_[16] = {};  // delta state per Slot (kHex / kDelta codings)
};

}  // namespace cuclimb::format
