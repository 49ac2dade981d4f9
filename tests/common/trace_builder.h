// SPDX-License-Identifier: Apache-2.0
// Builds synthetic traces in memory for tests: events with interned strings and stacks, written
// as binary or JSON Lines.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "interposer/format/chunk_encoder.h"
#include "interposer/format/trace_format.h"
#include "trace/reader.h"
#include "trace/tables.h"

namespace cuclimb::testing {

using format::Event;
using format::EventType;

class TraceBuilder {
 public:
  TraceBuilder();

  uint32_t Str(std::string_view s) { return strings_.Intern(s); }
  // Frames are symbol strings, or "0x..." return addresses; innermost first.
  uint32_t Stack(std::initializer_list<std::string_view> frames);

  // Appends a blank event of `type` at ts and returns it for filling in.
  Event& Add(EventType type, int64_t ts);
  void AddEvent(const Event& ev) { events_.push_back(ev); }

  // Common events. Defaults: thread 1, device 0, stream 0x10.
  Event& Process(int64_t ts, int64_t pid, std::string_view cmd);
  Event& Alloc(int64_t ts, uint64_t addr, uint64_t size,
               format::MemoryKind kind = format::MemoryKind::kPool,
               std::string_view api = "cuMemAllocAsync", uint32_t stack = 0, uint32_t tid = 1);
  Event& Free(int64_t ts, uint64_t addr, format::MemoryKind kind = format::MemoryKind::kPool,
              std::string_view api = "cuMemFreeAsync", uint32_t tid = 1);
  Event& Push(int64_t ts, std::string_view name, uint32_t tid = 1);
  Event& Pop(int64_t ts, uint32_t tid = 1);
  Event& Mark(int64_t ts, std::string_view name, uint32_t tid = 1);
  Event& Api(int64_t ts, int64_t dur, std::string_view name, uint32_t tid = 1);
  Event& Launch(int64_t ts, int64_t dur, std::string_view kernel, uint64_t corr,
                uint64_t stream = 0x10, uint32_t tid = 1);
  Event& Kernel(int64_t ts, int64_t dur, std::string_view kernel, uint64_t corr,
                uint64_t stream = 0x10);
  Event& Sync(int64_t ts, int64_t dur, format::SyncKind kind, std::string_view api,
              uint32_t tid = 1);
  Event& Create(int64_t ts, format::HandleType type, uint64_t handle, uint32_t tid = 1);
  Event& Destroy(int64_t ts, format::HandleType type, uint64_t handle, uint32_t tid = 1);
  Event& Gauge(int64_t ts, std::string_view name, int64_t value, uint64_t pool = 0);
  Event& Region(int64_t ts, uint64_t heap, uint64_t addr, uint64_t size, uint32_t tid = 1);
  Event& RegionFree(int64_t ts, uint64_t heap, uint64_t addr, uint32_t tid = 1);
  Event& Sample(int64_t ts, uint32_t stack, uint32_t tid = 1);

  // Totals for the trailer.
  void set_dropped(int64_t dropped) { dropped_ = dropped; }

  // layout kRows writes format 1.0 (tests of the old layout).
  std::string ToBinary(bool with_trailer = true, int zstd_level = 3, size_t chunk_bytes = 64u << 10,
                       format::ChunkLayout layout = format::ChunkLayout::kColumnsV2) const;
  std::string ToJsonLines(bool with_trailer = true) const;
  absl::Status WriteBinary(const std::string& path, bool with_trailer = true) const;
  absl::Status WriteJsonLines(const std::string& path, bool with_trailer = true) const;

  const std::vector<Event>& events() const { return events_; }
  // For tests that reorder events as the writer would.
  std::vector<Event>& mutable_events() { return events_; }
  const trace::StringTable& strings() const { return strings_; }
  const trace::StackTable& stacks() const { return stacks_; }
  trace::TraceHeader header() const;

 private:
  trace::StringTable strings_;
  trace::StackTable stacks_;
  std::vector<Event> events_;
  int64_t dropped_ = 0;
};

// Reads every event of a trace held in memory; the reader's status is copied to *status.
std::vector<Event> ReadAll(std::string_view bytes, trace::ReadStatus* status = nullptr);

}  // namespace cuclimb::testing
