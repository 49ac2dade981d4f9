// SPDX-License-Identifier: Apache-2.0
// Trace → Chrome JSON trace events, streamed (perfetto_export.h).
//
// Slices are written as complete events ("X") when they end: NVTX push/pop pairs of different
// domains need not nest on a thread, so B/E pairs could mismatch, and an X needs no partner.
// The writer keeps only what is open (push stacks, start/end ranges) and the live-memory state
// behind the counters, so memory does not grow with the trace. Events come out in read order,
// roughly by time; both viewers sort on load.
#include "report/perfetto_export.h"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "util/saturating.h"
#include "util/status_macros.h"

namespace cuclimb::analysis {
namespace {

using format::Event;
using format::EventType;

constexpr size_t kFlushBytes = 1u << 20;
constexpr int64_t kGpuPidBase = 1 << 30;         // device N's process id: kGpuPidBase + N
constexpr uint32_t kIterationsTid = 0x7ffffff0;  // the host process's "iterations" track
constexpr size_t kMaxOpen = 1u << 16;            // open pushes / start-end ranges kept per key

// Timestamps in microseconds with nanosecond digits, without going through a double.
std::string Us(int64_t ns) {
  const bool neg = ns < 0;
  const uint64_t a = neg ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  return absl::StrFormat("%s%d.%03d", neg ? "-" : "", a / 1000, a % 1000);
}

template <size_t N>
const char* EnumName(const char* const (&names)[N], uint8_t v) {
  return v < N ? names[v] : "unknown";
}

std::string Q(absl::string_view s) {
  return JsonQuote(std::string_view(s.data(), s.size()));
}

class Writer {
 public:
  explicit Writer(const std::function<absl::Status(std::string_view)>& write) : write_(write) {}

  absl::Status Begin(absl::string_view other_data) {
    buf_ = absl::StrCat("{\"displayTimeUnit\":\"ns\",\"otherData\":", other_data,
                        ",\"traceEvents\":[\n");
    return absl::OkStatus();
  }
  // One trace event object (without braces' commas): `body` is `"ph":...` etc.
  absl::Status Add(absl::string_view body) {
    if (count_++ > 0)
      buf_.append(",\n");
    buf_.push_back('{');
    buf_.append(body.data(), body.size());
    buf_.push_back('}');
    if (buf_.size() >= kFlushBytes)
      return Flush();
    return absl::OkStatus();
  }
  absl::Status End() {
    buf_.append("\n]}\n");
    return Flush();
  }
  uint64_t count() const { return count_; }

 private:
  absl::Status Flush() {
    absl::Status s = write_(std::string_view(buf_));
    buf_.clear();
    return s;
  }
  const std::function<absl::Status(std::string_view)>& write_;
  std::string buf_;
  uint64_t count_ = 0;
};

class Exporter {
 public:
  Exporter(trace::TraceReader* reader, const RankReport& rank, Writer* out, int64_t w0, int64_t w1)
      : reader_(reader), rank_(rank), out_(out), w0_(w0), w1_(w1) {
    pid_ = rank.process.pid > 0 ? rank.process.pid : 1;
  }

  absl::Status Metadata(int64_t first, int64_t end) {
    std::string cmd = rank_.process.cmd.empty() ? rank_.process.exe : rank_.process.cmd;
    if (cmd.empty())
      cmd = rank_.trace.path;
    CUCLIMB_RETURN_IF_ERROR(Meta(pid_, 0, "process_name", cmd));
    CUCLIMB_RETURN_IF_ERROR(Meta(pid_, 0, "process_sort_index", "", 0));
    for (const ThreadInfo& t : rank_.threads) CUCLIMB_RETURN_IF_ERROR(ThreadName(t.tid, t.name));
    CUCLIMB_RETURN_IF_ERROR(Meta(pid_, kIterationsTid, "thread_name", "iterations"));
    CUCLIMB_RETURN_IF_ERROR(Meta(pid_, kIterationsTid, "thread_sort_index", "", -1));
    const std::vector<IterationSpan>& spans = rank_.iterations.spans;
    for (int64_t i = first; i < end && i < static_cast<int64_t>(spans.size()); ++i) {
      const IterationSpan& s = spans[static_cast<size_t>(i)];
      CUCLIMB_RETURN_IF_ERROR(Slice(
          pid_, kIterationsTid, s.start_ns, s.end_ns - s.start_ns, absl::StrCat("iteration ", i),
          absl::StrCat("\"iteration\":", i, ",\"payload\":", s.payload), "iteration"));
    }
    return absl::OkStatus();
  }

