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

// A value in its unit for people: "ms" and "us" as FormatMs does, "bytes" as B/KiB/MiB/GiB,
// anything else (handles, counts) as a plain number.
std::string FormatQuantity(double v, const std::string& unit);

}  // namespace cuclimb::analysis
