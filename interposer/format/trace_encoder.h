// SPDX-License-Identifier: Apache-2.0
// Writes a producer's events as a trace: renumbers its string and stack ids into the file's dense
// ids (each defined once, before first use), encodes, seals chunks and writes the trailer.
//
// The one id-renumbering writer: the interposer's writer thread (ids from its interners) and
// `cuclimb convert` / the tests (ids from a reader's tables) both use it. Not thread-safe; never
// throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "chunk_encoder.h"
#include "trace_format.h"

namespace cuclimb::format {

// The producer's string and stack tables, by the producer's ids.
class SourceTables {
 public:
  virtual ~SourceTables() = default;
  virtual std::string_view String(uint32_t id) const = 0;
  // Replaces *frames with the frames of stack id (PcFrame/StringFrame words, string frames in
  // the producer's string ids), innermost first.
  virtual void Stack(uint32_t id, std::vector<uint64_t>* frames) const = 0;
};

class TraceEncoder {
 public:
  // Seals an events chunk whenever chunk_bytes are pending (before compression).
  TraceEncoder(int zstd_level, ChunkLayout layout, size_t chunk_bytes)
      : encoder_(zstd_level, layout), chunk_bytes_(chunk_bytes) {}

  // The file header for this encoder's layout.
  FileHeader Header(ClockId clock, int64_t base_clock_ns, int64_t base_realtime_ns,
                    std::string_view producer) const {
    return MakeFileHeader(clock, base_clock_ns, base_realtime_ns, producer, encoder_.layout());
  }

  // Renumbers and encodes ev; appends a sealed chunk to *out when one filled up. A string or
  // stack that cannot be defined (out of memory, over a cap) becomes "none" in the event and is
  // counted in definition_failures(). False when the event itself was not added.
  bool Add(const Event& ev, const SourceTables& tables, std::string* out);
  // Seals the pending events, if any, into *out. False on failure (nothing appended). Add()
  // seals a full chunk as SealPace::kEarly.
  bool SealEvents(std::string* out, SealPace pace = SealPace::kPaced);
  // Seals the pending events, then the trailer chunk (events added so far, `dropped`, `status`).
  bool Finish(int64_t ts, int64_t dropped, std::string_view status, std::string* out);

  // The file id of the producer's string id, defined now if it was not yet; 0 on failure.
  uint32_t FileString(uint32_t id, const SourceTables& tables);
  uint32_t FileStack(uint32_t id, const SourceTables& tables);

  uint64_t events() const { return events_; }
  uint64_t chunks() const { return chunks_; }
  uint64_t definition_failures() const { return definition_failures_; }
  uint64_t seal_failures() const { return seal_failures_; }  // automatic seals in Add()
  size_t pending_bytes() const { return encoder_.pending_bytes(); }

 private:
  ChunkEncoder encoder_;
  size_t chunk_bytes_;
  std::vector<uint32_t> string_ids_;  // producer id → file id (0 = not defined yet)
  std::vector<uint32_t> stack_ids_;
  std::vector<uint64_t> frames_;
  uint32_t next_string_ = 1;
  uint32_t next_stack_ = 1;
  uint64_t events_ = 0;
  uint64_t chunks_ = 0;
  uint64_t definition_failures_ = 0;
  uint64_t seal_failures_ = 0;
};

}  // namespace cuclimb::format