  absl::Status Process(const Event& ev) {
    if (!counters_started_ && ev.ts >= w0_ && ev.ts <= w1_) {
      counters_started_ = true;
      CUCLIMB_RETURN_IF_ERROR(EmitMemoryCounters(w0_));
      CUCLIMB_RETURN_IF_ERROR(EmitHandleCounters(w0_));
    }
    switch (ev.type) {
      case EventType::kPush: {
        auto& stack = pushes_[PushKey(ev.tid, ev.domain)];
        if (stack.size() < kMaxOpen)
          stack.push_back({ev.ts, ev.name, ev.value});
        return absl::OkStatus();
      }
      case EventType::kPop: {
        auto it = pushes_.find(PushKey(ev.tid, ev.domain));
        if (it == pushes_.end() || it->second.empty())
          return absl::OkStatus();
        const Open o = it->second.back();
        it->second.pop_back();
        return ClippedSlice(pid_, ev.tid, o.ts, ev.ts, RangeName(o.name, ev.domain), "nvtx",
                            o.payload != 0 ? absl::StrCat("\"payload\":", o.payload) : "");
      }
      case EventType::kRangeStart:
        if (starts_.size() < kMaxOpen)
          starts_[ev.addr] = {ev.ts, ev.name, ev.value, ev.tid, ev.domain};
        return absl::OkStatus();
      case EventType::kRangeEnd: {
        auto it = starts_.find(ev.addr);
        if (it == starts_.end())
          return absl::OkStatus();
        const StartedRange s = it->second;
        starts_.erase(it);
        return AsyncRange(s, ev);
      }
      case EventType::kMark:
        return Instant(ev, RangeName(ev.name, ev.domain), "t", "nvtx", "");
      case EventType::kApi:
        return Call(ev, Str(ev.api), ev.value != 0 ? absl::StrCat("\"result\":", ev.value) : "");
      case EventType::kLaunch:
        return Call(ev, absl::StrCat("launch ", Str(ev.name)),
                    absl::StrCat("\"kernel\":", Q(Str(ev.name)), ",\"api\":", Q(Str(ev.api)),
                                 ",\"stream\":\"", Hex(ev.stream), "\",\"grid\":", Dims(ev.grid),
                                 ",\"block\":", Dims(ev.block)));
      case EventType::kAlloc:
        return Alloc(ev);
      case EventType::kFree:
        return Free(ev);
      case EventType::kSync:
        return Call(ev, Str(ev.api),
                    absl::StrCat("\"kind\":\"", EnumName(format::kSyncKindNames, ev.kind), "\""));
      case EventType::kCopy:
        return Call(ev, Str(ev.api),
                    absl::StrCat("\"kind\":\"", EnumName(format::kCopyKindNames, ev.kind),
                                 "\",\"bytes\":", ev.size));
      case EventType::kVmm:
        return Call(ev,
                    ev.api != 0 ? std::string(Str(ev.api)) : EnumName(format::kVmmOpNames, ev.kind),
                    absl::StrCat("\"op\":\"", EnumName(format::kVmmOpNames, ev.kind),
                                 "\",\"bytes\":", ev.size));
      case EventType::kCreate:
      case EventType::kDestroy:
        return Handle(ev);
      case EventType::kKernel:
        return Kernel(ev);
      case EventType::kGauge:
        return Gauge(ev);
      case EventType::kOverhead:
        if (!In(ev.ts))
          return absl::OkStatus();
        return Counter(ev.ts, "cuclimb self time (us per period)",
                       absl::StrCat("\"self_us\":", Us(ev.value), ",\"events\":", ev.size));
      case EventType::kDrops:
        return Instant(ev, absl::StrCat("dropped ", ev.value, " events: ", Str(ev.text)), "g",
                       "cuclimb",
                       absl::StrCat("\"count\":", ev.value, ",\"reason\":", Q(Str(ev.text))));
      case EventType::kRecording:
        return Instant(ev, ev.value != 0 ? "recording resumed" : "recording paused", "g", "cuclimb",
                       "");
      case EventType::kHeap:
      case EventType::kHeapDestroy:
      case EventType::kHeapReset:
      case EventType::kRegion:
      case EventType::kRegionFree:
        return Instant(ev, format::SpecOf(ev.type).json, "t", "nvtx_memory",
                       absl::StrCat("\"addr\":\"", Hex(ev.addr), "\",\"bytes\":", ev.size));
      default:
        return absl::OkStatus();  // process, device, thread, mapping, sample: metadata or not drawn
    }
  }

