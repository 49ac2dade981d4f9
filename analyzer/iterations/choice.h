// SPDX-License-Identifier: Apache-2.0
// Which source defines the iterations: an NVTX range, an NVTX mark, the period of the launch
// sequence, or nothing. The rules are in docs/report-schema.md ("Iterations"); the choice keeps
// the candidates it weighed and why each won or lost, for the report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "iterations/launch_period.h"
#include "iterations/range_origin.h"
#include "iterations/segment_stats.h"
#include "trace/reader.h"

namespace cuclimb::analysis {

enum class IterationSource { kNone, kRange, kMark, kLaunch };

const char* SourceName(IterationSource source);

// One source the choice considered.
struct SegmentCandidate {
  IterationSource source = IterationSource::kNone;
  uint32_t tid = 0;
  uint32_t domain = 0, name = 0;  // string ids; for kLaunch the anchor kernel
  RangeClass origin;              // whose range or mark (ranges and marks)
  uint64_t instances = 0;         // ranges and marks; iterations for kLaunch
  int depth = 0;                  // least nesting depth (ranges)
  double coverage = 0;            // SegmentStats::Coverage (ranges); 1 for marks and kLaunch
  bool chosen = false;
  std::string reason;  // why it was chosen or passed over
};

struct SegmentChoice {
  IterationSource source = IterationSource::kNone;
  uint32_t tid = 0;
  uint32_t name = 0, domain = 0;  // string ids of the range or mark
  LaunchPeriod launch;            // kLaunch
  bool user = false;              // chosen by --iteration
  // --iteration named a range or mark that the trace does not have; the rest of the choice is
  // then the automatic one (the caller decides whether that is an error).
  bool user_unmatched = false;
  std::string why;
  // The chosen source first, then the others in the order of preference (at most
  // kMaxCandidates).
  std::vector<SegmentCandidate> candidates;

  bool SameBoundaries(const SegmentChoice& o) const {
    return source == o.source && tid == o.tid && name == o.name && domain == o.domain &&
           launch.anchor == o.launch.anchor && launch.anchor_next == o.launch.anchor_next;
  }
};

inline constexpr size_t kMaxCandidates = 12;

// Applies the rules to the statistics. `launch` is the launch-period result for the busiest
// launching thread of the prefix (computed once; launch.tid says which thread).
SegmentChoice ChooseSegmentation(const SegmentStats& stats, const LaunchPeriod& launch,
                                 const trace::TraceReader& reader);

}  // namespace cuclimb::analysis
