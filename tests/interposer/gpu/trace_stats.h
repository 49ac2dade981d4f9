// SPDX-License-Identifier: Apache-2.0
// Summaries of a recorded trace for the GPU checks: counts per type, API and kind, live bytes by
// memory kind at the end (API events and MEMORY2 events separately), VMM mapped bytes, launches,
// kernels and how many join a launch by correlation id, NVTX names, gauges, drops, our own time.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "test_support.h"

namespace cuclimb::testing {

struct TraceStats {
  std::map<std::string, uint64_t> by_type;            // event type (JSON name) → count
  std::map<std::string, uint64_t> allocs_by_api;      // "api/kind" → count
  std::map<std::string, int64_t> live_api_bytes;      // kind → bytes live at the end (API events)
  std::map<std::string, int64_t> peak_api_bytes;      // kind → peak live bytes (API events)
  std::map<std::string, int64_t> live_memory2_bytes;  // kind → bytes live (MEMORY2 records)
  int64_t vmm_mapped_bytes = 0;                       // map - unmap
  int64_t vmm_created_bytes = 0;                      // create - release (by handle)
  uint64_t launches = 0;
  uint64_t graph_launches = 0;
  uint64_t kernels = 0;
  uint64_t kernels_joined = 0;  // kernel events whose corr equals a launch event's corr
  uint64_t kernels_in_graphs = 0;
  std::map<std::string, uint64_t> nvtx_names;  // push/start/mark names → count
  std::map<std::string, int64_t> last_gauges;  // "name@handle" → last value
  std::map<std::string, int64_t> drops;        // reason → count
  int64_t self_ns = 0;                         // sum of overhead events
  uint64_t overhead_events = 0;                // events those overhead records counted
  std::set<uint32_t> tids;
  int64_t span_ns = 0;
  bool complete = false;
  bool partial = false;
  std::string status;
  int64_t trailer_dropped = -1;
};

TraceStats Summarize(const Trace& t);
std::string ToJson(const TraceStats& s);

}  // namespace cuclimb::testing
