// SPDX-License-Identifier: Apache-2.0
// Accumulator acceptance.
#include "detect/accumulators.h"

#include "absl/strings/str_format.h"

namespace cuclimb::analysis {
namespace {

constexpr int kMinSteps = 3;

}  // namespace

bool IsAccumulator(AccumulatorKind kind, absl::Span<const double> values, const Trend& trend,
                   const Thresholds& thresholds, std::string* why) {
  const AccumulatorKindInfo& info = Info(kind);
  if (!trend.tested) {
    *why = "too few iterations after the warm-up to test";
    return false;
  }
  if (!trend.rising) {
    *why = absl::StrFormat("no significant rise (p = %.3g, slope %.3g)", trend.p_value,
                           trend.slope_per_iter);
    return false;
  }
  if (GrowthStopped(trend)) {
    *why = absl::StrFormat("growth stopped: last-third slope %.3g vs %.3g overall",
                           trend.tail_slope_per_iter, trend.slope_per_iter);
    return false;
  }
  int steps = 0;
  for (size_t i = static_cast<size_t>(trend.warmup) + 1; i < values.size(); ++i) {
    steps += values[i] > values[i - 1];
  }
  if (steps < kMinSteps) {
    *why = absl::StrFormat("rises in only %d iterations", steps);
    return false;
  }
  const double growth = trend.slope_per_iter * static_cast<double>(trend.n);
  if (growth < info.min_growth) {
    *why = absl::StrFormat("grows by only %.3g over the run", growth);
    return false;
  }
  // From nothing at all (first level 0, change_pct 0: host samples that start at zero), any
  // growth that passed the tests above is material.
  if (info.needs_relative_growth && trend.first > 0 &&
      trend.change_pct < thresholds.min_climb_pct) {
    *why = absl::StrFormat("rises by only %.1f%%", trend.change_pct);
    return false;
  }
  *why = absl::StrFormat("grows %.3g per iteration since iteration %d (p = %.2g)",
                         trend.slope_per_iter, trend.warmup, trend.p_value);
  return true;
}

}  // namespace cuclimb::analysis
