// SPDX-License-Identifier: Apache-2.0
// The merge across ranks (internal to analysis/): from the ranks' own reports to the report's
// top-level iterations, ranges and accumulators (docs/report-schema.md, "Several traces").
#pragma once

#include "analysis/analyze.h"
#include "report/report.h"

namespace cuclimb::analysis {

// Fills report->iterations, ranges, accumulators and accumulator_ranks from report->ranks. With
// one rank they are that rank's own.
void MergeRanks(const AnalyzeOptions& options, Report* report);

}  // namespace cuclimb::analysis
