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

const char kLeakId[] = "device_allocations:MemoryManagement::reserve <- Adam::step_retain";

// The machine slows by 20 % over the run (every host and GPU duration scales): the step time
// climbs, but no state grows and everything moves together.
TEST(MachineDrift, WithoutALeakIsTheMachinesNotTheProgramsClimb) {
  SimOptions o;
  o.drift_pct = 20;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  EXPECT_EQ(r.cause.kind, "machine") << Text(r);
  const auto& m = r.ranks[0].machine;
  EXPECT_TRUE(m.detected);
  EXPECT_TRUE(m.scaling_together);
  EXPECT_GT(m.api_change_pct, 10);
  EXPECT_GT(m.kernel_change_pct, 10);
  const auto* it = FindRange(r, "iteration");
  ASSERT_NE(it, nullptr);
  EXPECT_TRUE(it->climbing) << "the trend itself is real";
  EXPECT_EQ(it->cause.kind, "machine");
  EXPECT_FALSE(it->sets_verdict);
}

TEST(MachineDrift, WithALeakTheLeakStillExplainsTheStepAndTheRestIsTheMachine) {
  SimOptions o;
  o.drift_pct = 20;
  o.leak_device = 2;
  o.host_ns_per_leaked = 100;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "climbing") << Text(r);
  EXPECT_EQ(r.cause.kind, "accumulator") << Text(r);
  EXPECT_EQ(r.cause.accumulator, kLeakId);
  EXPECT_EQ(CauseOf(FindRange(r, "P/step")), kLeakId) << Text(r);
  // E/step only drifts: its host code and its calls grew alike.
  const auto* e_step = FindRange(r, "E/step");
  ASSERT_NE(e_step, nullptr);
  EXPECT_TRUE(e_step->climbing);
  EXPECT_EQ(e_step->cause.kind, "machine") << Text(r);
  EXPECT_FALSE(r.ranks[0].machine.detected) << "state grows: the run's climb is the program's";
}

TEST(MachineDrift, FlatControl) {
  const Report r = AnalyzeSim(SimOptions{});
  EXPECT_EQ(r.verdict, "flat");
  EXPECT_EQ(r.cause.kind, "");
  EXPECT_FALSE(r.ranks[0].machine.detected);
  EXPECT_FALSE(r.ranks[0].machine.scaling_together);
}

// The machine is 25 % slower from iteration 80 to 160 of 240, then back: nothing climbs, and
// the report says the time moved with the machine.
TEST(LevelShift, ThatReversesIsTheMachine) {
  SimOptions o;
  o.iterations = 240;
  o.shift_from = 80;
  o.shift_until = 160;
  o.shift_pct = 25;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  EXPECT_TRUE(r.ranks[0].machine.level_shift_reverses);
  EXPECT_EQ(r.cause.kind, "machine");
  EXPECT_NE(r.cause.summary.find("came back"), std::string::npos) << r.cause.summary;
}

TEST(LevelShift, ThatStaysIsAStepNotASteadyClimb) {
  SimOptions o;
  o.iterations = 240;
  o.shift_from = 120;
  o.shift_until = 240;
  o.shift_pct = 25;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  const auto* it = FindRange(r, "iteration");
  ASSERT_NE(it, nullptr);
  EXPECT_TRUE(it->climbing);
  EXPECT_FALSE(it->steady) << "one jump is not sustained growth";
  EXPECT_FALSE(it->sets_verdict);
}

TEST(LevelShift, FlatControl) {
  SimOptions o;
  o.iterations = 240;
  const Report r = AnalyzeSim(o);
  EXPECT_FALSE(r.ranks[0].machine.level_shift_reverses);
  EXPECT_FALSE(r.ranks[0].machine.detected);
}

// The textbook case: +2 handles per iteration from iteration 0, the step time linear with it.
TEST(LinearLeak, UnderALinearClimbIsTheLikelyCause) {
  SimOptions o;
  o.leak_device = 2;
  o.host_ns_per_leaked = 100;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "climbing");
  const auto* step = FindRange(r, "P/step");
  EXPECT_EQ(CauseOf(step), kLeakId) << Text(r);
  for (const auto& e : r.accumulators.at(0).explanations) {
    EXPECT_TRUE(e.verdict == "explains" || e.verdict == "likely_cause")
        << e.range << ": " << e.reason;
  }
  EXPECT_EQ(r.accumulators[0].evidence.find("but is not its cause"), std::string::npos);
}

TEST(LinearLeak, ThatCostsNothingLeavesTheRunFlat) {
  SimOptions o;
  o.leak_device = 2;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  ASSERT_EQ(r.accumulators.size(), 1u);
  EXPECT_EQ(r.accumulators[0].id, kLeakId);
}

SimOptions Noisy() {
  SimOptions o;
  o.iterations = 600;
  o.gc_every = 100;
  o.gc_ns = 3e6;  // ~4x the iteration
  o.eval_every = 50;
  o.checkpoint_every = 250;
  o.checkpoint_ns = 20e6;  // ~25x the iteration
  o.noise = 0.05;
  return o;
}

