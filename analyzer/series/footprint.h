// SPDX-License-Identifier: Apache-2.0
// How much memory the per-slot series of one pass hold, by family (ranges, kernels, APIs,
// allocation keys, range parts...): what grows with iterations × keys in a long run.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cuclimb::analysis {

struct Aggregates;

struct SeriesFootprint {
  struct Family {
    std::string name;  // "range_api", "alloc", ...
    size_t series = 0;
    size_t pages = 0;  // SlotVec pages allocated
    size_t bytes = 0;  // heap bytes: pages, page tables, gauge arrays
  };
  std::vector<Family> families;  // in a fixed order; families without series are left out
  size_t series = 0, bytes = 0;  // all families
  size_t slots = 0;              // the longest series' size(): ≥ 1 + the last slot written
  // What dense arrays of doubles, one per series and slots long, would hold.
  size_t DenseBytes() const { return series * slots * sizeof(double); }
};

SeriesFootprint MeasureFootprint(const Aggregates& a);

}  // namespace cuclimb::analysis
