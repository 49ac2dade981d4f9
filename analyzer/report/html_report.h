// SPDX-License-Identifier: Apache-2.0
// The HTML form of a Report: one self-contained file (inline CSS, JS and SVG; no network) that
// any browser opens offline. The page is built from the report's per-iteration aggregates, never
// from raw events, so it stays small for long runs (docs/reports.md).
//
// Safety: every string from a trace reaches the page only as JSON data inside a
// <script type="application/json"> element, with '<', '>' and '&' written as \u escapes, and the
// page script puts it in the DOM as text (textContent, SVG text nodes), never as markup. The
// page's Content-Security-Policy allows only its own script (by SHA-256) and no network.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "report/report.h"

namespace cuclimb::analysis {

struct HtmlOptions {
  // Bytes of embedded data beyond which further per-iteration series are left out (their rows
  // stay, without the chart; the page says how many). Keeps the file under 10 MB.
  size_t max_data_bytes = 8u << 20;
  // A series longer than this is averaged into about this many bins (the page's hover then
  // shows the bin's mean and its iterations); shorter series are embedded exactly.
  size_t max_points = 4000;
  int jobs = 1;  // threads building the ranks' data (the page does not depend on it)
};

// Same report → byte-identical page. Errors only when the data cannot be encoded.
absl::StatusOr<std::string> ToHtml(const Report& report, const HtmlOptions& options = {});

// The page template with the CSS and script inlined around a data object (`data_json`, JSON
// text; made safe for the <script> element here). The report and `cuclimb diff --html` use it.
std::string HtmlPage(std::string_view title, std::string_view data_json);

// JSON text made safe inside a <script> element: '<', '>', '&', U+2028 and U+2029 as \u escapes
// (valid JSON that parses to the same value, and can never close the element).
std::string EscapeJsonForScript(std::string_view json);

// Text for HTML element content and attribute values: & < > " ' escaped.
std::string EscapeHtml(std::string_view text);

}  // namespace cuclimb::analysis
