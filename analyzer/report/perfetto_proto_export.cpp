// SPDX-License-Identifier: Apache-2.0
// Trace → Perfetto protobuf, streamed (perfetto_proto_export.h).
//
// Perfetto has no "complete" slice: a slice is a BEGIN and an END event on one track, and the
// importer sorts all events by timestamp (ties keep file order) and then pairs each END with the
// innermost open slice of its track. So every track here only ever receives events that nest, in
// an order whose ties are right:
//  - NVTX push/pop ranges get a track per thread and domain (ranges of two domains need not nest)
//    and are written as they happen: BEGIN at the push, END at the pop;
//  - calls and kernels are records with a start and a duration, written as BEGIN + END when read;
//    a record goes to the first lane of its track whose last slice ended by its start, else to a
//    new lane (same name, which the UI draws as one track), so nothing on a lane overlaps;
//  - every track's timestamps are kept non-decreasing in file order.
#include "report/perfetto_proto_export.h"

#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/perfetto_packets.h"
#include "report/perfetto_tracks.h"
#include "util/saturating.h"
#include "util/status_macros.h"

namespace cuclimb::analysis {
namespace {

using format::Event;
using format::EventType;

constexpr size_t kMaxOpen = 1u << 16;  // open pushes kept per thread and domain

// Tags of the interned-name cache keys (the trace's string id in the low 32 bits).
constexpr uint64_t kApiName = uint64_t{1} << 56;
constexpr uint64_t kLaunchName = uint64_t{2} << 56;
constexpr uint64_t kKernelName = uint64_t{3} << 56;
constexpr uint64_t kHandleCallName = uint64_t{4} << 56;
constexpr uint64_t kVmmCallName = uint64_t{5} << 56;

template <size_t N>
const char* EnumName(const char* const (&names)[N], uint8_t v) {
  return v < N ? names[v] : "unknown";
}

struct OpenRange {
  int64_t ts;
  uint32_t name;
  int64_t payload;
  bool written;  // its BEGIN is in the output
};

// NVTX push/pop ranges of one thread in one domain, on their own track.
struct DomainTrack {
  uint64_t uuid = 0;
  uint32_t domain = format::kNoString;
  int64_t last_ts = std::numeric_limits<int64_t>::min();
  std::vector<OpenRange> stack;
};

struct StartedRange {
  int64_t ts;
  uint32_t name, domain;
  int64_t payload;
};

class ProtoExporter {
 public:
  ProtoExporter(trace::TraceReader* reader, const RankReport& rank, PerfettoPacketWriter* out,
                const ExportWindow& window)
      : reader_(reader),
        rank_(rank),
        out_(out),
        window_(window),
        tracks_(out, rank.process.pid > 0 ? rank.process.pid : 1, ProcessName(rank),
                ThreadNames(rank)) {
    // Packet timestamps are unsigned: a trace that starts before its base clock is shifted.
    offset_ = rank.trace.first_ts_ns < 0 ? -rank.trace.first_ts_ns : 0;
  }

  void Start() {
    iterations_uuid_ = tracks_.Child(tracks_.process(), "iterations", -2);
    step_time_uuid_ = tracks_.Counter(tracks_.process(), "step time", CounterUnit::kTimeNs, -1,
                                      "duration of each iteration, at its start");
    const std::vector<IterationSpan>& spans = rank_.iterations.spans;
    int64_t last_end = std::numeric_limits<int64_t>::min();
    for (int64_t i = window_.first; i < window_.end && i < static_cast<int64_t>(spans.size());
         ++i) {
      const IterationSpan& s = spans[static_cast<size_t>(i)];
      // Iterations follow each other; should two overlap, the later starts where the earlier
      // ends, so that the track's slices still pair as written.
      const int64_t start = std::max(s.start_ns, last_end);
      last_end = std::max(s.end_ns, start);
      out_->BeginEvent(T(start), iterations_uuid_, SliceType::kBegin, 0);
      out_->AbsoluteTime();  // written ahead of the events, which keep the delta clock
      out_->Name(absl::StrCat("iteration ", i));
      out_->ArgInt("iteration", i);
      if (s.payload != 0)
        out_->ArgInt("payload", s.payload);
      out_->ExtraCounter(step_time_uuid_, s.end_ns - s.start_ns);
      out_->EndEvent();
      out_->BeginEvent(T(last_end), iterations_uuid_, SliceType::kEnd, 0);
      out_->AbsoluteTime();
      out_->EndEvent();
    }
  }

