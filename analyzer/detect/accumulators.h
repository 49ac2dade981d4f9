// SPDX-License-Identifier: Apache-2.0
// Accumulators: state that grows steadily per iteration and is not returned.
#pragma once

#include <string>

#include "absl/types/span.h"
#include "detect/accumulator_kind.h"
#include "detect/thresholds.h"
#include "detect/trend.h"

namespace cuclimb::analysis {

// Decides whether a candidate series (with its trend already computed) is an accumulator:
//  - the trend was tested, is rising (Mann–Kendall p < alpha, Theil–Sen slope > 0),
//  - the growth has not stopped (detect/trend.h GrowthStopped),
//  - it is steady: the series steps up in at least 3 iterations of the tested window, and
//  - it is material: the fitted growth over the window is at least the kind's min_growth (2
//    handles or samples, 1 MiB of pool reserve), and for rates (host samples) also
//    ≥ min_climb_pct of the first level.
// *why gets a sentence either way.
bool IsAccumulator(AccumulatorKind kind, absl::Span<const double> values, const Trend& trend,
                   const Thresholds& thresholds, std::string* why);

}  // namespace cuclimb::analysis