  // Slices still open at the end (a cut trace, a missing pop) end at the last timestamp seen.
  absl::Status Finish(int64_t last_ts) {
    for (auto& [key, stack] : pushes_) {
      const uint32_t tid = static_cast<uint32_t>(key >> 32);
      for (const Open& o : stack) {
        CUCLIMB_RETURN_IF_ERROR(ClippedSlice(pid_, tid, o.ts, std::max(o.ts, last_ts),
                                             RangeName(o.name, static_cast<uint32_t>(key)), "nvtx",
                                             "\"unfinished\":true"));
      }
    }
    pushes_.clear();
    return absl::OkStatus();
  }

 private:
  struct Open {
    int64_t ts;
    uint32_t name;
    int64_t payload;
  };
  struct StartedRange {
    int64_t ts;
    uint32_t name;
    int64_t payload;
    uint32_t tid, domain;
  };
  struct Live {
    uint64_t size;
    uint8_t kind;
  };

  static uint64_t PushKey(uint32_t tid, uint32_t domain) { return (uint64_t{tid} << 32) | domain; }
  static std::string Hex(uint64_t v) { return absl::StrFormat("0x%x", v); }
  static std::string Dims(const uint32_t (&d)[3]) {
    return absl::StrFormat("[%d,%d,%d]", d[0], d[1], d[2]);
  }

  absl::string_view Str(uint32_t id) const {
    const std::string_view s = reader_->Str(id);
    return absl::string_view(s.data(), s.size());
  }
  std::string RangeName(uint32_t name, uint32_t domain) const {
    if (domain == format::kNoString)
      return std::string(Str(name));
    return absl::StrCat(Str(domain), "::", Str(name));
  }
  bool In(int64_t ts) const { return ts >= w0_ && ts <= w1_; }

  absl::Status Meta(int64_t pid, uint32_t tid, absl::string_view what, absl::string_view name,
                    int64_t sort = 0) {
    if (what == "process_sort_index" || what == "thread_sort_index") {
      return out_->Add(absl::StrCat("\"ph\":\"M\",\"pid\":", pid, ",\"tid\":", tid, ",\"name\":\"",
                                    what, "\",\"args\":{\"sort_index\":", sort, "}"));
    }
    return out_->Add(absl::StrCat("\"ph\":\"M\",\"pid\":", pid, ",\"tid\":", tid, ",\"name\":\"",
                                  what, "\",\"args\":{\"name\":", Q(name), "}"));
  }
  absl::Status ThreadName(uint32_t tid, absl::string_view name) {
    if (!named_threads_.insert({tid, true}).second)
      return absl::OkStatus();
    return Meta(pid_, tid, "thread_name",
                name.empty() ? absl::StrCat("thread ", tid) : std::string(name));
  }
  absl::Status Slice(int64_t pid, uint32_t tid, int64_t ts, int64_t dur, absl::string_view name,
                     absl::string_view args, absl::string_view cat = "cuda") {
    return out_->Add(absl::StrCat(
        "\"ph\":\"X\",\"pid\":", pid, ",\"tid\":", tid, ",\"ts\":", Us(ts),
        ",\"dur\":", Us(std::max<int64_t>(dur, 0)), ",\"cat\":\"", cat, "\",\"name\":", Q(name),
        args.empty() ? "" : ",\"args\":{", args, args.empty() ? "" : "}"));
  }
  // A slice from start to end, clipped to the window; nothing when outside it.
  absl::Status ClippedSlice(int64_t pid, uint32_t tid, int64_t start, int64_t end,
                            absl::string_view name, absl::string_view cat, absl::string_view args) {
    if (end < w0_ || start > w1_)
      return absl::OkStatus();
    const bool clipped = start < w0_ || end > w1_;
    const int64_t a = std::max(start, w0_), b = std::min(end, w1_);
    CUCLIMB_RETURN_IF_ERROR(ThreadName(tid, ""));
    std::string all(args);
    if (clipped)
      absl::StrAppend(&all, all.empty() ? "" : ",", "\"clipped\":true");
    return Slice(pid, tid, a, b - a, name, all, cat);
  }
  absl::Status Call(const Event& ev, absl::string_view name, absl::string_view args) {
    if (!In(ev.ts))
      return absl::OkStatus();
    CUCLIMB_RETURN_IF_ERROR(ThreadName(ev.tid, ""));
    std::string all(args);
    if (ev.corr != 0)
      absl::StrAppend(&all, all.empty() ? "" : ",", "\"corr\":", ev.corr);
    return Slice(pid_, ev.tid, ev.ts, ev.dur, name, all);
  }
  absl::Status Instant(const Event& ev, absl::string_view name, absl::string_view scope,
                       absl::string_view cat, absl::string_view args) {
    if (!In(ev.ts))
      return absl::OkStatus();
    if (ev.tid != 0)
      CUCLIMB_RETURN_IF_ERROR(ThreadName(ev.tid, ""));
    return out_->Add(absl::StrCat("\"ph\":\"i\",\"s\":\"", scope, "\",\"pid\":", pid_,
                                  ",\"tid\":", ev.tid, ",\"ts\":", Us(ev.ts), ",\"cat\":\"", cat,
                                  "\",\"name\":", Q(name), args.empty() ? "" : ",\"args\":{", args,
                                  args.empty() ? "" : "}"));
  }
  absl::Status AsyncRange(const StartedRange& s, const Event& end) {
    if (end.ts < w0_ || s.ts > w1_)
      return absl::OkStatus();
    const int64_t a = std::max(s.ts, w0_), b = std::min(end.ts, w1_);
    const std::string name = Q(RangeName(s.name, s.domain));
    const std::string common =
        absl::StrCat(",\"pid\":", pid_, ",\"tid\":", s.tid, ",\"cat\":\"nvtx\",\"id\":\"",
                     Hex(end.addr), "\",\"name\":", name);
    CUCLIMB_RETURN_IF_ERROR(out_->Add(absl::StrCat(
        "\"ph\":\"b\",\"ts\":", Us(a), common,
        s.payload != 0 ? absl::StrCat(",\"args\":{\"payload\":", s.payload, "}") : "")));
    return out_->Add(absl::StrCat("\"ph\":\"e\",\"ts\":", Us(b), common));
  }
  absl::Status Counter(int64_t ts, absl::string_view name, absl::string_view args) {
    return out_->Add(absl::StrCat("\"ph\":\"C\",\"pid\":", pid_, ",\"ts\":", Us(ts),
                                  ",\"name\":", Q(name), ",\"args\":{", args, "}"));
  }