  void Process(const Event& ev) {
    if (!counters_started_ && In(ev.ts)) {
      counters_started_ = true;
      InitialCounters();
    }
    switch (ev.type) {
      case EventType::kPush:
        return Push(ev);
      case EventType::kPop:
        return Pop(ev);
      case EventType::kRangeStart:
        if (starts_.size() < kMaxOpen)
          starts_[ev.addr] = {ev.ts, ev.name, ev.domain, ev.value};
        return;
      case EventType::kRangeEnd:
        return RangeEnd(ev);
      case EventType::kMark:
        return Mark(ev);
      case EventType::kApi:
        if (BeginCall(ev, out_->NameIid(kApiName | ev.api, [&] { return Str(ev.api); }))) {
          if (ev.value != 0)
            out_->ArgInt("result", ev.value);
          EndCall();
        }
        return;
      case EventType::kLaunch:
        return Launch(ev);
      case EventType::kAlloc:
        return Alloc(ev);
      case EventType::kFree:
        return Free(ev);
      case EventType::kSync:
        if (BeginCall(ev, out_->NameIid(kApiName | ev.api, [&] { return Str(ev.api); }))) {
          out_->ArgString("kind", EnumName(format::kSyncKindNames, ev.kind));
          EndCall();
        }
        return;
      case EventType::kCopy:
        if (BeginCall(ev, out_->NameIid(kApiName | ev.api, [&] { return Str(ev.api); }))) {
          out_->ArgString("kind", EnumName(format::kCopyKindNames, ev.kind));
          out_->ArgUInt("bytes", ev.size);
          EndCall();
        }
        return;
      case EventType::kVmm:
        return Vmm(ev);
      case EventType::kCreate:
      case EventType::kDestroy:
        return Handle(ev);
      case EventType::kKernel:
        return Kernel(ev);
      case EventType::kGauge:
        return Gauge(ev);
      case EventType::kOverhead:
        if (In(ev.ts)) {
          if (self_time_uuid_ == 0)
            self_time_uuid_ =
                tracks_.Counter(tracks_.process(), "cuclimb self time", CounterUnit::kTimeNs, 1,
                                "the profiler's own time per sampling period");
          out_->BeginEvent(T(ev.ts), self_time_uuid_, SliceType::kCounter, 0);
          out_->CounterValue(ev.value);
          out_->EndEvent();
        }
        return;
      case EventType::kDrops:
        if (In(ev.ts)) {
          out_->BeginEvent(T(ev.ts), tracks_.process(), SliceType::kInstant, 0);
          out_->Name(absl::StrCat("dropped ", ev.value, " events: ", Str(ev.text)));
          out_->ArgInt("count", ev.value);
          out_->EndEvent();
        }
        return;
      case EventType::kRecording:
        if (In(ev.ts)) {
          out_->BeginEvent(T(ev.ts), tracks_.process(), SliceType::kInstant,
                           out_->NameIid(ev.value != 0 ? "recording resumed" : "recording paused"));
          out_->EndEvent();
        }
        return;
      case EventType::kHeap:
      case EventType::kHeapDestroy:
      case EventType::kHeapReset:
      case EventType::kRegion:
      case EventType::kRegionFree:
        if (In(ev.ts)) {
          const uint64_t track = ev.tid != 0 ? tracks_.Thread(ev.tid) : tracks_.process();
          out_->BeginEvent(T(ev.ts), track, SliceType::kInstant,
                           out_->NameIid(format::SpecOf(ev.type).json));
          out_->ArgPointer("addr", ev.addr);
          out_->ArgUInt("bytes", ev.size);
          out_->EndEvent();
        }
        return;
      default:
        return;  // process, device, thread, mapping, sample: metadata or not drawn
    }
  }

  // Ranges still open at the end (a cut trace, a missing pop) end at the last timestamp seen.
  void Finish(int64_t last_ts) {
    const int64_t end = std::min(last_ts, window_.end_ns);
    for (auto& [key, track] : domains_) {  // the order of tracks does not matter
      if (track.stack.empty() || end < window_.start_ns)
        continue;
      WriteOpen(&track, end);
      while (!track.stack.empty()) {
        if (track.stack.back().written) {
          out_->BeginEvent(T(Monotonic(&track, end)), track.uuid, SliceType::kEnd, 0);
          out_->ArgBool("unfinished", true);
          out_->EndEvent();
        }
        track.stack.pop_back();
      }
    }
  }

  uint64_t slices_dropped() const { return tracks_.dropped(); }

