// SPDX-License-Identifier: Apache-2.0
// Accumulator ranking.
#include "analysis/ranking.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "detect/accumulator_kind.h"

namespace cuclimb::analysis {
namespace {

// 2 explains, 1 likely cause, 0 neither; and the largest share among the strongest verdicts.
std::pair<int, double> Strongest(const Accumulator& a) {
  int grade = 0;
  double share = 0;
  for (const Explanation& e : a.explanations) {
    const int g = e.verdict == kExplains ? 2 : (e.verdict == kLikelyCause ? 1 : 0);
    if (g > grade || (g == grade && g > 0 && e.share > share)) {
      grade = g;
      share = g > 0 ? e.share : 0;
    }
  }
  return {grade, share};
}

int Prior(const std::string& kind) {
  const auto k = AccumulatorKindNamed(kind);
  return k ? static_cast<int>(*k) : static_cast<int>(AccumulatorKind::kCount);
}

double RelativeGrowth(const Accumulator& a) {
  const double base = std::max(std::fabs(a.trend.first), 1.0);
  return a.trend.slope_per_iter * static_cast<double>(a.trend.n) / base;
}

}  // namespace

void RankAccumulators(std::vector<Accumulator>* accumulators) {
  for (Accumulator& a : *accumulators) {
    const auto [grade, share] = Strongest(a);
    a.score = (grade == 2 ? 100.0 : (grade == 1 ? 50.0 : 0.0)) + 10.0 * share +
              std::min(std::fabs(a.trend.mk_z), 9.99);
  }
  auto key = [](const Accumulator& a) {
    const auto [grade, share] = Strongest(a);
    return std::make_tuple(-grade, -std::round(10 * share), Prior(a.kind), -std::fabs(a.trend.mk_z),
                           -RelativeGrowth(a));
  };
  std::sort(accumulators->begin(), accumulators->end(),
            [&](const Accumulator& x, const Accumulator& y) {
              const auto kx = key(x), ky = key(y);
              if (kx != ky)
                return kx < ky;
              return x.id < y.id;
            });
  int rank = 1;
  for (Accumulator& a : *accumulators) a.rank = rank++;
}

}  // namespace cuclimb::analysis
