// SPDX-License-Identifier: Apache-2.0
// The host-function family: the deepest actionable frames whose inclusive samples grow.
#include <algorithm>
#include <functional>

#include "analysis/candidates.h"
#include "detect/accumulators.h"
#include "detect/host_growth.h"

namespace cuclimb::analysis::internal {
namespace {

// Fewer samples in the whole run cannot show steady growth: not tested (saves the trend test of
// the thousands of functions a Python program's stacks hold).
constexpr double kMinSamples = 8;
// Growing frames considered at most (the steepest); the choice among them is cubic.
constexpr size_t kMaxGrowing = 256;

}  // namespace

void HostFunctionCandidates(Context& ctx, RankReport* report, std::vector<Candidate>* out) {
  const HostFunctions& hf = ctx.a.host_functions;
  std::vector<GrowingFrame> frames(hf.names.size());
  std::vector<Series> series(hf.names.size());
  std::vector<double> slopes;
  for (size_t i = 0; i < hf.names.size(); ++i) {
    series[i] = ctx.fold.Sum(hf.inclusive[i]);
    double total = 0;
    for (double v : series[i]) total += v;
    if (total < kMinSamples)
      continue;
    const Trend trend = ctx.TrendOf(series[i], 0.5);
    std::string why;
    frames[i].growing =
        IsAccumulator(AccumulatorKind::kHostFunction, series[i], trend, ctx.th, &why);
    frames[i].slope = trend.slope_per_iter;
    frames[i].rank = static_cast<int>(hf.ranks[i]);
    frames[i].user = hf.user[i];
    if (frames[i].growing)
      slopes.push_back(trend.slope_per_iter);
  }
  if (slopes.size() > kMaxGrowing) {
    std::nth_element(slopes.begin(), slopes.begin() + kMaxGrowing - 1, slopes.end(),
                     std::greater<double>());
    const double floor = slopes[kMaxGrowing - 1];
    for (GrowingFrame& f : frames) f.growing &= f.slope >= floor;
  }
  FrameStacks stacks;
  stacks.reserve(hf.stacks.size());
  for (const HostFunctions::Stack& s : hf.stacks) stacks.push_back(s.functions);
  const CandidateSeriesNames& names = Info(AccumulatorKind::kHostFunction).series;
  for (uint32_t i : DeepestGrowingFrames(frames, stacks)) {
    Candidate c;
    c.kind = AccumulatorKind::kHostFunction;
    c.key = hf.names[i];
    c.values = series[i];
    // The evidence: the stack that passes through the function most often.
    const HostFunctions::Stack* heaviest = nullptr;
    for (const HostFunctions::Stack& s : hf.stacks) {
      if ((heaviest == nullptr || s.samples > heaviest->samples) &&
          std::find(s.functions.begin(), s.functions.end(), i) != s.functions.end())
        heaviest = &s;
    }
    if (heaviest != nullptr) {
      c.site = ctx.Site(heaviest->stack_id);
      c.site.label = hf.names[i];
    }
    AddStateSeries(ctx, report, names.metric, names.dimension, hf.names[i], "samples", series[i]);
    out->push_back(std::move(c));
  }
}

}  // namespace cuclimb::analysis::internal