TEST(OutlierHeavyLoop, LeakIsStillNamed) {
  SimOptions o = Noisy();
  o.leak_device = 2;
  o.host_ns_per_leaked = 20;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "climbing") << Text(r);
  EXPECT_EQ(r.cause.kind, "accumulator");
  EXPECT_EQ(CauseOf(FindRange(r, "P/step")), kLeakId) << Text(r);
  EXPECT_EQ(CauseOf(FindRange(r, "iteration")), kLeakId) << Text(r);
  EXPECT_EQ(r.iterations.warmup.iterations, 0);
}

TEST(OutlierHeavyLoop, FlatControl) {
  const Report r = AnalyzeSim(Noisy());
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  EXPECT_TRUE(r.accumulators.empty()) << Text(r);
  EXPECT_EQ(r.cause.kind, "");
}

// A leak that starts at iteration 150 of 400, and a climb that starts with it.
TEST(LateLeak, ExplainsAClimbThatStartsWithIt) {
  SimOptions o;
  o.iterations = 400;
  o.leak_device = 2;
  o.host_ns_per_leaked = 100;
  o.leak_from = 150;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "climbing") << Text(r);
  const auto& a = r.accumulators.at(0);
  EXPECT_NEAR(static_cast<double>(a.growth_start_iteration), 150, 3);
  EXPECT_NEAR(a.growth_per_iter, 2, 0.05) << "measured from the onset, not averaged over the run";
  const auto* step = FindRange(r, "P/step");
  ASSERT_NE(step, nullptr);
  EXPECT_NEAR(static_cast<double>(step->climb_start_iteration), 150, 10);
  EXPECT_EQ(step->cause.verdict, "explains") << Text(r);
  for (const auto& e : a.explanations) {
    if (e.range == "P/step") {
      EXPECT_TRUE(e.onset_aligned) << e.reason;
    }
  }
  EXPECT_EQ(r.iterations.warmup.iterations, 0) << "the flat start is not warm-up";
}

TEST(LateLeak, IsNotTheCauseOfAClimbFromTheStart) {
  // The machine drifts from iteration 0; a leak that costs nothing starts at 150.
  SimOptions o;
  o.iterations = 400;
  o.leak_device = 2;
  o.leak_from = 150;
  o.drift_pct = 25;
  const Report r = AnalyzeSim(o);
  for (const auto& range : r.ranges) {
    if (range.name == "P/step" || range.name == "iteration") {
      EXPECT_NE(CauseOf(&range), kLeakId) << range.name << Text(r);
    }
  }
}

TEST(LateLeak, FlatControl) {
  SimOptions o;
  o.iterations = 400;
  o.leak_device = 2;
  o.leak_from = 150;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  ASSERT_FALSE(r.accumulators.empty());
  EXPECT_NEAR(static_cast<double>(r.accumulators[0].growth_start_iteration), 150, 3);
}

// Gradient accumulation: the optimizer runs every 4th iteration and costs half an iteration;
// the first 3 iterations are slow (JIT).
SimOptions Accumulating() {
  SimOptions o;
  o.iterations = 400;
  o.accumulate = 4;
  o.opt_ns = 400000;
  o.jit_warmup_iterations = 3;
  return o;
}

TEST(GradientAccumulation, WarmupCutsOnlyTheSlowStartAndTheLeakIsNamed) {
  SimOptions o = Accumulating();
  o.leak_device = 2;
  o.host_ns_per_leaked = 60;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.iterations.warmup.iterations, 3) << r.iterations.warmup.why;
  EXPECT_FALSE(r.iterations.warmup.capped);
  EXPECT_EQ(r.verdict, "climbing") << Text(r);
  EXPECT_EQ(CauseOf(FindRange(r, "P/step")), kLeakId) << Text(r);
  EXPECT_EQ(CauseOf(FindRange(r, "iteration")), kLeakId) << Text(r);
}

TEST(GradientAccumulation, FlatControl) {
  const Report r = AnalyzeSim(Accumulating());
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  EXPECT_EQ(r.iterations.warmup.iterations, 3);
  for (const auto& range : r.ranges) EXPECT_LE(range.trend.warmup, 4) << range.name;
}

// A host function sampled from zero that rises (more work per iteration in the program's own
// code): not warm-up, and it is where the time goes.
TEST(ZeroStartHostSeries, IsFoundFromTheStartAndNamed) {
  SimOptions o;
  o.iterations = 400;
  o.host_fn_growth = 1;  // 0 samples for 10 iterations, then one more every 10
  o.host_ns_per_fn_sample = 1000;
  const Report r = AnalyzeSim(o);
  const analysis::Accumulator* fn = FindKind(r, "host_function");
  ASSERT_NE(fn, nullptr) << Text(r);
  EXPECT_LE(fn->trend.warmup, 12);
  EXPECT_LE(fn->growth_start_iteration, 15);
  EXPECT_EQ(r.iterations.warmup.iterations, 0);
  EXPECT_EQ(r.verdict, "climbing") << Text(r);
  EXPECT_EQ(CauseOf(FindRange(r, "P/step")), "host_function:grow_fn") << Text(r);
}

TEST(ZeroStartHostSeries, FlatControl) {
  SimOptions o;
  o.iterations = 400;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "flat");
  EXPECT_EQ(FindKind(r, "host_function"), nullptr) << Text(r);
}

}  // namespace
}  // namespace cuclimb::testing
