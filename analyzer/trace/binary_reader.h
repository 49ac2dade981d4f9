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
  bool GuardTables(std::function<void()> before) override {
    before_define_ = std::move(before);
    return true;
  }

 private:
  // A chunk read from the file, or where and why reading ends.
  struct Slot {
    std::unique_ptr<format::UnpackedChunk> chunk;
    StopReason stop = StopReason::kReading;  // otherwise reading ends here, saying `message`
    uint64_t offset = 0;
    std::string message;
    bool unpacked = false;  // Unpack() ran (under mutex_ when prefetching)
    bool ok = false;        // and found the chunk intact
  };

  // Reads the next chunk's bytes from source_ into a new slot (always on the reading thread).
  std::unique_ptr<Slot> Frame();
  // The next chunk in file order, unpacked: inline, or from the prefetch workers.
  std::unique_ptr<Slot> NextSlot();
  void Work();
  // Reads, checks and starts the next chunk; false at the end or on damage (status set).
  bool LoadChunk();
  bool ReadTrailer();
  bool Stop(StopReason reason, uint64_t offset, std::string message);

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

  // Prefetching: workers check and decompress chunks ahead of the decoding, in file order.
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_, work_done_;
  std::deque<Slot*> todo_;                      // framed, waiting for a worker
  std::deque<std::unique_ptr<Slot>> inflight_;  // framed, in file order
  size_t depth_ = 0;                            // chunks framed ahead
  bool quit_ = false;
};

}  // namespace cuclimb::trace
