// SPDX-License-Identifier: Apache-2.0
// Accumulator acceptance and ranking.
#include "detect/accumulators.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "absl/strings/str_format.h"
#include "detect/trend.h"

namespace cuclimb::analysis {
namespace {

constexpr int kMinSteps = 3;
constexpr double kMinUnits = 2;
constexpr double kMinPoolBytes = 1 << 20;

double MaxShare(const Accumulator& a) {
  double share = 0;
  for (const Explanation& e : a.explanations) {
    if (e.verdict == "explains")
      share = std::max(share, e.share);
  }
  return share;
}

// Prior for ties (cubecl-pool-model.md §7: allocator state first, handle leaks "low prior").
int Prior(const std::string& kind) {
  static constexpr const char* kOrder[] = {"device_allocations",
                                           "pool_reserved",
                                           "nvtx_regions",
                                           "pinned_allocations",
                                           "managed_allocations",
                                           "vmm_mappings",
                                           "host_function",
                                           "events",
                                           "streams",
                                           "modules",
                                           "graphs"};
  for (int i = 0; i < static_cast<int>(std::size(kOrder)); ++i) {
    if (kind == kOrder[i])
      return i;
  }
  return 99;
}

double RelativeGrowth(const Accumulator& a) {
  const double base = std::max(std::fabs(a.trend.first), 1.0);
  return a.trend.slope_per_iter * static_cast<double>(a.trend.n) / base;
}

}  // namespace

bool IsAccumulator(const std::string& kind, const Series& values, const Trend& trend,
                   const Thresholds& thresholds, std::string* why) {
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
  const double min_units = kind == "pool_reserved" ? kMinPoolBytes : kMinUnits;
  if (growth < min_units) {
    *why = absl::StrFormat("grows by only %.3g over the run", growth);
    return false;
  }
  // From no samples at all (first level 0, change_pct 0), any growth that passed the tests
  // above is material.
  if (kind == "host_function" && trend.first > 0 && trend.change_pct < thresholds.min_climb_pct) {
    *why = absl::StrFormat("samples rise by only %.1f%%", trend.change_pct);
    return false;
  }
  *why = absl::StrFormat("grows %.3g per iteration since iteration %d (p = %.2g)",
                         trend.slope_per_iter, trend.warmup, trend.p_value);
  return true;
}

void RankAccumulators(std::vector<Accumulator>* accumulators) {
  for (Accumulator& a : *accumulators) {
    const double share = MaxShare(a);
    a.score = (share > 0 ? 100.0 : 0.0) + 10.0 * share + std::min(std::fabs(a.trend.mk_z), 9.99);
  }
  std::sort(accumulators->begin(), accumulators->end(),
            [](const Accumulator& x, const Accumulator& y) {
              // Shares of straight-line candidates differ by noise: compare them in tenths.
              const double sx = std::round(10 * MaxShare(x)), sy = std::round(10 * MaxShare(y));
              const bool ex = MaxShare(x) > 0, ey = MaxShare(y) > 0;
              if (ex != ey)
                return ex;
              if (sx != sy)
                return sx > sy;
              if (Prior(x.kind) != Prior(y.kind))
                return Prior(x.kind) < Prior(y.kind);
              const double zx = std::fabs(x.trend.mk_z), zy = std::fabs(y.trend.mk_z);
              if (zx != zy)
                return zx > zy;
              const double gx = RelativeGrowth(x), gy = RelativeGrowth(y);
              if (gx != gy)
                return gx > gy;
              return x.id < y.id;
            });
  int rank = 1;
  for (Accumulator& a : *accumulators) a.rank = rank++;
}

}  // namespace cuclimb::analysis
