// SPDX-License-Identifier: Apache-2.0
// cuclimb check: limit parsing, verdicts on the simulator's climb and flat runs, the JSON form.
#include "diff/check.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "report_traces.h"

namespace cuclimb::testing {
namespace {

using analysis::CheckLimits;
using analysis::ParseGrowthLimit;
using analysis::RunCheck;
using Json = nlohmann::json;

analysis::Report AnalyzeSimulation(const SimOptions& o) {
  analysis::AnalyzeOptions ao;
  ao.top = 0;
  auto report = analysis::AnalyzeBuffers({SimulateBinary(o)}, {"sim.trace"}, ao);
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *std::move(report) : analysis::Report{};
}

const analysis::Report& Climb() {
  static const analysis::Report r = AnalyzeSimulation(ClimbSim(150));
  return r;
}
const analysis::Report& Flat() {
  static const analysis::Report r = AnalyzeSimulation(FlatSim(150));
  return r;
}

CheckLimits Growth(std::initializer_list<const char*> specs) {
  CheckLimits l;
  for (const char* s : specs) {
    auto g = ParseGrowthLimit(s);
    EXPECT_TRUE(g.ok()) << s << ": " << g.status();
    if (g.ok())
      l.growth.push_back(*g);
  }
  return l;
}

TEST(ParseGrowthLimit, KindsRatesAndUnits) {
  auto a = ParseGrowthLimit("device_allocations=2");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->kind, "device_allocations");
  EXPECT_EQ(a->rate, 2);
  EXPECT_FALSE(a->bytes);
  auto b = ParseGrowthLimit("live_bytes=1MiB");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->rate, 1048576);
  EXPECT_TRUE(b->bytes);
  EXPECT_EQ(ParseGrowthLimit("pool_reserved=10MB/iter")->rate, 1e7);
  EXPECT_EQ(ParseGrowthLimit("live_bytes=4096")->bytes, true);
  for (const char* bad : {"foo=1", "device_allocations", "=1", "device_allocations=",
                          "streams=1KiB", "device_allocations=-1", "device_allocations=abc",
                          "device_allocations=5parsecs", "live_handles=2MB"}) {
    EXPECT_EQ(ParseGrowthLimit(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(Check, DefaultFailsOnASignificantClimbOnly) {
  EXPECT_FALSE(RunCheck(Climb(), {}).pass);
  EXPECT_TRUE(RunCheck(Flat(), {}).pass);
  CheckLimits generous;
  generous.max_climb_pct = 1e6;
  EXPECT_TRUE(RunCheck(Climb(), generous).pass);
}

TEST(Check, RangeFilter) {
  CheckLimits l;
  l.max_climb_pct = 5;
  l.ranges = {"E/step"};
  EXPECT_TRUE(RunCheck(Climb(), l).pass);
  l.ranges = {"P/step"};
  EXPECT_FALSE(RunCheck(Climb(), l).pass);
  l.ranges = {"no such range"};
  const analysis::CheckResult r = RunCheck(Flat(), l);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.items[0].subject, "no such range");
}

TEST(Check, GrowthLimits) {
  // The climb leaks 2 device allocations (512 B each) per iteration.
  EXPECT_FALSE(RunCheck(Climb(), Growth({"device_allocations=1"})).pass);
  EXPECT_TRUE(RunCheck(Climb(), Growth({"device_allocations=3"})).pass);
  EXPECT_TRUE(RunCheck(Climb(), Growth({"device_allocations=2KiB"})).pass);
  EXPECT_FALSE(RunCheck(Climb(), Growth({"device_allocations=512B"})).pass);
  EXPECT_FALSE(RunCheck(Climb(), Growth({"any=0"})).pass);
  EXPECT_TRUE(RunCheck(Climb(), Growth({"streams=0"})).pass);  // no stream accumulator
  EXPECT_FALSE(RunCheck(Climb(), Growth({"live_handles=1"})).pass);
  EXPECT_TRUE(RunCheck(Climb(), Growth({"live_handles=5"})).pass);
  // Growth limits alone do not check the climb.
  EXPECT_TRUE(RunCheck(Climb(), Growth({"device_allocations=3"})).items.size() >= 1);
  for (const auto& it : RunCheck(Climb(), Growth({"device_allocations=3"})).items)
    EXPECT_EQ(it.check, "growth");
  EXPECT_TRUE(RunCheck(Flat(), Growth({"any=0", "live_bytes=0", "live_handles=0"})).pass);
}

// A gate passes only on evidence (issue #14: a header-only trace passed with exit 0).
TEST(Check, EmptyOrUntestableTracesAreInconclusive) {
  const std::string empty = TraceBuilder().ToBinary();
  auto e = analysis::AnalyzeBuffers({empty}, {"empty.trace"}, {});
  ASSERT_TRUE(e.ok()) << e.status();
  for (const CheckLimits& l : {CheckLimits{}, Growth({"any=0"}), Growth({"live_bytes=0"})}) {
    const analysis::CheckResult r = RunCheck(*e, l);
    EXPECT_FALSE(r.pass);
    EXPECT_NE(r.inconclusive.find("no events"), std::string::npos) << r.inconclusive;
    EXPECT_EQ(Json::parse(analysis::CheckToJson(r, *e, l))["verdict"], "inconclusive");
  }
  // Five iterations of a climb: too short for any trend test, so neither pass nor fail.
  SimOptions five = ClimbSim(5);
  five.steps = 1;
  const analysis::Report short_run = AnalyzeSimulation(five);
  ASSERT_EQ(short_run.iterations.count, 5);
  const analysis::CheckResult r = RunCheck(short_run, {});
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.inconclusive.find("no trend could be tested on 5 iterations"), std::string::npos)
      << r.inconclusive;
  EXPECT_TRUE(RunCheck(Flat(), {}).inconclusive.empty());
  EXPECT_TRUE(RunCheck(Climb(), {}).inconclusive.empty());
}

// A range named with --range must be tested to pass.
TEST(Check, NamedRangeMustBeTested) {
  SimOptions five = FlatSim(5);
  five.steps = 1;
  const analysis::Report short_run = AnalyzeSimulation(five);
  CheckLimits l;
  l.max_climb_pct = 5;
  l.ranges = {"P/step"};
  const analysis::CheckResult r = RunCheck(short_run, l);
  ASSERT_FALSE(r.items.empty());
  EXPECT_FALSE(r.items[0].pass);
  EXPECT_NE(r.items[0].detail.find("not tested"), std::string::npos);
}

TEST(Check, JsonVerdict) {
  CheckLimits l = Growth({"device_allocations=1"});
  l.max_climb_pct = 10;
  const analysis::CheckResult r = RunCheck(Climb(), l);
  const Json j = Json::parse(analysis::CheckToJson(r, Climb(), l));
  EXPECT_EQ(j["schema"], "cuclimb.check/1");
  EXPECT_EQ(j["pass"], false);
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["limits"]["max_climb_pct"], 10);
  EXPECT_EQ(j["limits"]["max_growth"][0], "device_allocations=1");
  EXPECT_GE(j["failures"].get<int>(), 2);
  EXPECT_EQ(j["checks"][0]["pass"], false);  // failures first
  EXPECT_EQ(j["traces"][0], "sim.trace");
  EXPECT_EQ(j["iterations"], 150);
}

}  // namespace
}  // namespace cuclimb::testing
