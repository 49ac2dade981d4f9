// SPDX-License-Identifier: Apache-2.0
// Iteration-aligned diff of two runs (flat vs climb, before vs after a fix): `cuclimb diff`.
//
// The two reports are aligned by iteration (by the NVTX payload — the program's own iteration
// number — when both runs carry distinct payloads, else by index) and by stable keys: range name,
// accumulator id, allocation call site / API / size class, memory kind, handle type, kernel name.
// For every aligned pair of per-iteration series the diff finds the first iteration from which
// the runs stay apart (docs/reports.md, "cuclimb diff"): counts must differ by more than
// max(count_tolerance, count_tolerance_pct of the level), times (smoothed by a running median)
// by more than time_tolerance_pct and by more than the runs' own noise, for `persist`
// consecutive iterations. The run's first divergence is the earliest of those.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "report/html_report.h"
#include "report/report.h"

namespace cuclimb::analysis {

inline constexpr char kDiffSchema[] = "cuclimb.diff/1";

struct DiffOptions {
  double time_tolerance_pct = 5;   // times: relative difference of the smoothed levels
  double count_tolerance = 0.5;    // counts: absolute difference (so any whole-number change)...
  double count_tolerance_pct = 1;  // ...and relative to the larger level
  int64_t persist = 0;             // consecutive iterations; 0 = max(3, aligned / 50)
  size_t max_entries = 50;         // per section, diverging and largest first
};

// Robust levels of one run's series over the aligned iterations.
struct SideLevels {
  double first = 0, last = 0;  // medians of the first and last 10 % (at least 3 iterations)
  double change_pct = 0;       // 100 (last − first) / |first|
};

struct DiffEntry {
  std::string key;     // range name, accumulator id, "dimension: key", kernel name
  std::string metric;  // total_ms, live_handles, allocs, launches, mean_us, ...
  std::string unit;    // ms, us, handles, bytes, calls, launches, samples
  std::string status;  // "both" | "only_base" | "only_other"
  std::optional<SideLevels> base, other;
  double delta_last = 0;             // other.last − base.last (a missing side counts as 0)
  std::optional<double> delta_pct;   // 100 delta_last / |base.last|, when base.last ≠ 0
  int64_t diverges_at = -1;          // aligned iteration index; −1 = never
  std::string what;                  // one line: what differs
  Series base_series, other_series;  // aligned values (for the HTML page)
  // Accumulators only.
  double base_growth = 0, other_growth = 0;  // per iteration, in `unit`
  std::vector<std::string> explains;         // ranges the other (else base) run says it explains
};

struct RunSummary {
  std::string path, program, verdict, iteration_source, iteration_name;
  int64_t iterations = 0;
  std::vector<std::string> climbing_ranges;
};

struct DiffReport {
  std::string schema = kDiffSchema;
  RunSummary base, other;
  std::string alignment;          // "payload" | "index"
  int64_t aligned = 0;            // iterations compared
  int64_t base_offset = 0;        // with "payload": base iteration = aligned index + base_offset...
  int64_t other_offset = 0;       // ...and other iteration = aligned index + other_offset
  int64_t first_divergence = -1;  // aligned iteration; −1 = none
  struct Item {
    std::string section, key, metric, what;
  };
  std::vector<Item> first_items;  // what diverges there, census and handles first
  std::string verdict;            // "same" | "diverged"
  std::string summary;            // one sentence
  DiffOptions options;
  std::vector<DiffEntry> ranges, accumulators, census, handles, kernels;
  std::vector<std::string> notes;
};

// Compares rank 0 of each report (a note says when a report has several ranks).
DiffReport DiffReports(const Report& base, const Report& other, const DiffOptions& options = {});

// The first aligned iteration from which a and b stay apart (−1 = never); exposed for tests.
int64_t FirstDivergence(const Series& a, const Series& b, bool is_time, const DiffOptions& options);

// Outputs: terminal text, JSON (schema cuclimb.diff/1, docs/report-schema.md) and an HTML page.
std::string DiffToText(const DiffReport& diff);
absl::StatusOr<std::string> DiffToJson(const DiffReport& diff);
absl::StatusOr<std::string> DiffToHtml(const DiffReport& diff, const HtmlOptions& options = {});

}  // namespace cuclimb::analysis
