// SPDX-License-Identifier: Apache-2.0
// From one pass's aggregates to a RankReport: series, trends, accumulators, attribution, evidence.
#pragma once

#include <string>

#include "analysis/analyze.h"
#include "detect/trend.h"
#include "iterations/segmenter.h"
#include "report/report.h"
#include "series/aggregates.h"
#include "series/fold.h"
#include "symbols/demangle.h"
#include "symbols/symbolizer.h"
#include "trace/reader.h"

namespace cuclimb::analysis {

struct AssemblyInput {
  const trace::TraceReader* reader = nullptr;
  const Aggregates* aggregates = nullptr;
  const Boundaries* boundaries = nullptr;
  const SegmentChoice* choice = nullptr;
  Symbolizer* symbolizer = nullptr;
  const AnalyzeOptions* options = nullptr;
  std::string path;
  int index = 0;
  bool repassed = false;
  // Threads the assembly may use for its loops over ranges, kernels, APIs and candidates (each
  // item's result goes to its own place, so the report is the same for any number).
  int jobs = 1;
};

RankReport Assemble(const AssemblyInput& in);

// Shared by assembly, the candidate sources and the detection pipeline.
namespace internal {

struct Context {
  const AssemblyInput& in;
  const Aggregates& a;
  Folder fold;
  Symbolizer& sym;
  const Thresholds& th;

  std::string Str(uint32_t id) const { return std::string(in.reader->Str(id)); }
  // Kernel names arrive mangled from CUPTI (`_ZN7cuclimb7kernels...`); reports show them readable.
  std::string KernelName(uint32_t id) const { return Demangle(in.reader->Str(id)); }
  std::string ApiName(uint32_t id) const;
  TrendOptions Options(double resolution, int64_t warmup = -2) const;
  Trend TrendOf(const Series& s, double resolution) const {
    return ComputeTrend(s, Options(resolution));
  }
  CallSite Site(uint32_t stack) const;
  // The call site's label alone: the key that call-site groups share.
  std::string SiteLabel(uint32_t stack) const;
};

std::string FormatBytes(double bytes);
std::string SizeClassLabel(uint8_t size_class);
std::string MemoryKindName(uint8_t kind);
std::string HandleTypeName(uint8_t type);

void BuildLeaksAndMemory(Context& ctx, RankReport* report);

}  // namespace internal
}  // namespace cuclimb::analysis
