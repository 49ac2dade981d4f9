// SPDX-License-Identifier: Apache-2.0
// The writer thread's work: drain rings, renumber ids, encode, compress and write chunks.
//
// Cold path only. Runs on the background writer thread, or on the thread that calls Flush/Stop
// (atexit); the two never overlap because every entry point holds mutex_.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "interposer/format/trace_encoder.h"
#include "interposer/writer/file_sink.h"
#include "interposer/writer/interner.h"
#include "interposer/writer/thread_ring.h"

namespace cuclimb::interposer {

struct WriterInputs {
  RingRegistry* rings;
  Interner* strings;
  Interner* stacks;
  const std::atomic<uint64_t>* ringless_drops;  // events of threads that got no ring
};

// The interners as the encoder's source tables (internal ids → bytes).
class InternerTables : public format::SourceTables {
 public:
  InternerTables(const Interner* strings, const Interner* stacks)
      : strings_(strings), stacks_(stacks) {}
  std::string_view String(uint32_t id) const override { return strings_->Get(id); }
  void Stack(uint32_t id, std::vector<uint64_t>* frames) const override;

 private:
  const Interner* strings_;
  const Interner* stacks_;
};

class TraceWriter {
 public:
  TraceWriter(const WriterInputs& inputs, int zstd_level, size_t chunk_bytes)
      : in_(inputs),
        tables_(inputs.strings, inputs.stacks),
        encoder_(zstd_level, format::ChunkLayout::kColumnsV2, chunk_bytes) {}

  // Writes the file header. False when the file could not be written.
  bool Begin(FileSink* sink, const format::FileHeader& header) noexcept;
  // Drains every ring and encodes the events, sealing a chunk when it is full, or when
  // `seal` is set, or when the last seal is older than kMaxChunkAgeNs.
  void Drain(int64_t now_ns, bool seal) noexcept;
  // Final drain, then the trailer chunk.
  void Finish(int64_t now_ns, const char* status) noexcept;

  uint64_t events_written() const { return events_written_.load(std::memory_order_relaxed); }
  uint64_t chunks_written() const { return encoder_.chunks(); }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t dropped_total() const;

 private:
  struct RingCursor {
    uint64_t pushed = 0;
    uint64_t dropped = 0;
    int64_t self_ns = 0;
    uint32_t tid = 0;  // last tid a kThread event was written for
  };

  void Collect(int64_t now_ns);
  void EncodeBatch();
  void Encode(const format::Event& ev) noexcept;
  // Writes out_ (sealed chunks) to the file; false once writing failed.
  bool Flush() noexcept;
  void AddThreadName(uint32_t tid, int64_t now_ns);

  std::mutex mutex_;
  WriterInputs in_;
  FileSink* sink_ = nullptr;
  InternerTables tables_;
  format::TraceEncoder encoder_;  // renumbers ids into file ids, encodes, seals chunks
  std::string out_;               // sealed chunks not yet written
  std::vector<format::Event> batch_;
  std::vector<std::pair<int64_t, uint32_t>> order_;  // (ts, index in batch_)
  std::vector<RingCursor> cursors_;
  std::atomic<uint64_t> events_written_{0};  // written under mutex_, read by any thread's stats
  uint64_t bytes_written_ = 0;
  uint64_t encode_failures_ = 0;
  uint64_t reported_intern_failures_ = 0;
  uint64_t reported_ringless_ = 0;
  int64_t last_seal_ns_ = 0;
  int64_t last_drain_ns_ = 0;
  bool failed_ = false;
};

}  // namespace cuclimb::interposer
