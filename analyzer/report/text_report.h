// SPDX-License-Identifier: Apache-2.0
// The terminal form of a Report, at most 100 columns wide: first what climbs, the cause in one
// sentence, where, and the next steps as commands (report/headline.h); then the climbing ranges
// grouped by what explains them, the accumulators, per-rank lines and notes. Statistics (p
// values, correlations, shares) only with `verbose`.
#pragma once

#include <string>

#include "report/report.h"

namespace cuclimb::analysis {

struct TextOptions {
  int max_ranges = 15;  // climbing ranges are always shown
  int max_accumulators = 10;
  bool details = true;    // decomposition lines under climbing ranges (verbose table)
  bool verbose = false;   // the full ranges table with slopes and p values, attribution statistics
  std::string html_path;  // the page written alongside, named in the next steps
};

std::string ToText(const Report& report, const TextOptions& options = {});

// "1.17 ms", "850 µs", "2.31 s".
std::string FormatMs(double ms);

// A value in its unit for people: "ms" and "us" as FormatMs does, "bytes" as B/KiB/MiB/GiB,
// anything else (handles, counts) as a plain number.
std::string FormatQuantity(double v, const std::string& unit);

}  // namespace cuclimb::analysis
