// SPDX-License-Identifier: Apache-2.0
// `cuclimb check`: limits on a report for CI (an accumulation regression test). The verdict is
// JSON (schema cuclimb.check/1, docs/report-schema.md); the command exits 1 when a limit is
// exceeded.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "report/report.h"

namespace cuclimb::analysis {

inline constexpr char kCheckSchema[] = "cuclimb.check/1";

// --max-growth KIND=RATE. KIND: an accumulator kind (device_allocations, pool_reserved, streams,
// ...), "any" (every accumulator), or "live_bytes" / "live_handles" (the trace's total live
// allocation bytes / handles). RATE: per iteration, in the kind's unit (handles, bytes, samples);
// with a byte suffix (B, KB, KiB, MB, MiB, GB, GiB) the limit is on bytes per iteration.
struct GrowthLimit {
  std::string kind;
  double rate = 0;
  bool bytes = false;  // the rate had a byte suffix
  std::string text;    // as given
};

struct CheckLimits {
  // A range fails when its climb (first → last, %) is above this and its trend is significant.
  // Unset with no growth limits: the report's own threshold (min_climb_pct).
  std::optional<double> max_climb_pct;
  std::vector<GrowthLimit> growth;
  std::vector<std::string> ranges;  // limit the climb check to these ranges (empty = all)
};

struct CheckItem {
  std::string check;         // "climb" | "growth"
  std::string subject;       // range name, accumulator id, "live_bytes", ...
  std::string limit;         // as given
  double value = 0;          // climb %, or growth per iteration
  std::string unit;          // "%", "handles", "bytes", ...
  bool significant = false;  // the trend test is significant (only significant growth can fail)
  bool pass = true;
  std::string detail;  // one sentence
};

struct CheckResult {
  bool pass = true;
  // Why the trace gives no evidence either way (no events, or no trend could be tested: too few
  // iterations); empty when it does. An inconclusive gate does not pass (exit 3).
  std::string inconclusive;
  std::vector<CheckItem> items;  // every check made, failures first
  std::vector<std::string> notes;
};

// "KIND=RATE" → GrowthLimit; InvalidArgument naming the problem.
absl::StatusOr<GrowthLimit> ParseGrowthLimit(std::string_view text);

CheckResult RunCheck(const Report& report, const CheckLimits& limits);

// The verdict as JSON (one object, keys in a fixed order); `trace` names the input.
std::string CheckToJson(const CheckResult& result, const Report& report, const CheckLimits& limits);

// The verdict for the terminal: a line with pass/FAIL, then one per check (failures first) with
// its sentence, at most 100 columns plus the sentence.
std::string CheckToText(const CheckResult& result, const Report& report);

}  // namespace cuclimb::analysis
