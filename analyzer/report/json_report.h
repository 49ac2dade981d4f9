// SPDX-License-Identifier: Apache-2.0
// The JSON form of a Report (schema "cuclimb.report/1", docs/report-schema.md).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "report/report.h"

namespace cuclimb::analysis {

// A number as the reports write it: 6 significant digits (stable across compilers, short to
// read), whole numbers as integers, non-finite values as 0.
nlohmann::ordered_json JsonNumber(double v);

struct JsonOptions {
  int indent = 1;        // spaces per level; −1 for one line
  bool per_rank = true;  // include "ranks" with every series
  int jobs = 1;          // threads writing the ranks' sections (the output does not depend on it)
};

// The report as a JSON value (what ToJson writes): the one serializer of a Report, which the
// HTML page embeds too (report/html_report.h). Throws nlohmann::json exceptions.
// `jobs` threads build the ranks' sections.
nlohmann::ordered_json ReportJson(const Report& report, bool per_rank = true, int jobs = 1);

// A JSON value as the reports write it: `indent` spaces per level (−1: one line), arrays of numbers
// on one line. Throws nlohmann::json exceptions.
std::string DumpJson(const nlohmann::ordered_json& j, int indent);

// Keys are in a fixed order and numbers are rounded to 6 significant digits, so the same
// report gives byte-identical JSON. Errors only on strings nlohmann cannot encode.
absl::StatusOr<std::string> ToJson(const Report& report, const JsonOptions& options = {});

}  // namespace cuclimb::analysis
