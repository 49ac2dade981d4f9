// SPDX-License-Identifier: Apache-2.0
// Fuzz target: any bytes through the whole analyzer as `cuclimb analyze`, `check` and `diff` run
// it: AnalyzeBuffers(), then every report form, the CI gate and a diff of the run with itself.
// Must never crash, hang, trip a sanitizer or allocate without bound.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/analyze.h"
#include "diff/check.h"
#include "diff/diff.h"
#include "report/html_report.h"
#include "report/json_report.h"
#include "report/text_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cuclimb::analysis;  // NOLINT(google-build-using-namespace): a fuzzer's body
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  AnalyzeOptions options;
  options.top = 0;
  options.prefix_events = 64;  // small inputs must reach the second pass too
  auto report = AnalyzeBuffers({bytes}, {"fuzz.trace"}, options);
  if (!report.ok())
    return 0;
  (void)ToJson(*report);
  (void)ToText(*report);
  (void)ToHtml(*report);
  CheckLimits limits;
  limits.max_climb_pct = 5;
  if (auto g = ParseGrowthLimit("any=0"); g.ok())
    limits.growth.push_back(*g);
  if (auto g = ParseGrowthLimit("live_bytes=1KiB"); g.ok())
    limits.growth.push_back(*g);
  (void)CheckToJson(RunCheck(*report, limits), *report, limits);
  const DiffReport diff = DiffReports(*report, *report);
  (void)DiffToText(diff);
  (void)DiffToJson(diff);
  return 0;
}
