// SPDX-License-Identifier: Apache-2.0
// Folding per-slot arrays into per-iteration series, gauges in particular.
#include "series/fold.h"

#include <limits>

#include <gtest/gtest.h>

namespace cuclimb::analysis {
namespace {

constexpr int64_t kNoSample = std::numeric_limits<int64_t>::min();

// Three iterations: slot 0 the prologue, slots 1..6 the iterations and their gaps, slot 7 on
// the epilogue.
int64_t ThreeIterationsOf(uint32_t slot) {
  if (slot == 0)
    return -1;
  const int64_t i = (static_cast<int64_t>(slot) - 1) / 2;
  return i < 3 ? i : -2;
}

Folder ThreeIterations(size_t mapped = 0) {
  return Folder(3, ThreeIterationsOf, mapped);
}

GaugeSeries Samples(std::initializer_list<std::pair<uint32_t, double>> samples) {
  GaugeSeries g;
  g.value.assign(8, 0.0);
  g.ts.assign(8, kNoSample);
  for (const auto& [slot, value] : samples) {
    g.value[slot] = value;
    g.ts[slot] = 100 * static_cast<int64_t>(slot);
  }
  return g;
}

TEST(Fold, GaugeCarriesForwardAndBackFromTheFirstSample) {
  const Series s = ThreeIterations().Gauge(Samples({{3, 7}, {6, 9}}));
  EXPECT_EQ(s, (Series{7, 7, 9}));
}

TEST(Fold, GaugeStartsFromThePrologueSample) {
  const Series s = ThreeIterations().Gauge(Samples({{0, 5}, {4, 8}}));
  EXPECT_EQ(s, (Series{5, 8, 8}));
}

// Sampled only after the last iteration: nothing is known about the iterations. This read one
// element past the end of the series (heap bytes such as 4e-322 reached the report).
TEST(Fold, GaugeSampledOnlyInTheEpilogueStaysUnsampled) {
  const Series s = ThreeIterations().Gauge(Samples({{7, 1e9}}));
  EXPECT_EQ(s, (Series{0, 0, 0}));
  EXPECT_EQ(ThreeIterations().Gauge(Samples({})), (Series{0, 0, 0}));
}

// Slots mapped up front and slots asked for as they come fold the same: a series may reach past
// what the assembly mapped.
TEST(Fold, SlotsMappedUpFrontOrNot) {
  const SlotVec v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // past the epilogue slot 7 too
  for (size_t mapped : {0, 1, 4, 8, 10, 64}) {
    const Folder f = ThreeIterations(mapped);
    double pro = 0, epi = 0;
    EXPECT_EQ(f.Sum(v, &pro, &epi), (Series{5, 9, 13})) << mapped;
    EXPECT_EQ(pro, 1);
    EXPECT_EQ(epi, 8 + 9 + 10);
    EXPECT_EQ(f.Max(v), (Series{3, 5, 7})) << mapped;
    for (uint32_t slot = 0; slot < 12; ++slot)
      EXPECT_EQ(f.IterationOf(slot), ThreeIterationsOf(slot)) << slot;
  }
}

TEST(Fold, ZeroIterations) {
  const Folder none(0, [](uint32_t slot) -> int64_t { return slot == 0 ? -1 : -2; });
  EXPECT_TRUE(none.Gauge(Samples({{0, 1}, {7, 2}})).empty());
  double pro = 0, epi = 0;
  EXPECT_TRUE(none.Sum({1, 2, 3}, &pro, &epi).empty());
  EXPECT_EQ(pro, 1);
  EXPECT_EQ(epi, 5);
}

}  // namespace
}  // namespace cuclimb::analysis
