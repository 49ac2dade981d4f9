// SPDX-License-Identifier: Apache-2.0
/// The analyzer facade: traces in, a Report out. `cuclimb analyze`, `report`, `diff`, `check`,
/// the tests and the benchmark all call this; nothing here prints.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "report/report.h"
#include "series/footprint.h"

namespace cuclimb::analysis {

/// Progress of one trace's analysis, for a progress bar.
struct Progress {
  int trace_index = 0, trace_count = 1;
  int pass = 1;                              // 2 only when the segmentation needed a second pass
  uint64_t bytes_done = 0, bytes_total = 0;  // bytes_total 0 when unknown
  uint64_t events = 0;
};

struct AnalyzeOptions {
  /// Iteration boundaries: an NVTX range or mark name; empty = automatic (report-schema.md).
  std::string iteration;
  /// Statistics thresholds; thresholds.warmup = −1 for the automatic warm-up cut.
  Thresholds thresholds;
  /// Accumulators kept per rank (the rest are dropped after ranking); 0 = all.
  int top = 20;
  /// Directories searched, before the recorded path, for the ELF files named by `mapping`
  /// events (offline symbolization of PC frames).
  std::vector<std::string> symbol_dirs;
  /// Where recorded paths and /usr/lib/debug are looked up: "" = this machine. The golden tests
  /// name an empty directory, so that a program left at its recorded path on the machine that
  /// runs them (or its debug package) cannot change the expected reports.
  std::string host_root;
  /// Frame patterns ("[module:|symbol:|function:|file:]GLOB") marked internal before the
  /// built-in frame classes, so call sites are labelled past them (symbols/frame_classes.txt).
  std::vector<std::string> frames_internal;
  /// Events buffered to choose the iteration source before streaming (0 = 131072). Tests lower
  /// it to exercise the second pass.
  size_t prefix_events = 0;
  /// Threads (`--jobs`): up to this many traces are analysed at once, and threads left over
  /// check and decompress chunks ahead of each trace's reader. 1 = everything on the calling
  /// thread. The report is the same, byte for byte, whatever the number.
  int jobs = 1;
  /// Called about every million events (and at the end of each pass) when set; with jobs > 1,
  /// from the analysing threads, one call at a time.
  std::function<void(const Progress&)> progress;
  /// Called once per trace when its pass is done, before its report is assembled, with the
  /// memory its per-iteration series hold (benchmarks and memory tests); with jobs > 1, from
  /// the analysing threads, one call at a time.
  std::function<void(int trace_index, const SeriesFootprint&)> footprint;
};

/// Analyses one or more traces (ranks of one job) into one report. A trace that cannot be
/// opened is an error (NotFound, InvalidArgument, ...); a truncated or corrupt trace is
/// analysed up to the damage and the report is marked partial.
absl::StatusOr<Report> Analyze(const std::vector<std::string>& paths,
                               const AnalyzeOptions& options);

/// The same for traces held in memory (tests, fuzzers); `names` label them in the report.
absl::StatusOr<Report> AnalyzeBuffers(const std::vector<std::string_view>& traces,
                                      const std::vector<std::string>& names,
                                      const AnalyzeOptions& options);

}  // namespace cuclimb::analysis
