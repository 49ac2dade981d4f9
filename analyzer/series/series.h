// SPDX-License-Identifier: Apache-2.0
// A per-iteration series: element i is iteration i (report/report.h states the conventions).
#pragma once

#include <vector>

namespace cuclimb::analysis {

using Series = std::vector<double>;

}  // namespace cuclimb::analysis