  // Live memory by kind, and the counters drawn from it.
  absl::Status Alloc(const Event& ev) {
    auto [it, fresh] = live_.try_emplace(ev.addr, Live{ev.size, ev.kind});
    if (!fresh)
      Account(it->second, -1);  // an address allocated again without a free
    it->second = Live{ev.size, ev.kind};
    Account(it->second, +1);
    CUCLIMB_RETURN_IF_ERROR(
        Call(ev, absl::StrCat(Str(ev.api), " ", ev.size, " B"),
             absl::StrCat("\"addr\":\"", Hex(ev.addr), "\",\"bytes\":", ev.size, ",\"kind\":\"",
                          EnumName(format::kMemoryKindNames, ev.kind), "\"")));
    return In(ev.ts) ? EmitMemoryCounters(ev.ts) : absl::OkStatus();
  }
  absl::Status Free(const Event& ev) {
    auto it = live_.find(ev.addr);
    uint64_t size = ev.size;
    const bool known = it != live_.end();
    if (known) {
      size = it->second.size;
      Account(it->second, -1);
      live_.erase(it);
    }
    CUCLIMB_RETURN_IF_ERROR(
        Call(ev, Str(ev.api), absl::StrCat("\"addr\":\"", Hex(ev.addr), "\",\"bytes\":", size)));
    return In(ev.ts) && known ? EmitMemoryCounters(ev.ts) : absl::OkStatus();
  }
  void Account(const Live& l, int sign) {
    const size_t k = l.kind < kinds_.size() ? l.kind : 0;
    const int64_t bytes = util::SaturatingInt64(l.size);  // saturating: sizes are the trace's
    kinds_[k].bytes = sign > 0 ? util::SaturatingAdd(kinds_[k].bytes, bytes)
                               : util::SaturatingSub(kinds_[k].bytes, bytes);
    kinds_[k].count += sign;
    kinds_[k].seen = true;
  }
  absl::Status EmitMemoryCounters(int64_t ts) {
    std::string bytes, count;
    for (size_t k = 0; k < kinds_.size(); ++k) {
      if (!kinds_[k].seen)
        continue;
      const char* name = EnumName(format::kMemoryKindNames, static_cast<uint8_t>(k));
      absl::StrAppend(&bytes, bytes.empty() ? "" : ",", "\"", name, "\":", kinds_[k].bytes);
      absl::StrAppend(&count, count.empty() ? "" : ",", "\"", name, "\":", kinds_[k].count);
    }
    if (bytes.empty())
      return absl::OkStatus();
    CUCLIMB_RETURN_IF_ERROR(Counter(ts, "live bytes", bytes));
    return Counter(ts, "live allocations", count);
  }

