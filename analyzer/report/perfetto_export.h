// SPDX-License-Identifier: Apache-2.0
// A trace → the Chrome JSON trace-event format, which Perfetto UI (ui.perfetto.dev, offline too)
// and chrome://tracing open. docs/reports.md shows what goes where:
//  - one process track for the program: a thread track per recording thread with NVTX push/pop
//    ranges and CUDA calls (API, launch, allocation, free, synchronization, copy, VMM, handle
//    calls) as complete slices, NVTX marks and drops as instants, NVTX start/end ranges as async
//    slices, and an "iterations" track with the analyzer's iterations;
//  - one process track per GPU with a thread track per stream and the kernels on it;
//  - counters: live bytes and live allocations by memory kind, live handles by handle type, every
//    gauge (pool.reserved, pool.used, device.free, ...), the profiler's own time.
// Events are written as they are read, never held: memory stays flat for any trace length.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "report/report.h"
#include "trace/reader.h"

namespace cuclimb::analysis {

struct PerfettoOptions {
  // Iterations [first_iteration, end_iteration) of the analyzer's segmentation; end −1 = to the
  // last. Only events in that time window are written (slices overlapping its edges are clipped);
  // counters start from their value at the window's start.
  int64_t first_iteration = 0;
  int64_t end_iteration = -1;
  // Protobuf only: write packets in deflate-compressed bundles (off when the caller gzips the
  // whole output).
  bool compress_packets = true;
  // Called about every million events with (bytes read, bytes in the trace or 0, events read).
  std::function<void(uint64_t, uint64_t, uint64_t)> progress;
};

struct PerfettoStats {
  uint64_t events_read = 0;
  uint64_t trace_events_written = 0;  // JSON objects in "traceEvents"; protobuf: TracePackets
  int64_t window_start_ns = 0, window_end_ns = 0;
  int64_t iterations = 0;  // iterations inside the window
  // Protobuf only: records not written because more than PerfettoTracks::kMaxLanes slices
  // overlapped on one track (never seen in a real recording; said on stderr when it happens).
  uint64_t slices_dropped = 0;
};

// The part of the trace an export covers: iterations [first, end) of `rank` and, when the user cut
// the run (`cut`), their time span [start_ns, end_ns]; otherwise all time. InvalidArgument (the
// message starts with "--iterations") when the range is empty or outside the trace.
struct ExportWindow {
  int64_t first = 0, end = 0;
  int64_t start_ns = 0, end_ns = 0;
  bool cut = false;
};
absl::StatusOr<ExportWindow> ResolveExportWindow(const RankReport& rank,
                                                 const PerfettoOptions& options);

// Streams `reader` (positioned at its first event) into `write`, in pieces. `rank` is the
// analyzer's report of the same trace: its iteration spans (Analyze() segments the trace; this
// does not re-implement segmentation), threads, process and devices name the tracks.
// InvalidArgument when the iteration range is empty or outside the trace; a write error is
// returned as is; a trace that stops early is exported up to the damage.
absl::StatusOr<PerfettoStats> ExportPerfetto(
    trace::TraceReader* reader, const RankReport& rank, const PerfettoOptions& options,
    const std::function<absl::Status(std::string_view)>& write);

// A string as a JSON string literal (quotes included); invalid UTF-8 becomes U+FFFD.
std::string JsonQuote(std::string_view s);
// The string with every byte that is not part of well-formed UTF-8 replaced by U+FFFD, as
// JsonQuote does: for protobuf string fields, which must hold UTF-8.
std::string ValidUtf8(std::string_view s);

}  // namespace cuclimb::analysis
