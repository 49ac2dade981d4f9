// SPDX-License-Identifier: Apache-2.0
// Streaming trace reader: binary or JSON Lines (decided by content), one event at a time.
//
// Memory is independent of trace length: one chunk (binary) or one line (JSON Lines) at a time,
// plus the string and stack tables. A reader never crashes or hangs on any input; when it stops
// early, status() names the byte offset and the reason, and every event before that point has
// been delivered.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "interposer/format/trace_format.h"
#include "trace/event_batch.h"
#include "trace/tables.h"

namespace cuclimb::trace {

using format::Event;
using format::EventType;

enum class TraceForm { kBinary, kJsonLines };

struct TraceHeader {
  TraceForm form = TraceForm::kBinary;
  uint16_t format_major = format::kFormatMajor;
  uint16_t format_minor = format::kFormatMinor;
  format::ClockId clock = format::ClockId::kSynthetic;
  int64_t base_clock_ns = 0;
  int64_t base_realtime_ns = 0;
  std::string producer;
};

enum class StopReason {
  kReading,    // not at the end yet
  kComplete,   // the trailer was read: the producer finished cleanly
  kNoTrailer,  // ended at a clean boundary without a trailer (producer killed, or JSON)
  kTruncated,  // ended inside a chunk or line: the file was cut
  kCorrupt,    // bad checksum, length, id or encoding
};

// "complete", "no_trailer", "truncated", "corrupt" or "reading": the status word of reports and
// `cuclimb info`.
const char* StopReasonName(StopReason reason);

// "monotonic", "monotonic_raw", "synthetic" or "unknown": a trace header's clock in reports,
// `cuclimb info` and JSON Lines headers.
const char* ClockName(format::ClockId clock);

struct ReadStatus {
  StopReason reason = StopReason::kReading;
  uint64_t offset = 0;           // byte offset where reading stopped (for kTruncated / kCorrupt)
  std::string message;           // one line saying where and why
  uint64_t events = 0;           // events delivered so far
  uint64_t chunks = 0;           // complete chunks (binary) or lines (JSON Lines) read
  uint64_t skipped_records = 0;  // records of types this reader does not know (newer minor)

  bool partial() const {
    return reason == StopReason::kTruncated || reason == StopReason::kCorrupt;
  }
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;

  // Opens a file. Errors: NotFound/PermissionDenied (cannot open), InvalidArgument (not a
  // cuclimb trace), FailedPrecondition (unsupported format major), DataLoss (bad header).
  static absl::StatusOr<std::unique_ptr<TraceReader>> Open(const std::string& path);
  // Reads from memory that outlives the reader (fuzzer, tests).
  static absl::StatusOr<std::unique_ptr<TraceReader>> FromBuffer(std::string_view bytes);

  // Delivers the next event (the trailer is not delivered: see trailer()). Returns false at the
  // end or on damage; status() then says which.
  virtual bool Next(Event* ev) = 0;
  // Delivers up to max events into out (in order); returns how many, 0 only at the end or on
  // damage. The same events as Next(), cheaper per event.
  virtual size_t Read(Event* out, size_t max) {
    size_t n = 0;
    while (n < max && Next(&out[n])) ++n;
    return n;
  }
  // Lets the reader use `threads` more helper threads to prepare its input ahead of Read()
  // (binary traces: checksums and decompression, and the events of column chunks, decoded into
  // batches()). Call from the reading thread, before the first Read() or between two (threads
  // that join a reading under way prepare the chunks after the current one); a no-op where there
  // is nothing to prepare. Events and status are the same either way.
  virtual void Prefetch(int threads) { (void)threads; }
  // The next events as a whole batch decoded ahead by the prefetch workers, when the reader has
  // one: sealed, `size` events (at least one) delivered as Read() would deliver them. The caller
  // owns it and gives it back to batches() once done. nullptr when the next events come by
  // Read() instead (none decoded ahead, or a batch that Read() has begun copying out), and at
  // the end.
  virtual EventBatch* TakeBatch() { return nullptr; }
  // Has the reader call `before` (on the thread that calls Read()) each time before it adds to
  // strings() or stacks(), so that another thread reading the tables can be stopped first; an
  // empty function removes it. Returns false where the tables change at unknown moments (JSON
  // Lines interns while parsing): then no other thread may read them during Read().
  virtual bool GuardTables(std::function<void()> before) {
    (void)before;
    return false;
  }

  // The batches of this trace's events: those TakeBatch() hands out, and any others its caller
  // fills and passes between threads.
  BatchPool& batches() { return batches_; }
  const TraceHeader& header() const { return header_; }
  const StringTable& strings() const { return strings_; }
  const StackTable& stacks() const { return stacks_; }
  const ReadStatus& status() const { return status_; }
  const std::optional<Event>& trailer() const { return trailer_; }
  // For progress reporting.
  uint64_t bytes_consumed() const { return bytes_consumed_; }
  uint64_t total_bytes() const { return total_bytes_; }

  std::string_view Str(uint32_t id) const { return strings_.Get(id); }

 protected:
  TraceHeader header_;
  StringTable strings_;
  StackTable stacks_;
  ReadStatus status_;
  std::optional<Event> trailer_;
  uint64_t bytes_consumed_ = 0;
  uint64_t total_bytes_ = 0;
  BatchPool batches_;
};

// A source of bytes: a file read sequentially, or a memory buffer.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes into out; returns how many were read (< n only at the end).
  virtual size_t Read(void* out, size_t n) = 0;
  // Bytes in the whole source, when known (0 otherwise).
  virtual uint64_t size() const = 0;
};

}  // namespace cuclimb::trace
