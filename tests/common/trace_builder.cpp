// SPDX-License-Identifier: Apache-2.0
// Synthetic trace construction for tests.
#include "trace_builder.h"

#include <charconv>
#include <cstdio>

#include "trace/binary_writer.h"
#include "trace/jsonl.h"
#include "util/cli.h"

namespace cuclimb::testing {

using format::MakeEvent;

TraceBuilder::TraceBuilder() = default;

uint32_t TraceBuilder::Stack(std::initializer_list<std::string_view> frames) {
  std::vector<uint64_t> words;
  for (std::string_view f : frames) {
    uint64_t pc = 0;
    if (f.size() > 2 && f[0] == '0' && f[1] == 'x' &&
        std::from_chars(f.data() + 2, f.data() + f.size(), pc, 16).ptr == f.data() + f.size()) {
      words.push_back(format::PcFrame(pc));
    } else {
      words.push_back(format::StringFrame(strings_.Intern(f)));
    }
  }
  return stacks_.Intern(words);
}

Event& TraceBuilder::Add(EventType type, int64_t ts) {
  events_.push_back(MakeEvent(type));
  events_.back().ts = ts;
  return events_.back();
}

Event& TraceBuilder::Process(int64_t ts, int64_t pid, std::string_view cmd) {
  Event& e = Add(EventType::kProcess, ts);
  e.value = pid;
  e.name = Str(cmd);
  return e;
}

Event& TraceBuilder::Alloc(int64_t ts, uint64_t addr, uint64_t size, format::MemoryKind kind,
                           std::string_view api, uint32_t stack, uint32_t tid) {
  Event& e = Add(EventType::kAlloc, ts);
  e.tid = tid;
  e.api = Str(api);
  e.kind = static_cast<uint8_t>(kind);
  e.addr = addr;
  e.size = size;
  e.stream = 0x10;
  e.device = 0;
  e.stack = stack;
  return e;
}

Event& TraceBuilder::Free(int64_t ts, uint64_t addr, format::MemoryKind kind, std::string_view api,
                          uint32_t tid) {
  Event& e = Add(EventType::kFree, ts);
  e.tid = tid;
  e.api = Str(api);
  e.kind = static_cast<uint8_t>(kind);
  e.addr = addr;
  e.stream = 0x10;
  e.device = 0;
  return e;
}

Event& TraceBuilder::Push(int64_t ts, std::string_view name, uint32_t tid) {
  Event& e = Add(EventType::kPush, ts);
  e.tid = tid;
  e.name = Str(name);
  return e;
}

Event& TraceBuilder::Pop(int64_t ts, uint32_t tid) {
  Event& e = Add(EventType::kPop, ts);
  e.tid = tid;
  return e;
}

Event& TraceBuilder::Mark(int64_t ts, std::string_view name, uint32_t tid) {
  Event& e = Add(EventType::kMark, ts);
  e.tid = tid;
  e.name = Str(name);
  return e;
}

Event& TraceBuilder::Api(int64_t ts, int64_t dur, std::string_view name, uint32_t tid) {
  Event& e = Add(EventType::kApi, ts);
  e.dur = dur;
  e.tid = tid;
  e.api = Str(name);
  return e;
}

Event& TraceBuilder::Launch(int64_t ts, int64_t dur, std::string_view kernel, uint64_t corr,
                            uint64_t stream, uint32_t tid) {
  Event& e = Add(EventType::kLaunch, ts);
  e.dur = dur;
  e.tid = tid;
  e.name = Str(kernel);
  e.stream = stream;
  e.corr = corr;
  return e;
}

Event& TraceBuilder::Kernel(int64_t ts, int64_t dur, std::string_view kernel, uint64_t corr,
                            uint64_t stream) {
  Event& e = Add(EventType::kKernel, ts);
  e.dur = dur;
  e.name = Str(kernel);
  e.stream = stream;
  e.corr = corr;
  e.device = 0;
  return e;
}

Event& TraceBuilder::Sync(int64_t ts, int64_t dur, format::SyncKind kind, std::string_view api,
                          uint32_t tid) {
  Event& e = Add(EventType::kSync, ts);
  e.dur = dur;
  e.tid = tid;
  e.kind = static_cast<uint8_t>(kind);
  e.api = Str(api);
  return e;
}

Event& TraceBuilder::Create(int64_t ts, format::HandleType type, uint64_t handle, uint32_t tid) {
  Event& e = Add(EventType::kCreate, ts);
  e.tid = tid;
  e.kind = static_cast<uint8_t>(type);
  e.handle = handle;
  return e;
}

Event& TraceBuilder::Destroy(int64_t ts, format::HandleType type, uint64_t handle, uint32_t tid) {
  Event& e = Add(EventType::kDestroy, ts);
  e.tid = tid;
  e.kind = static_cast<uint8_t>(type);
  e.handle = handle;
  return e;
}

Event& TraceBuilder::Gauge(int64_t ts, std::string_view name, int64_t value, uint64_t pool) {
  Event& e = Add(EventType::kGauge, ts);
  e.device = 0;
  e.name = Str(name);
  e.value = value;
  e.handle = pool;
  return e;
}

Event& TraceBuilder::Region(int64_t ts, uint64_t heap, uint64_t addr, uint64_t size, uint32_t tid) {
  Event& e = Add(EventType::kRegion, ts);
  e.tid = tid;
  e.aux = heap;
  e.addr = addr;
  e.size = size;
  return e;
}

Event& TraceBuilder::RegionFree(int64_t ts, uint64_t heap, uint64_t addr, uint32_t tid) {
  Event& e = Add(EventType::kRegionFree, ts);
  e.tid = tid;
  e.aux = heap;
  e.addr = addr;
  return e;
}

Event& TraceBuilder::Sample(int64_t ts, uint32_t stack, uint32_t tid) {
  Event& e = Add(EventType::kSample, ts);
  e.tid = tid;
  e.stack = stack;
  return e;
}

trace::TraceHeader TraceBuilder::header() const {
  trace::TraceHeader h;
  h.clock = format::ClockId::kSynthetic;
  h.producer = "cuclimb tests";
  return h;
}

std::string TraceBuilder::ToBinary(bool with_trailer, int zstd_level, size_t chunk_bytes,
                                   format::ChunkLayout layout) const {
  std::string out;
  trace::BinaryTraceWriter writer(header(), trace::StringSink(&out), zstd_level, chunk_bytes,
                                  layout);
  int64_t last_ts = 0;
  for (const Event& e : events_) {
    (void)writer.Add(e, strings_, stacks_);
    last_ts = std::max(last_ts, e.ts);
  }
  if (with_trailer) {
    (void)writer.Finish(last_ts, dropped_, "");
  } else {
    (void)writer.FinishWithoutTrailer();
  }
  return out;
}

std::string TraceBuilder::ToJsonLines(bool with_trailer) const {
  std::string out;
  trace::AppendHeaderLine(header(), &out);
  int64_t last_ts = 0;
  for (const Event& e : events_) {
    trace::AppendEventLine(e, strings_, stacks_, &out);
    last_ts = std::max(last_ts, e.ts);
  }
  if (with_trailer) {
    Event t = MakeEvent(EventType::kTrailer);
    t.ts = last_ts;
    t.size = events_.size();
    t.value = dropped_;
    trace::AppendEventLine(t, strings_, stacks_, &out);
  }
  return out;
}

absl::Status TraceBuilder::WriteBinary(const std::string& path, bool with_trailer) const {
  return util::WriteFile(path, ToBinary(with_trailer));
}

absl::Status TraceBuilder::WriteJsonLines(const std::string& path, bool with_trailer) const {
  return util::WriteFile(path, ToJsonLines(with_trailer));
}

std::vector<Event> ReadAll(std::string_view bytes, trace::ReadStatus* status) {
  std::vector<Event> out;
  auto reader = trace::TraceReader::FromBuffer(bytes);
  if (!reader.ok()) {
    if (status != nullptr) {
      *status = trace::ReadStatus{};
      status->reason = trace::StopReason::kCorrupt;
      status->message = std::string(reader.status().message());
    }
    return out;
  }
  Event ev{};
  while ((*reader)->Next(&ev)) out.push_back(ev);
  if (status != nullptr)
    *status = (*reader)->status();
  return out;
}

}  // namespace cuclimb::testing