 private:
  struct Live {
    uint64_t size;
    uint8_t kind;
  };

  uint64_t T(int64_t ts) const {
    const int64_t t = util::SaturatingAdd(ts, offset_);
    return t < 0 ? 0 : static_cast<uint64_t>(t);
  }
  bool In(int64_t ts) const { return ts >= window_.start_ns && ts <= window_.end_ns; }
  std::string Str(uint32_t id) const { return std::string(reader_->Str(id)); }
  absl::string_view S(uint32_t id) const {  // for StrCat (Abseil's string_view is its own here)
    const std::string_view s = reader_->Str(id);
    return absl::string_view(s.data(), s.size());
  }
  std::string RangeName(uint32_t name, uint32_t domain) const {
    if (domain == format::kNoString)
      return Str(name);
    return absl::StrCat(S(domain), "::", S(name));
  }
  uint64_t RangeNameIid(uint32_t name, uint32_t domain) {
    const uint64_t key = (uint64_t{domain} << 32) | name;
    auto it = range_names_.find(key);
    if (it != range_names_.end())
      return it->second;
    const uint64_t iid = out_->NameIid(RangeName(name, domain));
    range_names_.emplace(key, iid);
    return iid;
  }

  static std::string ProcessName(const RankReport& rank) {
    std::string cmd = rank.process.cmd.empty() ? rank.process.exe : rank.process.cmd;
    if (cmd.empty())
      cmd = rank.trace.path;
    return rank.process.rank >= 0 ? absl::StrCat("rank ", rank.process.rank, ": ", cmd) : cmd;
  }
  static absl::flat_hash_map<uint32_t, std::string> ThreadNames(const RankReport& rank) {
    absl::flat_hash_map<uint32_t, std::string> names;
    for (const ThreadInfo& t : rank.threads) names[t.tid] = t.name;
    return names;
  }
  DomainTrack& Domain(uint32_t tid, uint32_t domain) {
    auto [it, fresh] = domains_.try_emplace((uint64_t{tid} << 32) | domain);
    if (fresh) {
      const std::string name =
          domain == format::kNoString ? "NVTX" : absl::StrCat("NVTX ", S(domain));
      it->second.uuid = tracks_.Child(tracks_.Thread(tid), name, 1);
      it->second.domain = domain;
    }
    return it->second;
  }
  std::string DeviceName(int64_t device) const {
    for (const DeviceInfo& d : rank_.process.devices) {
      if (d.ordinal == device)
        return d.name;
    }
    return "";
  }

  // ---- NVTX
  int64_t Monotonic(DomainTrack* t, int64_t ts) {
    t->last_ts = std::max(t->last_ts, ts);
    return t->last_ts;
  }
  // Writes the BEGIN of every open range of `t` not yet written (outermost first), clipped to
  // the window's start. A range that starts after `now` (or the window) stays unwritten, and so
  // do those inside it, so that BEGINs always go out outermost first.
  void WriteOpen(DomainTrack* t, int64_t now) {
    for (OpenRange& o : t->stack) {
      if (o.written)
        continue;
      if (o.ts > window_.end_ns || o.ts > now)
        break;
      o.written = true;
      out_->BeginEvent(T(Monotonic(t, std::max(o.ts, window_.start_ns))), t->uuid,
                       SliceType::kBegin, RangeNameIid(o.name, t->domain));
      if (o.payload != 0)
        out_->ArgInt("payload", o.payload);
      out_->EndEvent();
    }
  }
  void Push(const Event& ev) {
    DomainTrack& t = Domain(ev.tid, ev.domain);
    if (t.stack.size() >= kMaxOpen)
      return;
    t.stack.push_back({ev.ts, ev.name, ev.value, false});
    if (In(ev.ts))
      WriteOpen(&t, ev.ts);
  }
  void Pop(const Event& ev) {
    auto it = domains_.find((uint64_t{ev.tid} << 32) | ev.domain);
    if (it == domains_.end() || it->second.stack.empty())
      return;
    DomainTrack& t = it->second;
    if (ev.ts >= window_.start_ns)
      WriteOpen(&t, ev.ts);
    const OpenRange o = t.stack.back();
    t.stack.pop_back();
    if (!o.written)
      return;
    out_->BeginEvent(T(Monotonic(&t, std::min(ev.ts, window_.end_ns))), t.uuid, SliceType::kEnd, 0);
    if (o.ts < window_.start_ns || ev.ts > window_.end_ns)
      out_->ArgBool("clipped", true);
    out_->EndEvent();
  }
  void Mark(const Event& ev) {
    if (!In(ev.ts))
      return;
    DomainTrack& t = Domain(ev.tid, ev.domain);
    out_->BeginEvent(T(Monotonic(&t, ev.ts)), t.uuid, SliceType::kInstant,
                     RangeNameIid(ev.name, ev.domain));
    out_->EndEvent();
  }
  // NVTX start/end ranges may overlap anything: lanes of their own under the process.
  void RangeEnd(const Event& ev) {
    auto it = starts_.find(ev.addr);
    if (it == starts_.end())
      return;
    const StartedRange s = it->second;
    starts_.erase(it);
    if (ev.ts < window_.start_ns || s.ts > window_.end_ns)
      return;
    const int64_t a = std::max(s.ts, window_.start_ns),
                  b = std::max(a, std::min(ev.ts, window_.end_ns));
    const uint64_t lane = tracks_.AsyncRangeLane(a, b);
    if (lane == 0)
      return;
    out_->BeginEvent(T(a), lane, SliceType::kBegin, RangeNameIid(s.name, s.domain));
    if (s.payload != 0)
      out_->ArgInt("payload", s.payload);
    out_->EndEvent();
    out_->BeginEvent(T(b), lane, SliceType::kEnd, 0);
    out_->EndEvent();
  }

