// SPDX-License-Identifier: Apache-2.0
// Decodes chunks of either layout: framing checks, checksum, sequence, decompression, then
// definitions and events, with messages that say where and what. The counterpart of
// ChunkEncoder; the analyzer's reader does the I/O around it.
//
// Two stages, so that a pool of threads can prepare chunks ahead of the ordered decoding:
// Unpacker::Unpack() needs nothing but the chunk (checksum, decompression, the column directory);
// ChunkDecoder needs the chunks in file order, because definitions accumulate.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "column_decoder.h"
#include "row_decoder.h"
#include "trace_format.h"

namespace cuclimb::format {

// Where a chunk sits in its file, for messages.
struct ChunkPlace {
  uint64_t index = 0;   // 0-based
  uint64_t offset = 0;  // byte offset of its header
};

// The string and stack tables that definitions extend; the reader owns them. The decoder checks
// ids and every cap (kMaxStrings, kMaxStringTableBytes, ...) before calling Add*.
class DefinitionTables {
 public:
  virtual ~DefinitionTables() = default;
  virtual uint32_t string_count() const = 0;  // ids below this are defined (id 0 included)
  virtual uint32_t stack_count() const = 0;
  virtual uint64_t string_bytes() const = 0;                        // bytes of all strings
  virtual uint64_t stack_frames() const = 0;                        // frames of all stacks
  virtual void AddString(std::string_view bytes) = 0;               // id = string_count()
  virtual void AddStack(const uint64_t* frames, size_t count) = 0;  // id = stack_count()
};

// Checks a chunk header before its payload is read: magic and the size caps, so that a reader
// never allocates what a damaged header claims. Empty when fine, else what is wrong.
std::string CheckChunkHeader(const ChunkHeader& h);

// A chunk as read from the file, then checked and decompressed by Unpacker::Unpack().
struct UnpackedChunk {
  ChunkHeader header{};
  ChunkPlace place;
  bool sequenced = false;  // the file's chunks carry sequence numbers (format ≥ 1.1)
  std::string stored;      // the payload as read (the caller fills it)
  std::string bytes;       // records (row chunks) or the streams (column chunks), decompressed
  struct Stream {
    uint32_t key, offset, size;
  };
  std::vector<Stream> streams;  // column chunks: the known streams, validated
  uint32_t events = 0;          // column chunks: events and definitions the chunk holds
  uint32_t definitions = 0;
  uint32_t type_counts[static_cast<size_t>(EventType::kCount)] = {};
  uint32_t escape_counts[static_cast<size_t>(EventType::kCount)] = {};  // kColumnsV2: words
  std::string error;  // set when Unpack() found damage: the whole message
};

class Unpacker {
 public:
  Unpacker() = default;
  ~Unpacker();
  Unpacker(const Unpacker&) = delete;
  Unpacker& operator=(const Unpacker&) = delete;

  // Checks the checksum, sequence number, type and codec, and decompresses. False (and
  // chunk->error set) on damage.
  bool Unpack(UnpackedChunk* chunk);

 private:
  bool UnpackColumns(UnpackedChunk* chunk);
  bool Decompress(const char* src, size_t src_size, char* dst, size_t dst_size);

  void* dctx_ = nullptr;  // ZSTD_DCtx*, created lazily
  std::string zstd_error_;
};

class ChunkDecoder {
 public:
  // Starts decoding an unpacked chunk (which must outlive the decoding); applies a column
  // chunk's definitions. False on damage (error()).
  bool Start(const UnpackedChunk* chunk, DefinitionTables* tables);
  // Starts decoding a column chunk's events apart from its definitions, on any thread (a prefetch
  // worker decoding ahead of the ordered reading): ids are checked against the format's caps only
  // (kMaxStrings, kMaxStacks), and strings_needed() and stacks_needed() say what the tables must
  // hold for the events decoded so far; the caller checks that once the definitions up to this
  // chunk's are applied in order (by another decoder's Start()). False for other chunks.
  bool StartDetached(const UnpackedChunk* chunk);
  // Decodes up to max events into out, applying a row chunk's definitions as they come. Returns
  // how many; 0 when the chunk is done or damaged (failed()). Events decoded before damage in the
  // same chunk are returned first. tables may be null after StartDetached().
  size_t Decode(Event* out, size_t max, DefinitionTables* tables);
  // A column chunk whose events have all been decoded (its last checks included).
  bool finished() const { return columns_.next() == columns_.events(); }
  // After StartDetached(): the string and stack counts that define every id of the events
  // decoded so far (conservatively: of every window of events opened). Past the caps (a damaged
  // word of the window, maybe after the events decoded), more than any table can hold.
  uint64_t strings_needed() const {
    return std::min<uint64_t>(columns_.max_string_id(), kMaxStrings) + 1;
  }
  uint64_t stacks_needed() const {
    return std::min<uint64_t>(columns_.max_stack_id(), kMaxStacks) + 1;
  }

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  // Records (or events) of types this reader does not know, skipped since construction.
  uint64_t skipped_records() const { return skipped_; }

 private:
  size_t DecodeRows(Event* out, size_t max, DefinitionTables* tables);
  size_t DecodeColumns(Event* out, size_t max);
  bool DefineString(const uint8_t* p, const uint8_t* end, DefinitionTables* tables);
  bool DefineStack(const uint8_t* p, const uint8_t* end, DefinitionTables* tables);
  bool ApplyDefinitions(const uint8_t* p, const uint8_t* end, DefinitionTables* tables);
  // Decodes a row event slowly to name what is wrong; true if it finds nothing.
  bool CheckRow(uint8_t type, const uint8_t* p, const uint8_t* end, Event* ev);
  // Says what stopped a column batch (event_index_ is the event's index in the chunk).
  void ColumnError(const ColumnDecoder::Failure& failure);
  // kColumnsV2, at the end of a chunk: every escape word was used (else error_ says which).
  void CheckEscapesUsed();
  bool RecordError(const std::string& what);
  bool ChunkError(const std::string& what);

  const UnpackedChunk* chunk_ = nullptr;
  const uint8_t* begin_ = nullptr;  // row chunks: the records
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  const uint8_t* record_start_ = nullptr;
  uint64_t record_index_ = 0;
  const uint8_t* types_ = nullptr;  // column chunks: one type byte per event
  uint32_t event_index_ = 0;
  DecodeState rows_;
  ColumnDecoder columns_;
  std::vector<uint64_t> frames_;
  uint64_t skipped_ = 0;
  std::string error_;
};

}  // namespace cuclimb::format
