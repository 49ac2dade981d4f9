// SPDX-License-Identifier: Apache-2.0
// Trace summaries for the GPU checks (see trace_stats.h), and `interposer_trace_stats TRACE`,
// which prints one as JSON for scripts.
#include "trace_stats.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

namespace cuclimb::testing {

using format::Event;
using format::EventType;

namespace {

std::string KindName(const Event& ev) {
  const uint8_t k = ev.kind;
  return k < static_cast<uint8_t>(format::MemoryKind::kCount) ? format::kMemoryKindNames[k] : "?";
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out.push_back('\\');
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    out.push_back(c);
  }
  return out;
}

template <typename V>
std::string MapJson(const std::map<std::string, V>& m) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first)
      out += ", ";
    first = false;
    out += "\"" + Escape(k) + "\": " + std::to_string(v);
  }
  return out + "}";
}

}  // namespace

TraceStats Summarize(const Trace& t) {
  TraceStats s;
  std::unordered_map<uint64_t, std::pair<std::string, int64_t>> live_api;  // addr → kind, size
  std::unordered_map<uint64_t, std::pair<std::string, int64_t>> live_m2;
  std::unordered_map<uint64_t, int64_t> mapped;   // va → size
  std::unordered_map<uint64_t, int64_t> created;  // handle → size
  std::map<std::string, int64_t> current;         // kind → live bytes now (API events)
  std::set<uint64_t> launch_corrs;
  std::vector<uint64_t> kernel_corrs;
  int64_t first_ts = INT64_MAX;
  int64_t last_ts = INT64_MIN;
  for (const Event& ev : t.events) {
    ++s.by_type[format::SpecOf(ev.type).json];
    first_ts = std::min(first_ts, ev.ts);
    last_ts = std::max(last_ts, ev.ts + std::max<int64_t>(ev.dur, 0));
    if (ev.tid != 0)
      s.tids.insert(ev.tid);
    const std::string api = t.Str(ev.api);
    switch (ev.type) {
      case EventType::kAlloc: {
        const std::string kind = KindName(ev);
        if (api == "MEMORY2") {
          live_m2[ev.addr] = {kind, static_cast<int64_t>(ev.size)};
        } else {
          ++s.allocs_by_api[api + "/" + kind];
          if (auto it = live_api.find(ev.addr); it != live_api.end()) {
            current[it->second.first] -= it->second.second;  // re-registration of an address
          }
          live_api[ev.addr] = {kind, static_cast<int64_t>(ev.size)};
          current[kind] += static_cast<int64_t>(ev.size);
          s.peak_api_bytes[kind] = std::max(s.peak_api_bytes[kind], current[kind]);
        }
        break;
      }
      case EventType::kFree:
        if (api == "MEMORY2") {
          live_m2.erase(ev.addr);
        } else if (auto it = live_api.find(ev.addr); it != live_api.end()) {
          current[it->second.first] -= it->second.second;
          live_api.erase(it);
        }
        break;
      case EventType::kVmm:
        switch (static_cast<format::VmmOp>(ev.kind)) {
          case format::VmmOp::kMap:
            mapped[ev.addr] = static_cast<int64_t>(ev.size);
            break;
          case format::VmmOp::kUnmap:
            mapped.erase(ev.addr);
            break;
          case format::VmmOp::kCreate:
            created[ev.handle] = static_cast<int64_t>(ev.size);
            break;
          case format::VmmOp::kRelease:
            created.erase(ev.handle);
            break;
          default:
            break;
        }
        break;
      case EventType::kLaunch:
        ++s.launches;
        if (api.rfind("cuGraphLaunch", 0) == 0)
          ++s.graph_launches;
        launch_corrs.insert(ev.corr);
        break;
      case EventType::kKernel:
        ++s.kernels;
        kernel_corrs.push_back(ev.corr);
        if (ev.handle != 0)
          ++s.kernels_in_graphs;
        break;
      case EventType::kPush:
      case EventType::kRangeStart:
      case EventType::kMark:
        ++s.nvtx_names[t.Str(ev.name)];
        break;
      case EventType::kGauge:
        s.last_gauges[t.Str(ev.name) + "@" + std::to_string(ev.handle)] = ev.value;
        break;
      case EventType::kDrops:
        s.drops[t.Str(ev.text)] += ev.value;
        break;
      case EventType::kOverhead:
        s.self_ns += ev.value;
        s.overhead_events += ev.size;
        break;
      default:
        break;
    }
  }
  for (uint64_t corr : kernel_corrs) {
    if (launch_corrs.count(corr) != 0)
      ++s.kernels_joined;
  }
  for (const auto& [addr, v] : live_api) s.live_api_bytes[v.first] += v.second;
  for (const auto& [addr, v] : live_m2) s.live_memory2_bytes[v.first] += v.second;
  for (const auto& [va, size] : mapped) s.vmm_mapped_bytes += size;
  for (const auto& [handle, size] : created) s.vmm_created_bytes += size;
  s.span_ns = last_ts > first_ts ? last_ts - first_ts : 0;
  s.complete = t.status.reason == trace::StopReason::kComplete;
  s.partial = t.status.partial();
  if (t.reader && t.reader->trailer()) {
    s.status = t.Str(t.reader->trailer()->text);
    s.trailer_dropped = t.reader->trailer()->value;
  }
  return s;
}

