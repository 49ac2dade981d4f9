// SPDX-License-Identifier: Apache-2.0
// The analysis thresholds (docs/report-schema.md, "Thresholds"): what is significant, material,
// warm-up, and enough to explain.
#pragma once

#include <cstdint>

namespace cuclimb::analysis {

struct Thresholds {
  double alpha = 0.01;                 // Mann–Kendall significance
  double min_climb_pct = 5;            // a range climbs when also ≥ this much first → last
  double min_iteration_share_pct = 2;  // a climb is material from this share of the iteration
  int64_t warmup = -1;                 // −1 = automatic
  double max_warmup_share = 0.25;  // the automatic warm-up never cuts more (a note when it would)
  int64_t min_iterations = 8;      // fewer tested points: no trend test
  double min_share = 0.25;         // an accumulator "explains" a range from this share up
  double min_separation = 1.0;     // shape test decides from this separation up (attribution.h)
};

}  // namespace cuclimb::analysis
