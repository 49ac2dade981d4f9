// SPDX-License-Identifier: Apache-2.0
// Why each climbing range climbs, and whether its climb is the program's (report-schema.md,
// "Causes"). Runs after attribution: every climbing range gets a Cause, a materiality and a
// steadiness check; the rank's verdict rests on the ranges that pass them.
#pragma once

#include "analysis/assemble.h"
#include "report/report.h"

namespace cuclimb::analysis::internal {

// Sets iteration_share_pct, material, steady, climb_start_iteration, cause and sets_verdict of
// every range, the rank's machine-drift evidence, `climbing` and `cause`.
void AssignCauses(Context& ctx, RankReport* report);

}  // namespace cuclimb::analysis::internal