std::string ToJson(const TraceStats& s) {
  std::string out = "{";
  out += "\"by_type\": " + MapJson(s.by_type);
  out += ", \"allocs_by_api\": " + MapJson(s.allocs_by_api);
  out += ", \"live_api_bytes\": " + MapJson(s.live_api_bytes);
  out += ", \"peak_api_bytes\": " + MapJson(s.peak_api_bytes);
  out += ", \"live_memory2_bytes\": " + MapJson(s.live_memory2_bytes);
  out += ", \"vmm_mapped_bytes\": " + std::to_string(s.vmm_mapped_bytes);
  out += ", \"vmm_created_bytes\": " + std::to_string(s.vmm_created_bytes);
  out += ", \"launches\": " + std::to_string(s.launches);
  out += ", \"graph_launches\": " + std::to_string(s.graph_launches);
  out += ", \"kernels\": " + std::to_string(s.kernels);
  out += ", \"kernels_joined\": " + std::to_string(s.kernels_joined);
  out += ", \"kernels_in_graphs\": " + std::to_string(s.kernels_in_graphs);
  std::map<std::string, uint64_t> top;
  std::vector<std::pair<uint64_t, std::string>> names;
  for (const auto& [n, c] : s.nvtx_names) names.emplace_back(c, n);
  std::sort(names.rbegin(), names.rend());
  for (size_t i = 0; i < names.size() && i < 12; ++i) top[names[i].second] = names[i].first;
  out += ", \"nvtx_top\": " + MapJson(top);
  out += ", \"gauges\": " + MapJson(s.last_gauges);
  out += ", \"drops\": " + MapJson(s.drops);
  out += ", \"self_ns\": " + std::to_string(s.self_ns);
  out += ", \"overhead_events\": " + std::to_string(s.overhead_events);
  out += ", \"threads\": " + std::to_string(s.tids.size());
  out += ", \"span_ns\": " + std::to_string(s.span_ns);
  out += ", \"complete\": " + std::string(s.complete ? "true" : "false");
  out += ", \"partial\": " + std::string(s.partial ? "true" : "false");
  out += ", \"status\": \"" + Escape(s.status) + "\"";
  out += ", \"trailer_dropped\": " + std::to_string(s.trailer_dropped);
  return out + "}";
}

}  // namespace cuclimb::testing

#ifdef CUCLIMB_TRACE_STATS_MAIN
int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: interposer_trace_stats TRACE\n");
    return 2;
  }
  const cuclimb::testing::Trace t = cuclimb::testing::ReadTrace(argv[1]);
  if (!t.opened) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 3;
  }
  std::printf("%s\n", cuclimb::testing::ToJson(cuclimb::testing::Summarize(t)).c_str());
  return 0;
}
#endif