  absl::Status Handle(const Event& ev) {
    const size_t k = ev.kind < handles_.size() ? ev.kind : 0;
    handles_[k].count += ev.type == EventType::kCreate ? 1 : -1;
    handles_[k].seen = true;
    const std::string name =
        absl::StrCat(ev.api != 0 ? std::string(Str(ev.api))
                                 : (ev.type == EventType::kCreate ? "create " : "destroy "),
                     ev.api != 0 ? "" : EnumName(format::kHandleTypeNames, ev.kind));
    CUCLIMB_RETURN_IF_ERROR(Call(ev, name,
                                 absl::StrCat("\"handle\":\"", Hex(ev.handle), "\",\"type\":\"",
                                              EnumName(format::kHandleTypeNames, ev.kind), "\"")));
    return In(ev.ts) ? EmitHandleCounters(ev.ts) : absl::OkStatus();
  }
  absl::Status EmitHandleCounters(int64_t ts) {
    std::string args;
    for (size_t k = 0; k < handles_.size(); ++k) {
      if (!handles_[k].seen)
        continue;
      absl::StrAppend(&args, args.empty() ? "" : ",", "\"",
                      EnumName(format::kHandleTypeNames, static_cast<uint8_t>(k)),
                      "\":", handles_[k].count);
    }
    return args.empty() ? absl::OkStatus() : Counter(ts, "live handles", args);
  }

  absl::Status Kernel(const Event& ev) {
    if (!In(ev.ts))
      return absl::OkStatus();
    const int64_t device = ev.device >= 0 ? ev.device : 0;
    const int64_t pid = kGpuPidBase + device;
    if (named_devices_.insert({device, true}).second) {
      std::string name = absl::StrCat("GPU ", device);
      for (const DeviceInfo& d : rank_.process.devices) {
        if (d.ordinal == device && !d.name.empty())
          absl::StrAppend(&name, ": ", d.name);
      }
      CUCLIMB_RETURN_IF_ERROR(Meta(pid, 0, "process_name", name));
      CUCLIMB_RETURN_IF_ERROR(Meta(pid, 0, "process_sort_index", "", 1 + device));
    }
    auto [it, fresh] = streams_.try_emplace((static_cast<uint64_t>(device) << 48) ^ ev.stream,
                                            static_cast<uint32_t>(streams_.size() + 1));
    if (fresh)
      CUCLIMB_RETURN_IF_ERROR(
          Meta(pid, it->second, "thread_name", absl::StrCat("stream ", Hex(ev.stream))));
    return Slice(pid, it->second, ev.ts, ev.dur, Str(ev.name),
                 absl::StrCat("\"corr\":", ev.corr, ",\"grid\":", Dims(ev.grid),
                              ",\"block\":", Dims(ev.block)),
                 "kernel");
  }

  absl::Status Gauge(const Event& ev) {
    if (!In(ev.ts))
      return absl::OkStatus();
    std::string name(Str(ev.name));
    if (ev.handle != 0)
      absl::StrAppend(&name, " pool ", Hex(ev.handle));
    if (ev.device >= 0)
      absl::StrAppend(&name, " (GPU ", ev.device, ")");
    return Counter(ev.ts, name, absl::StrCat("\"value\":", ev.value));
  }

