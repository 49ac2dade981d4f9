// SPDX-License-Identifier: Apache-2.0
// Reader of the binary trace form: file I/O around the format library's chunk decoder (the only
// code in the analyzer that sees wire structs).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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
  void Prefetch(int threads) override;
  EventBatch* TakeBatch() override;
  bool GuardTables(std::function<void()> before) override {
    before_define_ = std::move(before);
    return true;
  }

  // Batches a prefetch worker decodes ahead of the reading in one chunk before it waits for them
  // to be taken (8.4 MiB, a whole chunk of 65 536 events); it resumes at half. A chunk is decoded
  // by one worker at a time, at about the rate the reading thread takes events: with 8 batches
  // ahead the reading thread waited for the rest of each chunk, and five workers were busy a
  // quarter of the time (one trace on the H200 host, --jobs 8: 0.79–0.88 s; 0.64–0.73 s now).
  static constexpr size_t kReadyBatches = 64;
  // Chunks framed ahead at most, whatever the number of workers: with kReadyBatches decoded
  // ahead in each, about 70 MiB.
  static constexpr size_t kMaxDepth = 8;
  // Batches that wake a reading thread waiting for a chunk's next batch.
  static constexpr size_t kWakeBatches = 4;

 private:
  // A chunk read from the file, or where and why reading ends. The fields after `message` are
  // under mutex_ when prefetching.
  struct Slot {
    std::unique_ptr<format::UnpackedChunk> chunk;
    format::UnpackedChunk* data = nullptr;   // chunk.get(), which the reading thread moves
    StopReason stop = StopReason::kReading;  // otherwise reading ends here, saying `message`
    uint64_t offset = 0;
    std::string message;
    bool unpacking = false;  // a worker took it to unpack
    bool unpacked = false;   // Unpack() ran
    bool ok = false;         // and found the chunk intact
    // Decoding ahead (column chunks with events, when prefetching): a worker decodes the events
    // into batches, checked against the caps only, and queues them in order; the reading thread
    // takes them once the definitions up to this chunk's are applied.
    bool ahead = false;
    std::unique_ptr<format::ChunkDecoder> decoder;  // the worker's, while decoding
    std::deque<EventBatch*> ready;                  // decoded, in order
    bool decoding = false;                          // a worker decodes it now
    bool parked = false;          // stopped at kReadyBatches ready; resumes at half
    bool decoded = false;         // no more batches will come
    bool failed = false;          // the decoding stopped at damage (the rest is decoded inline)
    bool abandoned = false;       // the reading thread decodes the rest inline, or quits
    bool reader_waiting = false;  // the reading thread waits for this slot
  };

  // Reads the next chunk's bytes from source_ into a new slot (always on the reading thread).
  std::unique_ptr<Slot> Frame();
  // The next chunk in file order, unpacked: inline, or from the prefetch workers.
  std::unique_ptr<Slot> NextSlot();
  // Reads, checks and starts the next chunk; false at the end or on damage (status set).
  bool LoadChunk();
  bool ReadTrailer();
  bool Stop(StopReason reason, uint64_t offset, std::string message);

  // Prefetching (binary_reader_prefetch.cpp).
  void Work();
  // The first slot in file order (before `before`, when given) with work for a worker (under
  // mutex_), or null.
  Slot* FindWork(const Slot* before = nullptr);
  // Checks and decompresses `slot`'s chunk (under `lock`, released meanwhile).
  void Unpack(Slot* slot, format::Unpacker* unpacker, std::unique_lock<std::mutex>& lock);
  // The reading thread, instead of waiting for the workers: does the work a worker would take
  // next (FindWork: unpacking a chunk, or decoding batches of one ahead), if any (under `lock`).
  // With few workers, unpacking and decoding ahead take them longer than the reading takes the
  // reading thread; this shares them out.
  bool Help(std::unique_lock<std::mutex>& lock);
  // Decodes batches of `slot` until it has kReadyBatches ready, or to its end (under `lock`).
  void DecodeAhead(Slot* slot, std::unique_lock<std::mutex>& lock);
  // The next batch decoded ahead of the current chunk (ahead_), checked against the tables; null
  // when the chunk has no more (in_chunk_ false then) or the rest is decoded inline (ahead_ null
  // then).
  EventBatch* NextAhead();
  // The current chunk's events are decoded inline from here on: the workers stop decoding it, and
  // decoder_ goes past the events already delivered.
  void DecodeInline();
  // Stops the workers' decoding of `slot` and gives its batches back.
  void Abandon(Slot* slot);
  // Done with the current slot: no worker uses it any longer.
  void Retire();

  // format::DefinitionTables over strings_ and stacks_.
  uint32_t string_count() const override { return static_cast<uint32_t>(strings_.size()); }
  uint32_t stack_count() const override { return static_cast<uint32_t>(stacks_.size()); }
  uint64_t string_bytes() const override { return strings_.bytes(); }
  uint64_t stack_frames() const override { return stacks_.frames(); }
  void AddString(std::string_view bytes) override {
    if (before_define_)
      before_define_();
    strings_.Define(bytes);
  }
  void AddStack(const uint64_t* frames, size_t count) override {
    if (before_define_)
      before_define_();
    stacks_.Define(absl::MakeConstSpan(frames, count));
  }

  std::unique_ptr<ByteSource> source_;
  std::function<void()> before_define_;                        // GuardTables()
  std::unique_ptr<format::UnpackedChunk> chunk_;               // the chunk being decoded
  std::vector<std::unique_ptr<format::UnpackedChunk>> spare_;  // buffers to reuse
  format::Unpacker unpacker_;
  format::ChunkDecoder decoder_;
  bool sequenced_ = false;      // format ≥ 1.1: chunks carry sequence numbers
  bool in_chunk_ = false;       // decoder_ holds a chunk with events left
  bool after_trailer_ = false;  // the chunk decoded last was the trailer
  bool framing_done_ = false;   // Frame() reached the end of what can be read
  uint64_t framed_ = 0;         // chunks framed so far
  uint64_t chunk_index_ = 0;    // of the next chunk to load

  // Prefetching: workers check and decompress chunks ahead of the decoding, in file order, and
  // decode the events of column chunks into batches.
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_, work_done_;
  std::deque<Slot*> working_;                   // slots that may have work, in file order
  std::deque<std::unique_ptr<Slot>> inflight_;  // framed, in file order
  std::vector<std::unique_ptr<format::ChunkDecoder>> idle_decoders_;
  size_t depth_ = 0;  // chunks framed ahead
  bool quit_ = false;
  // The reading thread's side of decoding ahead.
  std::unique_ptr<Slot> current_;  // the chunk_'s slot
  Slot* ahead_ = nullptr;          // current_, while its batches are taken
  EventBatch* partial_ = nullptr;  // a batch Read() copies out of
  size_t partial_at_ = 0;          // its next event
  uint64_t taken_ = 0;             // events of the current chunk delivered from batches
  uint64_t taken_skipped_ = 0;     // their skipped records
  uint64_t skipped_ahead_ = 0;     // skipped records of every batch delivered
};

}  // namespace cuclimb::trace