  // ---- calls: BeginCall writes the BEGIN's common part (false: nothing to write), the caller
  // adds its arguments, EndCall closes the BEGIN and writes the END.
  bool BeginCall(const Event& ev, uint64_t name_iid) {
    if (!In(ev.ts))
      return false;
    const int64_t end = ev.ts + std::max<int64_t>(ev.dur, 0);
    call_track_ = tracks_.CallLane(ev.tid, ev.ts, end);
    if (call_track_ == 0)
      return false;
    call_end_ = end;
    out_->BeginEvent(T(ev.ts), call_track_, SliceType::kBegin, name_iid);
    return true;
  }
  void EndCall() {
    out_->EndEvent();
    out_->BeginEvent(T(call_end_), call_track_, SliceType::kEnd, 0);
    out_->EndEvent();
  }
  void Launch(const Event& ev) {
    const uint64_t name =
        out_->NameIid(kLaunchName | ev.name, [&] { return absl::StrCat("launch ", Str(ev.name)); });
    if (!BeginCall(ev, name))
      return;
    // A launch is the commonest record: its arguments are interned strings (1-2 bytes each).
    auto [stream, fresh_stream] = stream_iids_.try_emplace(ev.stream, 0);
    if (fresh_stream)
      stream->second = out_->StringIid(absl::StrFormat("0x%x", ev.stream));
    out_->ArgStringIid("stream", stream->second);
    const std::array<uint32_t, 6> dims = {ev.grid[0],  ev.grid[1],  ev.grid[2],
                                          ev.block[0], ev.block[1], ev.block[2]};
    auto [shape, fresh_shape] = dims_iids_.try_emplace(dims, 0);
    if (fresh_shape) {
      shape->second = out_->StringIid(absl::StrFormat("grid [%d,%d,%d] block [%d,%d,%d]", dims[0],
                                                      dims[1], dims[2], dims[3], dims[4], dims[5]));
    }
    out_->ArgStringIid("dims", shape->second);
    if (ev.corr != 0)
      out_->FlowOut(ev.corr);  // ends at the kernel with the same correlation id
    EndCall();
  }
  void Vmm(const Event& ev) {
    const char* op = EnumName(format::kVmmOpNames, ev.kind);
    const uint64_t name =
        ev.api != 0 ? out_->NameIid(kApiName | ev.api, [&] { return Str(ev.api); })
                    : out_->NameIid(kVmmCallName | ev.kind, [&] { return std::string(op); });
    if (!BeginCall(ev, name))
      return;
    out_->ArgString("op", op);
    out_->ArgUInt("bytes", ev.size);
    EndCall();
  }

