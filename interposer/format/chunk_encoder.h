// SPDX-License-Identifier: Apache-2.0
// Encodes events and string/stack definitions into framed, checksummed, compressed chunks.
//
// Used (through TraceEncoder) by the interposer's writer thread and by `cuclimb convert`. Not
// thread-safe. Never throws: allocation failures are reported through the return values (the
// interposer must survive them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "address_history.h"
#include "column_layout.h"
#include "trace_format.h"

namespace cuclimb::format {

// How event chunks are laid out: kRows is format 1.0 (records, ChunkType::kEvents), kColumns is
// format 1.1 (column_layout.h, ChunkType::kColumns), kColumnsV2 format 1.2 (the same with an
// address history, address_history.h). Readers read all three; writers write kColumnsV2 unless a
// test or a benchmark asks for an older layout.
enum class ChunkLayout : uint8_t { kRows, kColumns, kColumnsV2 };

// Builds the 64-byte file header, producer truncated to 19 bytes. The minor version follows the
// layout: 0 for kRows, 1 for kColumns, 2 (kFormatMinor) for kColumnsV2.
FileHeader MakeFileHeader(ClockId clock, int64_t base_clock_ns, int64_t base_realtime_ns,
                          std::string_view producer, ChunkLayout layout = ChunkLayout::kColumnsV2);

// The zstd level of `cuclimb convert` and of the recorder's large chunks. On real recordings
// level 5 takes 2 % fewer bytes than 3 for 15 % more encoding time; at the highest event rates
// seen, levels above 6 cost more than they save (docs/performance.md).
inline constexpr int kDefaultZstdLevel = 5;
// The recorder's level: chosen per chunk. Chunks sealed SealPace::kPaced with at most
// kSmallChunkEvents records (events and definitions), i.e. written at low event rates, are
// compressed at kSmallChunkZstdLevel (4 % smaller on a PyTorch recording, a few % of a core at
// most), all others at kDefaultZstdLevel (ChunkEncoder::LevelFor).
inline constexpr int kAutoZstdLevel = -1;
// Why a chunk is sealed. kPaced: its time is up (the recorder seals every second), so small
// chunks come at most once a second and kAutoZstdLevel may spend more on them. kEarly: it filled
// up, or a flush came before its second (a burst of them drains CUPTI's buffers at exit): the
// default level, so that the writer's CPU per event stays what it is for large chunks.
enum class SealPace : uint8_t { kPaced, kEarly };
inline constexpr uint32_t kSmallChunkEvents = 32768;
inline constexpr int kSmallChunkZstdLevel = 15;
// The level at which the encoder tries out which byte planes share a compressed block.
inline constexpr int kTrialZstdLevel = 3;

class ChunkEncoder {
 public:
  // zstd_level 0 stores payloads raw (tests, debugging), kAutoZstdLevel picks one per chunk;
  // otherwise a zstd level (1..19).
  explicit ChunkEncoder(int zstd_level = kDefaultZstdLevel,
                        ChunkLayout layout = ChunkLayout::kColumnsV2);
  ~ChunkEncoder();
  ChunkEncoder(const ChunkEncoder&) = delete;
  ChunkEncoder& operator=(const ChunkEncoder&) = delete;

  // Each returns false, adding nothing, when memory ran out or the definition exceeds a cap
  // (bytes longer than kMaxStringBytes, more than kMaxStackFrames frames): nothing is ever cut.
  bool DefineString(uint32_t id, std::string_view bytes);
  // frames: words made by PcFrame()/StringFrame(), innermost first.
  bool DefineStack(uint32_t id, const uint64_t* frames, size_t count);
  // The event's string and stack ids must be defined (here or in an earlier chunk).
  bool Add(const Event& ev);

  // About what the pending records take before compression (callers seal at a size).
  size_t pending_bytes() const { return pending_bytes_; }
  uint32_t pending_records() const { return records_; }
  ChunkLayout layout() const { return layout_; }

  // Frames the pending records as one chunk and appends it to *out; resets delta state. kEvents
  // seals the pending events in the encoder's layout; kTrailer seals them as records (the trailer
  // chunk always uses records). Returns false on allocation or compression failure, or when the
  // chunk would exceed kMaxChunkBytes (pending records are then kept).
  // `pace` picks the level when the encoder's is kAutoZstdLevel.
  bool Seal(ChunkType type, std::string* out, SealPace pace = SealPace::kPaced);

 private:
  bool AppendRecord(std::string* to, uint8_t type, const uint8_t* body, size_t body_size);
  bool AddRow(const Event& ev);
  bool AddColumns(const Event& ev);
  // A run of consecutive streams compressed together: [offset, offset + size) of unpacked_.
  struct Block {
    size_t offset, size;
  };
  // Builds the kColumns payload of the pending events at `level` into payload_; false on
  // failure.
  bool PackColumns(int level, uint64_t* raw_total);
  // The zstd level of the pending chunk.
  int LevelFor(SealPace pace) const;
  // Joins each of (*blocks)[first..] into the block before it where one block compresses
  // smaller than two; false on failure.
  bool GroupBlocks(size_t first, int level, std::vector<Block>* blocks);
  // Compresses [data, data + size) into *to at `level` when that pays; returns the codec used.
  bool Compress(const char* data, size_t size, int level, std::string* to, Codec* codec);
  bool Frame(ChunkType type, Codec codec, const char* payload, size_t stored, uint64_t raw,
             std::string* out);
  void Reset();

  int zstd_level_;
  ChunkLayout layout_;
  void* zstd_ctx_ = nullptr;  // ZSTD_CCtx*, created lazily
  std::string definitions_;   // kDefString / kDefStack records made since the last seal
  std::string rows_;          // event records (kRows layout, and trailers)
  std::string payload_;       // scratch: the chunk being framed
  std::string unpacked_;      // scratch: kColumns streams before compression
  std::string compressed_;    // scratch
  // kColumns: the types of the pending events, and their column words by (type, field).
  std::string types_;
  std::vector<uint64_t> columns_[static_cast<size_t>(EventType::kCount)][kMaxColumnFields];
  // kColumnsV2: the address history and the escape words of each type's history field.
  AddressHistory history_;
  std::vector<uint64_t> escapes_[static_cast<size_t>(EventType::kCount)];
  uint32_t records_ = 0;
  size_t pending_bytes_ = 0;
  uint16_t sequence_ = 0;  // of the next chunk
  int64_t prev_ts_ = 0;
  int64_t prev_end_ = 0;    // kColumnsV2: previous event's ts + dur
  uint64_t prev_[16] = {};  // delta state per Slot (kHex / kDelta codings)
};

}  // namespace cuclimb::format
