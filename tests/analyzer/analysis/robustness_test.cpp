// SPDX-License-Identifier: Apache-2.0
// End to end on awkward inputs: short and long runs, other iteration sources, damaged traces,
// JSON Lines, several ranks, a second pass, determinism.
#include <gtest/gtest.h>

#include "report/json_report.h"
#include "scenario_util.h"

namespace cuclimb::testing {
namespace {

using analysis::Report;

SimOptions Climb() {
  SimOptions o;
  o.leak_device = 2;
  o.host_ns_per_leaked = 100;
  return o;
}

TEST(Robustness, VeryShortRunIsReportedWithoutTrends) {
  SimOptions o = Climb();
  o.iterations = 5;
  o.steps = 1;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.iterations.count, 5);
  EXPECT_EQ(r.verdict, "flat");
  EXPECT_TRUE(r.accumulators.empty());
  for (const auto& range : r.ranges) EXPECT_FALSE(range.trend.tested);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("only 5 iterations") != std::string::npos;
  EXPECT_TRUE(noted) << Text(r);
}

TEST(Robustness, SingleIterationAndEmptyTrace) {
  SimOptions o;
  o.iterations = 1;
  o.steps = 1;
  Report r = AnalyzeSim(o);
  EXPECT_LE(r.iterations.count, 1);
  EXPECT_EQ(r.verdict, "flat");
  EXPECT_TRUE(analysis::ToJson(r).ok());
  TraceBuilder empty;
  const std::string bytes = empty.ToBinary();
  auto e = analysis::AnalyzeBuffers({bytes}, {"empty"}, {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->iterations.source, "none");
  EXPECT_EQ(e->verdict, "flat");
  EXPECT_TRUE(analysis::ToJson(*e).ok());
}

TEST(Robustness, VeryLongRun) {
  SimOptions o = Climb();
  o.iterations = 3000;
  o.steps = 1;
  o.host_ns_per_leaked = 5;
  o.samples = false;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.iterations.count, 3000);
  EXPECT_EQ(r.verdict, "climbing") << Text(r);
  ASSERT_FALSE(r.accumulators.empty());
  EXPECT_NEAR(r.accumulators[0].growth_per_iter, 2, 0.01);
  EXPECT_TRUE(Blamed(r.accumulators[0])) << Text(r);
}

TEST(Robustness, MarksDelimitIterations) {
  SimOptions o = Climb();
  o.nvtx = false;
  o.boundaries = SimOptions::Boundaries::kMark;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.iterations.source, "nvtx_mark");
  EXPECT_EQ(r.iterations.count, 119);  // the last mark opens an iteration whose end is not seen
  const auto* it = FindRange(r, "(iteration)");
  ASSERT_NE(it, nullptr) << Text(r);
  EXPECT_TRUE(it->climbing) << Text(r);
  EXPECT_NE(CauseOf(it), "") << Text(r);
}

TEST(Robustness, NoNvtxUsesTheLaunchPeriod) {
  SimOptions o = Climb();
  o.nvtx = false;
  o.boundaries = SimOptions::Boundaries::kNone;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.iterations.source, "launch_period");
  EXPECT_EQ(r.iterations.period_launches, 30);
  EXPECT_NEAR(static_cast<double>(r.iterations.count), 119, 1);
  const auto* it = FindRange(r, "(iteration)");
  ASSERT_NE(it, nullptr) << Text(r);
  EXPECT_TRUE(it->climbing) << Text(r);
  ASSERT_FALSE(r.accumulators.empty());
  EXPECT_TRUE(Blamed(r.accumulators[0])) << Text(r);
}

TEST(Robustness, IterationRangeInsideAWrapper) {
  SimOptions o;
  o.nested_in_train = true;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.iterations.name, "iteration");
  EXPECT_EQ(r.iterations.count, 120);
}

TEST(Robustness, UserChosenIteration) {
  analysis::AnalyzeOptions ao;
  ao.iteration = "P/step";
  const Report r = AnalyzeSim(Climb(), ao);
  EXPECT_EQ(r.iterations.name, "P/step");
  EXPECT_TRUE(r.iterations.user_chosen);
  EXPECT_EQ(r.iterations.count, 480);
}

TEST(Robustness, PcStacksFallBackToModuleOffsets) {
  SimOptions o = Climb();
  o.pc_stacks = true;
  const Report r = AnalyzeSim(o);
  ASSERT_FALSE(r.accumulators.empty()) << Text(r);
  EXPECT_NE(r.accumulators[0].key.find("libadam_sim.so+0x"), std::string::npos)
      << r.accumulators[0].key;
}

TEST(Robustness, TruncatedTraceIsAnalysedUpToTheCut) {
  std::string bytes = SimulateBinary(Climb());
  bytes.resize(bytes.size() * 6 / 10);
  auto r = analysis::AnalyzeBuffers({bytes}, {"cut.trace"}, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->partial);
  EXPECT_TRUE(r->ranks[0].trace.partial);
  EXPECT_EQ(r->ranks[0].trace.status, "truncated");
  EXPECT_GT(r->iterations.count, 20);
  EXPECT_TRUE(analysis::ToJson(*r).ok());
  bool noted = false;
  for (const auto& n : r->notes) noted |= n.find("partial trace") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Robustness, EveryCutAndFlipIsSurvived) {
  SimOptions o = Climb();
  o.iterations = 12;
  o.steps = 1;
  const std::string bytes = SimulateBinary(o);
  for (size_t cut = 0; cut < bytes.size(); cut += 97) {
    auto r = analysis::AnalyzeBuffers({std::string_view(bytes).substr(0, cut)}, {"cut"}, {});
    if (r.ok()) {
      EXPECT_TRUE(analysis::ToJson(*r).ok());
    }
  }
  for (size_t pos = 64; pos < bytes.size(); pos += 131) {
    std::string flipped = bytes;
    flipped[pos] ^= 0x10;
    auto r = analysis::AnalyzeBuffers({flipped}, {"flip"}, {});
    if (r.ok()) {
      EXPECT_TRUE(analysis::ToJson(*r).ok());
    }
  }
}

