// SPDX-License-Identifier: Apache-2.0
// BinaryReader's prefetch workers: they check and decompress the chunks framed ahead of the
// reading, and decode the events of column chunks (format ≥ 1.1) into batches, which the reading
// thread takes as they are.
//
// A chunk's events can be decoded before the chunks ahead of it are read, except for one thing:
// the string and stack ids they reference are defined by the chunks before, in order. So a worker
// checks ids against the format's caps only and notes per batch what the tables must hold
// (ChunkDecoder::StartDetached); the reading thread applies the chunk's definitions in order
// (LoadChunk) and checks each batch in O(1). On any problem (damage the worker met, or an id not
// defined) the reading thread decodes the rest of the chunk itself, past the events it delivered
// already: the events, the stop and its message are those of reading without workers.
//
// Work goes in file order: a worker takes the first slot that has work (unpacking, or decoding
// batches), so the chunk being read comes first. A chunk's decoding stops at kReadyBatches ready
// batches and resumes at half, so memory stays bounded and batches are taken while in the cache;
// meanwhile the worker unpacks and begins the chunks after it. Where the reading thread would
// wait for the workers, it takes such work itself (Help): with one worker, unpacking and decoding
// take it longer than the reading takes the reading thread.
#include <algorithm>
#include <utility>

#include "trace/binary_reader.h"

namespace cuclimb::trace {
namespace {

bool IsColumnChunk(const format::UnpackedChunk& chunk) {
  return chunk.header.type == static_cast<uint8_t>(format::ChunkType::kColumns) ||
         chunk.header.type == static_cast<uint8_t>(format::ChunkType::kColumnsV2);
}

}  // namespace

void BinaryReader::Prefetch(int threads) {
  if (threads <= 0)
    return;
  // Workers may join a reading under way (a thread of the job that came free): only the reading
  // thread frames chunks and reads depth_ and workers_, so from its next chunk on it frames ahead
  // for them; the chunk it is in goes on as it was (inline, or taken from its batches).
  // Two chunks per worker keep them busy while the reading thread decodes, up to kMaxDepth;
  // chunks are about 1 MiB unpacked, plus up to kReadyBatches batches each decoded ahead.
  depth_ = std::min(2 * (workers_.size() + static_cast<size_t>(threads)), kMaxDepth);
  for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(); });
}

void BinaryReader::Work() {
  format::Unpacker unpacker;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    Slot* slot = nullptr;
    work_ready_.wait(lock, [&] { return quit_ || (slot = FindWork()) != nullptr; });
    if (quit_)
      return;
    if (slot->unpacking)
      DecodeAhead(slot, lock);
    else
      Unpack(slot, &unpacker, lock);
  }
}

void BinaryReader::Unpack(Slot* slot, format::Unpacker* unpacker,
                          std::unique_lock<std::mutex>& lock) {
  slot->unpacking = true;
  lock.unlock();
  format::UnpackedChunk* chunk = slot->data;
  const bool ok = unpacker->Unpack(chunk);
  const bool ahead = ok && IsColumnChunk(*chunk) && chunk->events > 0;
  lock.lock();
  slot->ok = ok;
  slot->ahead = ahead;
  slot->unpacked = true;
  work_done_.notify_all();
}

bool BinaryReader::Help(std::unique_lock<std::mutex>& lock) {
  Slot* slot = FindWork();
  if (slot == nullptr)
    return false;
  if (slot->unpacking) {
    DecodeAhead(slot, lock);
  } else {
    Unpack(slot, &unpacker_, lock);
    if (slot->ahead)
      work_ready_.notify_one();  // a worker may decode it now
  }
  return true;
}

BinaryReader::Slot* BinaryReader::FindWork(const Slot* before) {
  for (auto it = working_.begin(); it != working_.end() && *it != before;) {
    Slot* slot = *it;
    if (!slot->unpacking)
      return slot;
    if (slot->unpacked && (!slot->ahead || slot->decoded || slot->abandoned)) {
      it = working_.erase(it);  // nothing left to do
      continue;
    }
    if (slot->unpacked && !slot->decoding && !slot->parked)
      return slot;
    ++it;
  }
  return nullptr;
}

