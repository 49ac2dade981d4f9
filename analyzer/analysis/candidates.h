// SPDX-License-Identifier: Apache-2.0
// Candidate accumulators, one source per family (internal to analysis/). Each family turns the
// pass's aggregates into its per-iteration state series (report `state`) and its candidates:
// series that may be accumulators, with what the evidence needs once one is accepted. The
// detection pipeline (analysis/detection.h) tests, attributes and ranks them all alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/assemble.h"
#include "detect/accumulator_kind.h"
#include "report/report.h"

namespace cuclimb::analysis::internal {

// A survivor of the loop: a handle live at the end of the trace, or freed only in the epilogue.
struct LiveHandle {
  uint64_t address = 0, serial = 0, size_bytes = 0;
  uint32_t api = 0;  // interned API name (0: the candidate's live_api)
  int64_t born = 0;  // iteration it was made in (−1 prologue)
  int64_t ts_ns = 0;
  int64_t freed = -2;  // free_iteration: −2 still live at the end (a leak), n freed in tear-down
};

struct Candidate {
  AccumulatorKind kind = AccumulatorKind::kDeviceAllocations;
  std::string key;  // call site label, "API size-class", handle API, heap, pool or function
  Series values;    // in the kind's unit
  Series bytes;     // live bytes, for kinds that have them; empty otherwise
  CallSite site;
  std::vector<std::string> apis, size_classes;  // seen in the candidate's handles
  std::vector<LiveHandle> live;                 // its handles live at the end
  std::string live_api;                         // API name of handles with api 0
};

// A per-iteration state series with its trend (counts: resolution 0.5).
void AddStateSeries(Context& ctx, RankReport* report, std::string metric, std::string dimension,
                    std::string key, std::string unit, Series values);

// Allocations (device, pinned, managed, VMM mappings) by call site, or by API and size class
// without stacks; also the allocation census series and the leaks at exit.
void AllocationCandidates(Context& ctx, RankReport* report, std::vector<Candidate>* out);
// Streams, events, modules and graphs by call site, or by creating API.
void HandleCandidates(Context& ctx, RankReport* report, std::vector<Candidate>* out);
// Live NVTX memory regions per heap.
void RegionCandidates(Context& ctx, RankReport* report, std::vector<Candidate>* out);
// The pool.reserved gauge per pool.
void PoolCandidates(Context& ctx, RankReport* report, std::vector<Candidate>* out);
// Host functions: the deepest actionable frames whose inclusive samples grow
// (host_candidates.cpp); their inclusive series go to the report's state.
void HostFunctionCandidates(Context& ctx, RankReport* report, std::vector<Candidate>* out);
// Host samples per leaf function, the busiest few (state series only, not candidates).
void LeafSampleSeries(Context& ctx, RankReport* report);

}  // namespace cuclimb::analysis::internal