TEST(Robustness, JsonLinesGivesTheSameFindings) {
  TraceBuilder b;
  Simulate(Climb(), &b);
  const std::string bin = b.ToBinary(), jsonl = b.ToJsonLines();
  auto rb = analysis::AnalyzeBuffers({bin}, {"t"}, {});
  auto rj = analysis::AnalyzeBuffers({jsonl}, {"t"}, {});
  ASSERT_TRUE(rb.ok() && rj.ok());
  EXPECT_EQ(rj->ranks[0].trace.form, "jsonl");
  analysis::JsonOptions jo;
  jo.per_rank = false;
  EXPECT_EQ(*analysis::ToJson(*rb, jo), *analysis::ToJson(*rj, jo));
}

TEST(Robustness, SameTraceGivesByteIdenticalJson) {
  const std::string bytes = SimulateBinary(Climb());
  auto a = analysis::AnalyzeBuffers({bytes}, {"t"}, {});
  auto b = analysis::AnalyzeBuffers({bytes}, {"t"}, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*analysis::ToJson(*a), *analysis::ToJson(*b));
}

TEST(Robustness, SecondPassWhenTheIterationRangeAppearsLate) {
  // A long set-up with launches before the first iteration range: the prefix alone would pick
  // the launch period.
  TraceBuilder b;
  uint64_t corr = 0;
  int64_t t = 0;
  for (int i = 0; i < 300; ++i) b.Launch(t += 100, 10, i % 3 ? "setup_a" : "setup_b", ++corr);
  Simulate(Climb(), &b);
  const std::string bytes = b.ToBinary();
  analysis::AnalyzeOptions ao;
  ao.prefix_events = 200;
  auto r = analysis::AnalyzeBuffers({bytes}, {"late"}, ao);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->ranks[0].trace.repassed);
  EXPECT_EQ(r->iterations.source, "nvtx_range");
  EXPECT_EQ(r->iterations.count, 120);
  EXPECT_EQ(r->verdict, "climbing");
  auto direct = analysis::AnalyzeBuffers({bytes}, {"late"}, {});
  ASSERT_TRUE(direct.ok());
  EXPECT_FALSE(direct->ranks[0].trace.repassed);
  analysis::JsonOptions jo;
  jo.per_rank = false;
  std::string one = *analysis::ToJson(*r, jo), two = *analysis::ToJson(*direct, jo);
  // Only the note about the second pass differs.
  EXPECT_NE(one.find("two passes"), std::string::npos);
  EXPECT_EQ(one.substr(0, one.find("\"notes\"")), two.substr(0, two.find("\"notes\"")));
}

TEST(Robustness, RanksOfOneJob) {
  SimOptions r0 = Climb(), r1 = Climb(), r2;
  r1.seed = 2;
  r2.seed = 3;  // a rank without the leak
  const std::string a = SimulateBinary(r0), b = SimulateBinary(r1), c = SimulateBinary(r2);
  auto r = analysis::AnalyzeBuffers({a, b, c}, {"rank0", "rank1", "rank2"}, {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->ranks.size(), 3u);
  EXPECT_EQ(r->verdict, "climbing");
  EXPECT_TRUE(r->ranks[0].climbing);
  EXPECT_FALSE(r->ranks[2].climbing);
  ASSERT_EQ(r->accumulators.size(), 1u) << Text(*r);
  EXPECT_EQ(r->accumulator_ranks.at(r->accumulators[0].id), (std::vector<int>{0, 1}));
  const auto* step = FindRange(*r, "P/step");
  ASSERT_NE(step, nullptr);
  EXPECT_TRUE(step->climbing);  // the mean over ranks still climbs
  EXPECT_NE(Text(*r).find("per rank:"), std::string::npos);
}

TEST(Robustness, LostPopsOfTheIterationRangeDoNotMergeIterations) {
  // Every 10th pop of "iteration" is lost, as a dropped ring record would be.
  TraceBuilder b;
  std::vector<uint32_t> stack;
  int iteration_pops = 0;
  SimSink sink{[&b](std::string_view s) { return b.Str(s); },
               [&b](std::initializer_list<std::string_view> f) { return b.Stack(f); },
               [&](const format::Event& e) {
                 if (e.type == format::EventType::kPush && e.tid == 1)
                   stack.push_back(e.name);
                 if (e.type == format::EventType::kPop && e.tid == 1 && !stack.empty()) {
                   const bool iteration = stack.back() == b.Str("iteration");
                   stack.pop_back();
                   if (iteration && ++iteration_pops % 10 == 5)
                     return;
                 }
                 b.AddEvent(e);
               }};
  Simulate(Climb(), sink);
  const std::string bytes = b.ToBinary();
  auto r = analysis::AnalyzeBuffers({bytes}, {"lossy"}, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->iterations.count, 120);
  EXPECT_EQ(r->verdict, "climbing");
  bool noted = false;
  for (const auto& n : r->notes) noted |= n.find("pop was lost") != std::string::npos;
  EXPECT_TRUE(noted) << Text(*r);
}

TEST(Robustness, DropsAndOverheadReachTheReport) {
  SimOptions o;
  o.dropped = 123;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.ranks[0].overhead.dropped, 123);
  EXPECT_EQ(r.ranks[0].overhead.drops_by_reason.at("ring_full"), 123);
  bool noted = false;
  for (const auto& n : r.notes) noted |= n.find("123 events were dropped") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace cuclimb::testing
