// SPDX-License-Identifier: Apache-2.0
// The rank the others wait for (internal to analysis/; docs/report-schema.md, "Several
// traces"): found on the merged ranges' per-rank climbs (rank_climbs.h), explained by what grows
// on it, and told in one paragraph.
#pragma once

#include "report/report.h"

namespace cuclimb::analysis::internal {

// Sets report->straggler from report->ranges[].by_rank (the iteration's range first, then the
// others in report order) and report->accumulators[].by_rank. Leaves it not found otherwise.
void FindStraggler(Report* report);

}  // namespace cuclimb::analysis::internal
