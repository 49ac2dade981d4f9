// SPDX-License-Identifier: Apache-2.0
// The terminal form of a Report: the ranges table (first → last, climb), then the ranked
// accumulators with one line of evidence each, then what is unexplained, then notes.
#pragma once

#include <string>

#include "report/report.h"

namespace cuclimb::analysis {

struct TextOptions {
  int max_ranges = 15;  // climbing ranges are always shown
  int max_accumulators = 10;
  bool details = true;  // decomposition lines under climbing ranges
};

std::string ToText(const Report& report, const TextOptions& options = {});

// "1.17 ms", "850 µs", "2.31 s".
std::string FormatMs(double ms);

}  // namespace cuclimb::analysis
