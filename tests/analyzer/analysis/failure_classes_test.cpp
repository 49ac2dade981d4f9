// SPDX-License-Identifier: Apache-2.0
// One scenario per way a diagnosis went wrong on real programs, each beside its flat control:
// the profiler's own cost, machine drift with and without a leak, a level shift that reverses,
// a linear leak under a linear climb, outlier-heavy loops, late leaks, gradient accumulation and
// series that start at zero. The simulated loops carry jitter, late GPU records and a loader
// thread (tests/analyzer/sim/training_sim.h).
#include <cmath>

#include <gtest/gtest.h>

#include "scenario_util.h"

namespace cuclimb::testing {
namespace {

using analysis::Report;

bool HasNote(const Report& r, const std::string& part) {
  for (const std::string& n : r.notes) {
    if (n.find(part) != std::string::npos)
      return true;
  }
  return false;
}

// A program whose iterations make 7× more calls by the end costs the profiler 7× more per
// iteration: not the profiler's climb.
TEST(ProfilerOverhead, MoreWorkPerIterationIsNotTheProfilers) {
  SimOptions o;
  o.work_growth = 5;  // 4 → 28 launches per P/step over 120 iterations
  const Report r = AnalyzeSim(o);
  const auto& ov = r.ranks[0].overhead;
  EXPECT_FALSE(ov.overhead_climbing) << Text(r);
  EXPECT_FALSE(HasNote(r, "profiler")) << Text(r);
  EXPECT_NEAR(ov.ns_per_event_last, ov.ns_per_event_first, 0.02 * ov.ns_per_event_first);
}

TEST(ProfilerOverhead, RisingCostPerEventIsNoted) {
  SimOptions o;
  o.profiler_ns_per_event = 2000;  // a slow profiler: 2 µs per event …
  o.profiler_growth_pct = 60;      // … getting slower
  const Report r = AnalyzeSim(o);
  const auto& ov = r.ranks[0].overhead;
  EXPECT_TRUE(ov.overhead_climbing) << Text(r);
  EXPECT_GT(ov.ns_per_event_last, 1.4 * ov.ns_per_event_first);
  EXPECT_TRUE(HasNote(r, "cost per recorded event climbs")) << Text(r);
}

TEST(ProfilerOverhead, FlatControl) {
  const Report r = AnalyzeSim(SimOptions{});
  EXPECT_FALSE(r.ranks[0].overhead.overhead_climbing);
  EXPECT_NEAR(r.ranks[0].overhead.ns_per_event_first, 150, 1);
}

}  // namespace
}  // namespace cuclimb::testing