  trace::TraceReader* reader_;
  const RankReport& rank_;
  Writer* out_;
  int64_t w0_, w1_;
  int64_t pid_;
  bool counters_started_ = false;
  absl::flat_hash_map<uint64_t, std::vector<Open>> pushes_;
  absl::flat_hash_map<uint64_t, StartedRange> starts_;
  absl::flat_hash_map<uint32_t, bool> named_threads_;
  absl::flat_hash_map<int64_t, bool> named_devices_;
  absl::flat_hash_map<uint64_t, uint32_t> streams_;
  absl::flat_hash_map<uint64_t, Live> live_;
  struct KindTotal {
    int64_t bytes = 0, count = 0;
    bool seen = false;
  };
  std::array<KindTotal, static_cast<size_t>(format::MemoryKind::kCount)> kinds_{};
  struct HandleTotal {
    int64_t count = 0;
    bool seen = false;
  };
  std::array<HandleTotal, static_cast<size_t>(format::HandleType::kCount)> handles_{};
};

// The length of the well-formed UTF-8 sequence that starts at s[i] (a byte ≥ 0x80), or 0.
size_t Utf8SequenceAt(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (c >= 0xF5)
    len = 0;
  bool ok = len > 0 && i + len <= s.size();
  for (size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
  if (ok && len == 3) {
    const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
    ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);  // overlong, surrogates
  } else if (ok && len == 4) {
    const unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
    ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
  }
  return ok ? len : 0;
}

}  // namespace

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      out.push_back(s[i++]);
      continue;
    }
    const size_t len = Utf8SequenceAt(s, i);
    if (len > 0) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  return out;
}

std::string JsonQuote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out.append("\\\"");
          break;
        case '\\':
          out.append("\\\\");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        case '\t':
          out.append("\\t");
          break;
        default:
          if (c < 0x20 || c == 0x7f) {
            out.append(absl::StrFormat("\\u%04x", c));
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence is copied; anything else becomes U+FFFD.
    const size_t len = Utf8SequenceAt(s, i);
    if (len > 0) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  out.push_back('"');
  return out;
}

absl::StatusOr<ExportWindow> ResolveExportWindow(const RankReport& rank,
                                                 const PerfettoOptions& options) {
  const std::vector<IterationSpan>& spans = rank.iterations.spans;
  const int64_t count = static_cast<int64_t>(spans.size());
  ExportWindow w;
  w.first = options.first_iteration;
  w.end = options.end_iteration < 0 ? count : options.end_iteration;
  w.cut = options.first_iteration != 0 || options.end_iteration >= 0;
  w.start_ns = std::numeric_limits<int64_t>::min();
  w.end_ns = std::numeric_limits<int64_t>::max();
  if (w.cut) {
    if (w.first < 0 || w.first >= w.end || w.end > count) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--iterations %d:%d is outside the trace's %d iterations (%s)", w.first,
                          w.end, count, rank.iterations.why));
    }
    w.start_ns = spans[static_cast<size_t>(w.first)].start_ns;
    w.end_ns = spans[static_cast<size_t>(w.end - 1)].end_ns;
  } else {
    w.first = 0;
    w.end = count;
  }
  return w;
}

absl::StatusOr<PerfettoStats> ExportPerfetto(
    trace::TraceReader* reader, const RankReport& rank, const PerfettoOptions& options,
    const std::function<absl::Status(std::string_view)>& write) {
  CUCLIMB_ASSIGN_OR_RETURN(const ExportWindow window, ResolveExportWindow(rank, options));
  const int64_t first = window.first, end = window.end, w0 = window.start_ns, w1 = window.end_ns;
  const bool cut = window.cut;
  PerfettoStats stats;
  stats.iterations = end - first;
  stats.window_start_ns = cut ? w0 : rank.trace.first_ts_ns;
  stats.window_end_ns = cut ? w1 : rank.trace.last_ts_ns;
  Writer out(write);
  const std::string other =
      absl::StrCat("{\"producer\":", Q(reader->header().producer),
                   ",\"exporter\":\"cuclimb export\",\"iterations\":\"", first, ":", end,
                   "\",\"iteration_source\":", Q(rank.iterations.source),
                   ",\"iteration_name\":", Q(rank.iterations.name), "}");
  CUCLIMB_RETURN_IF_ERROR(out.Begin(other));
  Exporter ex(reader, rank, &out, w0, w1);
  CUCLIMB_RETURN_IF_ERROR(ex.Metadata(first, end));
  Event ev{};
  int64_t last_ts = 0;
  while (reader->Next(&ev)) {
    if ((++stats.events_read & ((1u << 20) - 1)) == 0 && options.progress) {
      options.progress(reader->bytes_consumed(), reader->total_bytes(), stats.events_read);
    }
    last_ts = std::max(last_ts, ev.ts);
    CUCLIMB_RETURN_IF_ERROR(ex.Process(ev));
  }
  CUCLIMB_RETURN_IF_ERROR(ex.Finish(std::min(last_ts, w1)));
  stats.trace_events_written = out.count();
  CUCLIMB_RETURN_IF_ERROR(out.End());
  return stats;
}

}  // namespace cuclimb::analysis