  // ---- live memory and handles, as counters
  struct KindTotal {
    int64_t bytes = 0, count = 0;
    uint64_t bytes_uuid = 0, count_uuid = 0;
  };
  KindTotal& Kind(uint8_t kind) {
    KindTotal& k = kinds_[kind < kinds_.size() ? kind : 0];
    if (k.bytes_uuid == 0) {
      const char* name = EnumName(format::kMemoryKindNames, kind);
      k.bytes_uuid = tracks_.Counter(tracks_.process(), absl::StrCat("live bytes: ", name),
                                     CounterUnit::kBytes, 2);
      k.count_uuid = tracks_.Counter(tracks_.process(), absl::StrCat("live allocations: ", name),
                                     CounterUnit::kCount, 3);
    }
    return k;
  }
  void Account(const Live& l, int sign) {
    KindTotal& k = Kind(l.kind);
    const int64_t bytes = util::SaturatingInt64(l.size);  // saturating: sizes are the trace's
    k.bytes = sign > 0 ? util::SaturatingAdd(k.bytes, bytes) : util::SaturatingSub(k.bytes, bytes);
    k.count += sign;
  }
  void InitialCounters() {
    const uint64_t ts =
        T(window_.start_ns == std::numeric_limits<int64_t>::min() ? rank_.trace.first_ts_ns
                                                                  : window_.start_ns);
    for (const KindTotal& k : kinds_) {
      if (k.bytes_uuid == 0)
        continue;
      for (const auto& [uuid, v] : {std::pair{k.bytes_uuid, k.bytes}, {k.count_uuid, k.count}}) {
        out_->BeginEvent(ts, uuid, SliceType::kCounter, 0);
        out_->CounterValue(v);
        out_->EndEvent();
      }
    }
    for (const HandleTotal& h : handles_) {
      if (h.uuid == 0)
        continue;
      out_->BeginEvent(ts, h.uuid, SliceType::kCounter, 0);
      out_->CounterValue(h.count);
      out_->EndEvent();
    }
  }
  void Alloc(const Event& ev) {
    auto [it, fresh] = live_.try_emplace(ev.addr, Live{ev.size, ev.kind});
    if (!fresh)
      Account(it->second, -1);  // an address allocated again without a free
    it->second = Live{ev.size, ev.kind};
    Account(it->second, +1);
    const uint64_t name = AllocNameIid(ev.api, ev.size);
    if (!BeginCall(ev, name))
      return;
    out_->ArgPointer("addr", ev.addr);
    out_->ArgUInt("bytes", ev.size);
    out_->ArgString("kind", EnumName(format::kMemoryKindNames, ev.kind));
    const KindTotal& k = Kind(ev.kind);
    out_->ExtraCounter(k.bytes_uuid, k.bytes);
    out_->ExtraCounter(k.count_uuid, k.count);
    EndCall();
  }
  void Free(const Event& ev) {
    auto it = live_.find(ev.addr);
    uint64_t size = ev.size;
    const KindTotal* k = nullptr;
    if (it != live_.end()) {
      size = it->second.size;
      Account(it->second, -1);
      k = &Kind(it->second.kind);
      live_.erase(it);
    }
    if (!BeginCall(ev, out_->NameIid(kApiName | ev.api, [&] { return Str(ev.api); })))
      return;
    out_->ArgPointer("addr", ev.addr);
    out_->ArgUInt("bytes", size);
    if (k != nullptr) {
      out_->ExtraCounter(k->bytes_uuid, k->bytes);
      out_->ExtraCounter(k->count_uuid, k->count);
    }
    EndCall();
  }
  // "cuMemAllocAsync 512 B": sizes repeat, so the name is interned per (API, size).
  uint64_t AllocNameIid(uint32_t api, uint64_t size) {
    auto [it, fresh] = alloc_names_.try_emplace(std::pair{api, size}, 0);
    if (fresh)
      it->second = out_->NameIid(absl::StrCat(S(api), " ", size, " B"));
    return it->second;
  }

  struct HandleTotal {
    int64_t count = 0;
    uint64_t uuid = 0;
  };
  void Handle(const Event& ev) {
    HandleTotal& h = handles_[ev.kind < handles_.size() ? ev.kind : 0];
    const char* type = EnumName(format::kHandleTypeNames, ev.kind);
    if (h.uuid == 0)
      h.uuid = tracks_.Counter(tracks_.process(), absl::StrCat("live handles: ", type),
                               CounterUnit::kCount, 4);
    h.count += ev.type == EventType::kCreate ? 1 : -1;
    const uint64_t name =
        ev.api != 0
            ? out_->NameIid(kApiName | ev.api, [&] { return Str(ev.api); })
            : out_->NameIid(
                  kHandleCallName | (uint64_t{ev.type == EventType::kCreate} << 8) | ev.kind, [&] {
                    return absl::StrCat(ev.type == EventType::kCreate ? "create " : "destroy ",
                                        type);
                  });
    if (!BeginCall(ev, name))
      return;
    out_->ArgPointer("handle", ev.handle);
    out_->ArgString("type", type);
    out_->ExtraCounter(h.uuid, h.count);
    EndCall();
  }

