// SPDX-License-Identifier: Apache-2.0
// A trace → Perfetto's native protobuf trace format (.pftrace), which ui.perfetto.dev and
// trace_processor open directly. docs/reports.md shows what goes where:
//  - a process track for the program (its name says the job rank, if any) with a thread track per
//    recording thread: CUDA calls (API, launch, allocation, free, synchronization, copy, VMM,
//    handle calls) as slices on the thread track, and a child track per NVTX domain with its
//    push/pop ranges and marks; calls that overlap (a runtime call around its driver call) go to
//    an extra "CUDA calls" lane under the thread, as Perfetto nests only what nests;
//  - an "iterations" track with the analyzer's iterations and a "step time" counter;
//  - a process per GPU with a track per stream and its kernels, each linked to its launch by a
//    flow arrow;
//  - counters: live bytes and live allocations per memory kind, live handles per handle type,
//    every gauge (pool.reserved, ...), the profiler's own time.
// Names are interned (written once per trace), so the file stays small; events are written as
// they are read, never held: memory stays flat for any trace length. Same options, window and
// errors as the JSON export (perfetto_export.h).
#pragma once

#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "report/perfetto_export.h"
#include "report/report.h"
#include "trace/reader.h"

namespace cuclimb::analysis {

absl::StatusOr<PerfettoStats> ExportPerfettoProto(
    trace::TraceReader* reader, const RankReport& rank, const PerfettoOptions& options,
    const std::function<absl::Status(std::string_view)>& write);

}  // namespace cuclimb::analysis
