// SPDX-License-Identifier: Apache-2.0
// Machine drift evidence.
#include "analysis/machine.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/str_format.h"
#include "detect/accumulator_kind.h"
#include "detect/stats.h"

namespace cuclimb::analysis::internal {
namespace {

constexpr int64_t kMinPerTenth = 3;
constexpr double kMovingShare = 0.5;   // of the iteration's relative change
constexpr double kTogether = 2.0 / 3;  // of the components compared
constexpr size_t kMinComponents = 3;
constexpr size_t kShiftBins = 20;

// Change (%) of per-unit values between the start and the end of [from, n): the medians of
// amount / units over the iterations that have units, in the first and the last tenth, each
// widened up to a third of the window until it holds kMinPerTenth such iterations (kernel
// timing is sampled: every 32nd iteration by default). Empty when a window cannot.
std::optional<double> TenthsChange(const Series& amount, const Series& units, int64_t from) {
  const int64_t n = static_cast<int64_t>(std::min(amount.size(), units.size()));
  const int64_t m = n - from;
  if (m < 20)
    return std::nullopt;
  const int64_t edge = std::max<int64_t>(3, m / 10), widest = m / 3;
  auto level = [&](int64_t start, int64_t step) -> std::optional<double> {
    std::vector<double> per;
    for (int64_t k = 0; k < widest; ++k) {
      const size_t i = static_cast<size_t>(start + step * k);
      if (units[i] > 0)
        per.push_back(amount[i] / units[i]);
      if (k + 1 >= edge && static_cast<int64_t>(per.size()) >= kMinPerTenth)
        break;
    }
    if (static_cast<int64_t>(per.size()) < kMinPerTenth)
      return std::nullopt;
    return stats::Median(per);
  };
  const auto first = level(from, 1), last = level(n - 1, -1);
  if (!first || !last || *first <= 0)
    return std::nullopt;
  return 100 * (*last - *first) / *first;
}

bool IsWait(const std::string& api) {
  return api.find("Synchronize") != std::string::npos || api.find("Query") != std::string::npos ||
         api.find("Wait") != std::string::npos;
}

bool StateGrows(const RankReport& r) {
  for (const Accumulator& a : r.accumulators) {
    const auto kind = AccumulatorKindNamed(a.kind);
    if (kind && Info(*kind).is_state)
      return true;
  }
  return false;
}

}  // namespace

MachineDrift DetectMachineDrift(const RankReport& r, const RangeReport* iteration,
                                const Thresholds& th) {
  MachineDrift m;
  if (iteration == nullptr || !iteration->trend.tested)
    return m;
  const int64_t from = iteration->trend.warmup;
  const Series ones(iteration->total_ms.size(), 1.0);
  const auto whole = TenthsChange(iteration->total_ms, ones, from);
  if (!whole)
    return m;
  const double change = *whole;
  // Components.
  std::vector<double> kernel_changes, api_changes;
  for (const KernelRow& k : r.kernels) {
    Series runs(k.mean_us.size(), 0.0);
    for (size_t i = 0; i < runs.size() && i < k.gpu_ms_per_iter.size(); ++i)
      runs[i] = k.gpu_ms_per_iter[i] > 0 ? k.gpu_ms_per_iter[i] / k.mean_us[i] : 0;
    if (const auto c = TenthsChange(k.gpu_ms_per_iter, runs, from))
      kernel_changes.push_back(*c);
  }
  for (const ApiRow& a : r.apis) {
    if (IsWait(a.name))
      continue;
    if (const auto c = TenthsChange(a.ms_per_iter, a.calls_per_iter, from))
      api_changes.push_back(*c);
  }
  const auto host = TenthsChange(iteration->decomposition.host.ms, ones, from);
  m.kernels = static_cast<int64_t>(kernel_changes.size());
  m.apis = static_cast<int64_t>(api_changes.size());
  m.kernel_change_pct = kernel_changes.empty() ? 0 : stats::Median(kernel_changes);
  m.api_change_pct = api_changes.empty() ? 0 : stats::Median(api_changes);
  m.host_change_pct = host.value_or(0);
  auto moving = [&](double c) {
    return std::fabs(change) > 0 && c * change > 0 &&
           std::fabs(c) >= kMovingShare * std::fabs(change);
  };
  // One processor's speed moves everything that runs on it: on the CPU every API's time per call
  // and the host code; on the GPU every kernel's time per launch.
  auto together = [&](const std::vector<double>& list, size_t least) {
    size_t moved = 0;
    for (double c : list) moved += moving(c) ? 1 : 0;
    return list.size() >= least &&
           static_cast<double>(moved) >= kTogether * static_cast<double>(list.size());
  };
  const bool cpu = together(api_changes, 2) && host.has_value() && moving(*host);
  const bool gpu = together(kernel_changes, kMinComponents);
  const bool material = std::fabs(change) >= th.min_climb_pct;
  m.scaling_together = material && (cpu || gpu);
  // A level shift that reverses: bin medians of the iteration time.
  double excursion = 0;
  const absl::Span<const double> w =
      absl::MakeConstSpan(iteration->total_ms).subspan(static_cast<size_t>(from));
  if (w.size() >= 4 * kShiftBins) {
    std::vector<double> bins;
    for (size_t b = 0; b < kShiftBins; ++b) {
      const size_t lo = b * w.size() / kShiftBins, hi = (b + 1) * w.size() / kShiftBins;
      bins.push_back(stats::Median(w.subspan(lo, hi - lo)));
    }
    const double first = bins.front(), last = bins.back();
    const double base = std::max(std::fabs(first), 1e-12);
    const double band = th.min_climb_pct / 100 * base;
    int outside = 0;
    for (size_t b = 1; b + 1 < bins.size(); ++b) {
      const double away = std::fabs(bins[b] - 0.5 * (first + last));
      outside += away >= band ? 1 : 0;
      excursion = std::max(excursion, 100 * away / base);
    }
    m.level_shift_reverses = std::fabs(last - first) < 0.5 * band && outside >= 2;
  }
  // With growing state the run's climb may be the program's even when the machine drifted too:
  // then only ranges that no accumulator accounts for are put down to the machine.
  m.detected = (m.scaling_together && !StateGrows(r)) || m.level_shift_reverses;
  if (m.scaling_together) {
    m.summary = absl::StrFormat(
        "the machine, not the program: the iteration time changed %+.0f%% while everything on the "
        "%s moved with it (%s)",
        change, cpu && gpu ? "CPU and the GPU" : (cpu ? "CPU" : "GPU"),
        cpu ? absl::StrFormat(
                  "CUDA calls %+.0f%% per call, host code %+.0f%%%s", m.api_change_pct,
                  m.host_change_pct,
                  gpu ? absl::StrFormat(", kernels %+.0f%% per launch", m.kernel_change_pct) : "")
            : absl::StrFormat("kernels %+.0f%% per launch", m.kernel_change_pct));
  } else if (m.level_shift_reverses) {
    m.summary = absl::StrFormat(
        "the machine, not the program: the iteration time moved away by up to %.0f%% for part of "
        "the run and came back to where it started",
        excursion);
  }
  return m;
}

}  // namespace cuclimb::analysis::internal
