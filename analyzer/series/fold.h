// SPDX-License-Identifier: Apache-2.0
// Slots → iterations: the prologue, each iteration with its gap, and the epilogue.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "series/aggregates.h"
#include "series/series.h"

namespace cuclimb::analysis {

// Immutable once built, so that several threads may fold with one Folder (assembly runs its
// loops over ranges, kernels and candidates on threads).
class Folder {
 public:
  // iteration_of_slot: −1 prologue, −2 epilogue, else the iteration (Boundaries::IterationOfSlot).
  // slots: how many slots to map up front (all the series use, ideally); later slots ask
  // iteration_of_slot each time.
  Folder(int64_t count, std::function<int64_t(uint32_t)> iteration_of_slot, size_t slots = 0);

  int64_t count() const { return count_; }
  int64_t IterationOf(uint32_t slot) const {
    return slot < map_.size() ? map_[slot] : of_slot_(slot);
  }

  // Sum of each iteration's slots; the prologue's and epilogue's sums go to *pro / *epi.
  Series Sum(const SlotVec& v, double* pro = nullptr, double* epi = nullptr) const;
  // Maximum over each iteration's slots (0 where none).
  Series Max(const SlotVec& v) const;
  // A level: the prologue's net (adds − subs) plus the running sum of each iteration's net.
  Series Level(const SlotVec& adds, const SlotVec& subs) const;
  // A sampled gauge: the last sample of each iteration, carried forward over iterations
  // without one (and back to the first iteration from the first sample).
  Series Gauge(const GaugeSeries& g) const;

 private:
  int64_t count_;
  std::function<int64_t(uint32_t)> of_slot_;
  std::vector<int64_t> map_;  // [slot]: IterationOf(slot)
};

// a − b − c elementwise, floored at 0.
Series Remainder(const Series& a, const Series& b, const Series& c);
Series Scale(Series s, double factor);

}  // namespace cuclimb::analysis
