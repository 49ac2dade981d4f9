// SPDX-License-Identifier: Apache-2.0
// A long run's per-iteration series hold about one double per iteration and series: their gap
// slots and the doubling of a growing vector cost nothing (series/slot_vec.h).
#include <cstdio>

#include <gtest/gtest.h>

#include "../analysis/scenario_util.h"

namespace cuclimb::testing {
namespace {

TEST(LongRunMemory, SeriesHoldAboutOneDoublePerIterationAndSeries) {
  SimOptions o;
  o.iterations = 200'000;
  o.steps = 1;
  o.kernels_per_step = 1;
  o.noise = 0.05;
  o.leak_device = 1;
  o.churn = false;  // keeps the test short: 200 000 iterations of a few events each
  o.host_ns_per_leaked = 2;
  // What real loops do now and then: GC pauses, evaluations, checkpoints, late GPU records,
  // a loader thread, the writer's batch order.
  o.gc_every = 997;
  o.gc_ns = 2e6;
  o.eval_every = 1000;
  o.checkpoint_every = 5000;
  o.checkpoint_ns = 5e6;
  o.writer_batch_ns = 2'000'000;
  analysis::AnalyzeOptions ao;
  analysis::SeriesFootprint footprint;
  int calls = 0;
  ao.footprint = [&](int index, const analysis::SeriesFootprint& f) {
    EXPECT_EQ(index, 0);
    footprint = f;
    ++calls;
  };
  const analysis::Report r = AnalyzeSim(o, ao);
  ASSERT_EQ(calls, 1);
  ASSERT_EQ(r.iterations.count, o.iterations);
  ASSERT_GT(footprint.series, 50u);
  // Every slot of the run is covered: 2 per iteration.
  ASSERT_GE(footprint.slots, 2u * o.iterations);

  const double per_series_iteration =
      static_cast<double>(footprint.bytes) / static_cast<double>(footprint.series) / o.iterations;
  std::printf("%llu events; ", static_cast<unsigned long long>(r.ranks.at(0).trace.events));
  std::printf("%zu series, %.1f MiB: %.2f bytes per series and iteration (dense: %.1f MiB)\n",
              footprint.series, static_cast<double>(footprint.bytes) / 1048576.0,
              per_series_iteration, static_cast<double>(footprint.DenseBytes()) / 1048576.0);
  for (const auto& f : footprint.families) {
    std::printf("  %-14s %5zu series %7zu pages %8.1f MiB\n", f.name.c_str(), f.series, f.pages,
                static_cast<double>(f.bytes) / 1048576.0);
  }
  // A dense array of doubles per series holds 16 bytes per iteration (the iteration's slot and
  // its gap's), and up to 32 while it doubles; every gap page here is empty but for a few
  // series (the loader's copies land in gaps), so about 8 bytes and the pages' rounding.
  EXPECT_LT(per_series_iteration, 9.0);
  EXPECT_LT(footprint.bytes, footprint.DenseBytes() * 6 / 10);
}

}  // namespace
}  // namespace cuclimb::testing