  // ---- GPU
  void Kernel(const Event& ev) {
    if (!In(ev.ts))
      return;
    const int64_t device = ev.device >= 0 ? ev.device : 0;
    const int64_t end = ev.ts + std::max<int64_t>(ev.dur, 0);
    const uint64_t lane = tracks_.StreamLane(device, ev.stream, ev.ts, end, DeviceName(device));
    if (lane == 0)
      return;
    out_->BeginEvent(T(ev.ts), lane, SliceType::kBegin,
                     out_->NameIid(kKernelName | ev.name, [&] { return Str(ev.name); }));
    if (ev.corr != 0)
      out_->FlowEnd(ev.corr);
    out_->EndEvent();
    out_->BeginEvent(T(end), lane, SliceType::kEnd, 0);
    out_->EndEvent();
  }
  void Gauge(const Event& ev) {
    if (!In(ev.ts))
      return;
    auto [it, fresh] = gauges_.try_emplace(std::tuple{ev.name, ev.handle, ev.device}, 0);
    if (fresh) {
      std::string name = Str(ev.name);
      if (ev.handle != 0)
        absl::StrAppend(&name, absl::StrFormat(" pool 0x%x", ev.handle));
      if (ev.device >= 0)
        absl::StrAppend(&name, " (GPU ", ev.device, ")");
      it->second = tracks_.Counter(tracks_.process(), name, CounterUnit::kUnspecified, 5);
    }
    out_->BeginEvent(T(ev.ts), it->second, SliceType::kCounter, 0);
    out_->CounterValue(ev.value);
    out_->EndEvent();
  }

  trace::TraceReader* reader_;
  const RankReport& rank_;
  PerfettoPacketWriter* out_;
  const ExportWindow window_;
  PerfettoTracks tracks_;
  int64_t offset_ = 0;
  uint64_t iterations_uuid_ = 0, step_time_uuid_ = 0, self_time_uuid_ = 0;
  uint64_t call_track_ = 0;
  int64_t call_end_ = 0;
  bool counters_started_ = false;
  absl::flat_hash_map<uint64_t, DomainTrack> domains_;
  absl::flat_hash_map<uint64_t, StartedRange> starts_;
  absl::flat_hash_map<std::tuple<uint32_t, uint64_t, int32_t>, uint64_t> gauges_;
  absl::flat_hash_map<uint64_t, uint64_t> range_names_;
  absl::flat_hash_map<uint64_t, uint64_t> stream_iids_;
  absl::flat_hash_map<std::array<uint32_t, 6>, uint64_t> dims_iids_;
  absl::flat_hash_map<std::pair<uint32_t, uint64_t>, uint64_t> alloc_names_;
  absl::flat_hash_map<uint64_t, Live> live_;
  std::array<KindTotal, static_cast<size_t>(format::MemoryKind::kCount)> kinds_{};
  std::array<HandleTotal, static_cast<size_t>(format::HandleType::kCount)> handles_{};
};

}  // namespace

absl::StatusOr<PerfettoStats> ExportPerfettoProto(
    trace::TraceReader* reader, const RankReport& rank, const PerfettoOptions& options,
    const std::function<absl::Status(std::string_view)>& write) {
  CUCLIMB_ASSIGN_OR_RETURN(const ExportWindow window, ResolveExportWindow(rank, options));
  PerfettoStats stats;
  stats.iterations = window.end - window.first;
  stats.window_start_ns = window.cut ? window.start_ns : rank.trace.first_ts_ns;
  stats.window_end_ns = window.cut ? window.end_ns : rank.trace.last_ts_ns;
  PerfettoPacketWriter out(write, options.compress_packets);
  ProtoExporter ex(reader, rank, &out, window);
  ex.Start();
  Event ev{};
  int64_t last_ts = 0;
  while (reader->Next(&ev)) {
    if ((++stats.events_read & ((1u << 20) - 1)) == 0 && options.progress)
      options.progress(reader->bytes_consumed(), reader->total_bytes(), stats.events_read);
    last_ts = std::max(last_ts, ev.ts);
    ex.Process(ev);
    if (!out.status().ok())
      return out.status();
  }
  ex.Finish(last_ts);
  CUCLIMB_RETURN_IF_ERROR(out.Flush());
  stats.trace_events_written = out.packets();
  stats.slices_dropped = ex.slices_dropped();
  return stats;
}

}  // namespace cuclimb::analysis