void BinaryReader::DecodeAhead(Slot* slot, std::unique_lock<std::mutex>& lock) {
  slot->decoding = true;
  const bool start = slot->decoder == nullptr;
  if (start) {
    if (idle_decoders_.empty()) {
      slot->decoder = std::make_unique<format::ChunkDecoder>();
    } else {
      slot->decoder = std::move(idle_decoders_.back());
      idle_decoders_.pop_back();
    }
  }
  format::ChunkDecoder* decoder = slot->decoder.get();
  lock.unlock();
  // A chunk StartDetached() refuses is damaged: the reading thread's Start() says how.
  const bool started = !start || decoder->StartDetached(slot->data);
  for (;;) {
    EventBatch* batch = nullptr;
    bool end = !started;
    if (started) {
      batch = batches_.Get();
      const uint64_t skipped = decoder->skipped_records();
      batch->size = decoder->Decode(batch->events, EventBatch::kCapacity, nullptr);
      batch->sealed = true;
      batch->strings_needed = decoder->strings_needed();
      batch->stacks_needed = decoder->stacks_needed();
      batch->skipped = decoder->skipped_records() - skipped;
      end = batch->size == 0 || decoder->failed() || decoder->finished();
    }
    lock.lock();
    if (batch != nullptr) {
      if (slot->abandoned || quit_ || batch->size == 0) {
        batches_.GiveBack(batch);
        end = true;
      } else {
        slot->ready.push_back(batch);
      }
    }
    if (end) {
      slot->decoded = true;
      slot->failed = !started || decoder->failed();
      slot->decoding = false;
      idle_decoders_.push_back(std::move(slot->decoder));
    } else if (slot->ready.size() >= kReadyBatches) {
      slot->parked = true;
      slot->decoding = false;
    } else if (FindWork(slot) != nullptr) {
      slot->decoding = false;  // a chunk before this one needs a worker: it is read first
    }
    if (slot->reader_waiting && (!slot->decoding || slot->ready.size() >= kWakeBatches))
      work_done_.notify_all();
    if (!slot->decoding)
      return;
    lock.unlock();
  }
}

EventBatch* BinaryReader::NextAhead() {
  Slot* slot = ahead_;
  EventBatch* batch = nullptr;
  bool failed = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    while (slot->ready.empty() && !slot->decoded) {
      if (Help(lock))
        continue;
      slot->reader_waiting = true;
      work_done_.wait(lock, [slot] { return !slot->ready.empty() || slot->decoded; });
      slot->reader_waiting = false;
    }
    if (!slot->ready.empty()) {
      batch = slot->ready.front();
      slot->ready.pop_front();
      if (slot->parked && slot->ready.size() <= kReadyBatches / 2) {
        slot->parked = false;
        work_ready_.notify_one();
      }
    } else {
      failed = slot->failed;
    }
  }
  if (batch == nullptr) {
    if (failed) {
      DecodeInline();
    } else {
      ahead_ = nullptr;
      in_chunk_ = false;  // every event was delivered
    }
    return nullptr;
  }
  // The definitions up to this chunk's are applied: the ids must be defined now.
  if (batch->strings_needed > string_count() || batch->stacks_needed > stack_count()) {
    batches_.GiveBack(batch);
    DecodeInline();
    return nullptr;
  }
  taken_ += batch->size;
  taken_skipped_ += batch->skipped;
  skipped_ahead_ += batch->skipped;
  status_.skipped_records = decoder_.skipped_records() + skipped_ahead_;
  return batch;
}

void BinaryReader::DecodeInline() {
  Abandon(ahead_);
  ahead_ = nullptr;
  // decoder_ decodes the chunk again from its first event (the same events: those delivered had
  // their ids defined), and counts its skipped records again.
  skipped_ahead_ -= taken_skipped_;
  Event skip[64];
  for (uint64_t left = taken_; left > 0;) {
    const size_t n = decoder_.Decode(skip, std::min<uint64_t>(left, std::size(skip)), this);
    if (n == 0)
      break;  // failed: Read() stops with its message
    left -= n;
  }
  status_.skipped_records = decoder_.skipped_records() + skipped_ahead_;
}

void BinaryReader::Abandon(Slot* slot) {
  std::unique_lock<std::mutex> lock(mutex_);
  slot->abandoned = true;
  if (slot->decoding) {
    slot->reader_waiting = true;
    work_done_.wait(lock, [slot] { return !slot->decoding; });
    slot->reader_waiting = false;
  }
  for (EventBatch* batch : slot->ready) batches_.GiveBack(batch);
  slot->ready.clear();
  if (slot->decoder != nullptr)
    idle_decoders_.push_back(std::move(slot->decoder));
}

void BinaryReader::Retire() {
  if (current_ == nullptr)
    return;
  if (current_->ahead)
    Abandon(current_.get());
  if (!workers_.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    working_.erase(std::remove(working_.begin(), working_.end(), current_.get()), working_.end());
  }
  ahead_ = nullptr;
  current_.reset();
}

}  // namespace cuclimb::trace
