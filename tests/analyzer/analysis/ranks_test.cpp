// SPDX-License-Identifier: Apache-2.0
// The merged report of a data-parallel job: where accumulators live, how each range climbs on
// each rank, and the straggler the others wait for, on synthetic DDP jobs (ddp_sim.h) that
// behave like real ones: NCCL all-reduces launched from the autograd thread on their own stream,
// jitter, GC pauses, rank 0's checkpoints, evaluations, late GPU records, sampled kernel timing,
// ranks recorded late or cut early.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/analyze.h"
#include "analysis/rank_climbs.h"
#include "ddp_sim.h"
#include "report/json_report.h"
#include "report/text_report.h"

namespace cuclimb::testing {
namespace {

using analysis::Report;

constexpr char kKept[] = "device_allocations:train_step (train.py:88) <- main (train.py:131)";

std::string Text(const Report& r) {
  return "\n" + analysis::ToText(r);
}

Report AnalyzeTraces(const std::vector<std::string>& traces, std::vector<size_t> order = {}) {
  if (order.empty()) {
    for (size_t t = 0; t < traces.size(); ++t) order.push_back(t);
  }
  std::vector<std::string_view> views;
  std::vector<std::string> names;
  for (size_t t : order) {
    views.emplace_back(traces[t]);
    names.push_back("rank" + std::to_string(t) + ".trace");
  }
  auto report = analysis::AnalyzeBuffers(views, names, {});
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *std::move(report) : Report{};
}

Report AnalyzeDdp(const DdpOptions& o) {
  return AnalyzeTraces(SimulateDdp(o));
}

DdpOptions Job(int ranks, uint64_t seed = 1) {
  DdpOptions o;
  o.ranks = ranks;
  o.seed = seed;
  o.rank.resize(static_cast<size_t>(ranks));
  return o;
}

// Rank `r` keeps `n` loss tensors per iteration, each costing its forward host time.
void Keeps(DdpOptions* o, int r, int n) {
  o->rank[static_cast<size_t>(r)].keep_per_iter = n;
  o->rank[static_cast<size_t>(r)].host_ns_per_kept = 300;
}

const analysis::RangeReport& Range(const Report& r, const std::string& name) {
  for (const analysis::RangeReport& x : r.ranges) {
    if (x.name == name)
      return x;
  }
  ADD_FAILURE() << "no range " << name;
  static const analysis::RangeReport none;
  return none;
}

const analysis::RankClimb& OnRank(const analysis::RangeReport& range, int rank) {
  for (const analysis::RankClimb& c : range.by_rank.ranks) {
    if (c.rank == rank)
      return c;
  }
  ADD_FAILURE() << "no rank " << rank << " in " << range.name;
  static const analysis::RankClimb none;
  return none;
}

const analysis::Accumulator* Find(const Report& r, const std::string& id) {
  for (const analysis::Accumulator& a : r.accumulators) {
    if (a.id == id)
      return &a;
  }
  return nullptr;
}

std::vector<int> AllBut(int ranks, int except) {
  std::vector<int> out;
  for (int r = 0; r < ranks; ++r) {
    if (r != except)
      out.push_back(r);
  }
  return out;
}

// PyTorch DDP on 2 GPUs where rank 1 keeps every loss tensor: the accumulator lives on rank 1
// only, rank 1's step climbs in its own host time, and rank 0's step climbs as much, waiting
// inside the all-reduce.
TEST(Ranks, TwoRanksOneKeepsItsLosses) {
  for (uint64_t seed : {1, 2, 3}) {
    DdpOptions o = Job(2, seed);
    Keeps(&o, 1, 2);
    const Report r = AnalyzeDdp(o);
    SCOPED_TRACE(Text(r));
    EXPECT_EQ(r.verdict, "climbing");
    const analysis::RangeReport& step = Range(r, "train_step");
    EXPECT_EQ(step.by_rank.pattern, "straggler");
    EXPECT_EQ(step.by_rank.straggler, 1);
    EXPECT_EQ(step.by_rank.waiting, std::vector<int>{0});
    EXPECT_EQ(OnRank(step, 1).role, "straggler");
    EXPECT_EQ(OnRank(step, 0).role, "waits");
    EXPECT_TRUE(OnRank(step, 0).climbing) << "the waiting rank's step climbs too";
    EXPECT_LT(OnRank(step, 1).wait_ms_per_iter, 0.1 * OnRank(step, 1).own_ms_per_iter);
    EXPECT_LT(OnRank(step, 0).own_ms_per_iter, 0.1 * OnRank(step, 0).wait_ms_per_iter);
    // The forward, where the kept losses cost host time, climbs on rank 1 only.
    const analysis::RangeReport& forward = Range(r, "forward");
    EXPECT_EQ(forward.by_rank.pattern, "one");
    EXPECT_EQ(forward.by_rank.climbing, std::vector<int>{1});
    EXPECT_EQ(Range(r, "backward").by_rank.pattern, "none");
    // The accumulator lives on rank 1, not on rank 0.
    const analysis::Accumulator* kept = Find(r, kKept);
    ASSERT_NE(kept, nullptr);
    ASSERT_EQ(kept->by_rank.size(), 2u);
    EXPECT_FALSE(kept->by_rank[0].lives);
    EXPECT_EQ(kept->by_rank[0].rank, 0);
    EXPECT_TRUE(kept->by_rank[1].lives);
    EXPECT_NEAR(kept->by_rank[1].growth_per_iter, 2, 0.05);
    EXPECT_EQ(r.accumulator_ranks.at(kKept), std::vector<int>{1});
    // The straggler and its evidence.
    const analysis::Straggler& s = r.straggler;
    ASSERT_TRUE(s.found);
    EXPECT_EQ(s.rank, 1);
    EXPECT_EQ(s.range, "train_step");
    EXPECT_EQ(s.where, "host");
    EXPECT_EQ(s.accumulators, std::vector<std::string>{kKept});
    EXPECT_NEAR(s.extra_growth_per_iter, 2, 0.05);
    ASSERT_EQ(s.waiting.size(), 1u);
    EXPECT_EQ(s.waiting[0].rank, 0);
    EXPECT_NE(s.waiting[0].collective.find("ncclDevKernel_AllReduce"), std::string::npos);
    EXPECT_EQ(s.waiting[0].wait_call, "cuStreamSynchronize");
    EXPECT_GT(s.waiting[0].collective_ms_per_iter, 0.7 * s.own_ms_per_iter);
    EXPECT_GT(s.wait_share, 0.8);
    EXPECT_LT(s.wait_share, 1.25);
    EXPECT_NE(s.summary.find("rank 1 keeps +2 handles/iter more"), std::string::npos);
    EXPECT_NE(s.summary.find("rank 0 waits for it inside collectives"), std::string::npos);
    // The run's cause is the straggler's accumulator, not the waiting rank's synchronization.
    EXPECT_EQ(r.cause.kind, analysis::kCauseAccumulator);
    EXPECT_EQ(r.cause.accumulator, kKept);
    EXPECT_NE(r.cause.summary.find("rank 1 (the straggler)"), std::string::npos);
  }
}

// Ranks are matched by the rank each trace recorded, not by the order of the command line.
TEST(Ranks, MatchedByRecordedRank) {
  DdpOptions o = Job(3);
  Keeps(&o, 1, 2);
  const std::vector<std::string> traces = SimulateDdp(o);
  const Report r = AnalyzeTraces(traces, {2, 1, 0});
  SCOPED_TRACE(Text(r));
  EXPECT_EQ(r.job_ranks, (std::vector<int>{2, 1, 0}));
  ASSERT_TRUE(r.straggler.found);
  EXPECT_EQ(r.straggler.rank, 1);
  EXPECT_EQ(r.straggler.index, 1);
  const analysis::RangeReport& step = Range(r, "train_step");
  ASSERT_EQ(step.by_rank.ranks.size(), 3u);
  EXPECT_EQ(step.by_rank.ranks[0].rank, 0);
  EXPECT_EQ(step.by_rank.ranks[0].index, 2);
  EXPECT_EQ(step.by_rank.waiting, (std::vector<int>{0, 2}));
  EXPECT_EQ(r.accumulator_ranks.at(kKept), std::vector<int>{1});
  EXPECT_NE(Text(r).find("per rank:\n  rank 2 rank2.trace"), std::string::npos)
      << "per-rank lines name job ranks";
}

// Without a recorded rank, or with two traces claiming the same one, ranks are positions.
TEST(Ranks, PositionsWhenRanksAreMissingOrRepeated) {
  DdpOptions o = Job(2);
  o.rank[0].records_rank = false;
  o.rank[1].records_rank = false;
  Report r = AnalyzeDdp(o);
  EXPECT_EQ(r.job_ranks, (std::vector<int>{0, 1}));
  for (const std::string& n : r.notes) EXPECT_EQ(n.find("job rank"), std::string::npos) << n;

  o.rank[1].records_rank = true;
  const std::vector<std::string> traces = SimulateDdp(o);
  r = AnalyzeTraces({traces[1], traces[0]});
  EXPECT_EQ(r.job_ranks, (std::vector<int>{0, 1}));
  bool noted = false;
  for (const std::string& n : r.notes) noted |= n.find("some traces record no job rank") != n.npos;
  EXPECT_TRUE(noted) << Text(r);

  r = AnalyzeTraces({traces[1], traces[1]});
  EXPECT_EQ(r.job_ranks, (std::vector<int>{0, 1}));
  noted = false;
  for (const std::string& n : r.notes) noted |= n.find("the same job rank") != n.npos;
  EXPECT_TRUE(noted) << Text(r);
}

// Eight ranks as a real job records them: rank 5 keeps its losses, rank 2's recording starts 12
// iterations late, rank 6's trace is cut 20 iterations early, rank 0 writes a checkpoint every
// 25 iterations (the others then wait for it once), everyone evaluates every 40, kernels are
// timed on sampled iterations only.
TEST(Ranks, EightRanksOneStraggler) {
  DdpOptions o = Job(8, 4);
  Keeps(&o, 5, 2);
  o.rank[2].first_iteration = 12;
  o.rank[6].last_iteration = 140;
  o.checkpoint_every = 25;
  o.eval_every = 40;
  o.gc_rate = 0.05;
  o.kernels = DdpOptions::KernelTiming::kSampled;
  const Report r = AnalyzeDdp(o);
  SCOPED_TRACE(Text(r));
  EXPECT_EQ(r.ranks[2].iterations.count, 148);
  EXPECT_EQ(r.ranks[6].iterations.count, 140);
  EXPECT_EQ(r.iterations.count, 128) << "iterations 12..139 are common to all, by NVTX payload";
  EXPECT_NE(r.iterations.why.find("NVTX payloads"), std::string::npos);
  const analysis::RangeReport& step = Range(r, "train_step");
  EXPECT_TRUE(step.climbing);
  EXPECT_EQ(step.by_rank.pattern, "straggler");
  EXPECT_EQ(step.by_rank.straggler, 5);
  EXPECT_EQ(step.by_rank.waiting, AllBut(8, 5));
  for (const analysis::RankClimb& c : step.by_rank.ranks) {
    EXPECT_TRUE(c.collectives_timed) << c.rank;
  }
  EXPECT_EQ(Range(r, "forward").by_rank.climbing, std::vector<int>{5});
  const analysis::Accumulator* kept = Find(r, kKept);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(r.accumulator_ranks.at(kKept), std::vector<int>{5});
  for (const analysis::AccumulatorOnRank& on : kept->by_rank)
    EXPECT_EQ(on.lives, on.rank == 5) << on.rank;
  ASSERT_TRUE(r.straggler.found);
  EXPECT_EQ(r.straggler.rank, 5);
  EXPECT_EQ(r.straggler.accumulators, std::vector<std::string>{kKept});
  EXPECT_EQ(r.straggler.waiting.size(), 7u);
  EXPECT_GT(r.straggler.wait_share, 0.7);
  EXPECT_NE(r.straggler.summary.find("ranks 0–4, 6, 7 wait for it"), std::string::npos);
}

// Controls. Every rank flat, with jitter, GC pauses, checkpoints and evaluations: no climb, no
// straggler, no accumulator.
TEST(Ranks, AllRanksFlat) {
  for (uint64_t seed : {1, 2}) {
    DdpOptions o = Job(4, seed);
    o.noise = 0.06;
    o.gc_rate = 0.05;
    o.checkpoint_every = 25;
    o.eval_every = 40;
    const Report r = AnalyzeDdp(o);
    SCOPED_TRACE(Text(r));
    EXPECT_EQ(r.verdict, "flat");
    EXPECT_FALSE(r.straggler.found);
    EXPECT_TRUE(r.accumulators.empty());
    for (const analysis::RangeReport& x : r.ranges) EXPECT_EQ(x.by_rank.pattern, "none") << x.name;
  }
}

// Every rank keeps its losses alike: a shared cause; every rank climbs in its own work and none
// waits for another.
TEST(Ranks, AllRanksClimbAlike) {
  DdpOptions o = Job(4);
  for (int k = 0; k < 4; ++k) Keeps(&o, k, 2);
  const Report r = AnalyzeDdp(o);
  SCOPED_TRACE(Text(r));
  EXPECT_EQ(r.verdict, "climbing");
  EXPECT_FALSE(r.straggler.found);
  const analysis::RangeReport& step = Range(r, "train_step");
  EXPECT_EQ(step.by_rank.pattern, "all");
  EXPECT_EQ(step.by_rank.climbing, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_NE(step.by_rank.summary.find("a shared cause"), std::string::npos);
  for (const analysis::RankClimb& c : step.by_rank.ranks) {
    EXPECT_EQ(c.role, "climbs");
    EXPECT_LT(c.wait_ms_per_iter, 0.1 * c.own_ms_per_iter) << c.rank;
  }
  EXPECT_EQ(r.accumulator_ranks.at(kKept), (std::vector<int>{0, 1, 2, 3}));
}

// All ranks keep one loss per iteration, rank 2 keeps three: rank 2 is the straggler by the
// difference, and the others wait for what it does beyond them.
TEST(Ranks, OneRankKeepsMoreThanTheOthers) {
  DdpOptions o = Job(4);
  for (int k = 0; k < 4; ++k) Keeps(&o, k, k == 2 ? 3 : 1);
  const Report r = AnalyzeDdp(o);
  SCOPED_TRACE(Text(r));
  ASSERT_TRUE(r.straggler.found);
  EXPECT_EQ(r.straggler.rank, 2);
  EXPECT_NEAR(r.straggler.extra_growth_per_iter, 2, 0.1);
  EXPECT_NE(r.straggler.summary.find("rank 2 keeps +2 handles/iter more"), std::string::npos);
  const analysis::RankClimb& s = OnRank(Range(r, "train_step"), 2);
  const analysis::RankClimb& w = OnRank(Range(r, "train_step"), 0);
  EXPECT_NEAR(w.wait_ms_per_iter, s.own_ms_per_iter - w.own_ms_per_iter, 0.25 * s.own_ms_per_iter);
}

// Machine drift on one rank without any accumulator: its GPU gets slower (or its host does). It
// is a straggler, but not one with a leak: no accumulator is named, the story says where its own
// time grows.
TEST(Ranks, MachineDriftOnOneRankIsNoLeak) {
  for (const bool gpu : {true, false}) {
    DdpOptions o = Job(4);
    if (gpu)
      o.rank[3].gpu_drift_per_iter = 0.004;
    else
      o.rank[3].host_drift_per_iter = 0.003;
    const Report r = AnalyzeDdp(o);
    SCOPED_TRACE(Text(r));
    EXPECT_TRUE(r.accumulators.empty());
    ASSERT_TRUE(r.straggler.found);
    EXPECT_EQ(r.straggler.rank, 3);
    EXPECT_TRUE(r.straggler.accumulators.empty());
    EXPECT_EQ(r.straggler.where, gpu ? "gpu" : "host");
    EXPECT_EQ(r.straggler.summary.find("keeps"), std::string::npos);
    EXPECT_NE(r.straggler.summary.find("no accumulator"), std::string::npos);
    EXPECT_EQ(Range(r, "train_step").by_rank.waiting, (std::vector<int>{0, 1, 2}));
  }
}

// Without kernel timing the waiting ranks' collectives cannot be timed; their host's wait in the
// synchronization still tells who waits.
TEST(Ranks, StragglerWithoutKernelTiming) {
  DdpOptions o = Job(2);
  Keeps(&o, 1, 2);
  o.kernels = DdpOptions::KernelTiming::kOff;
  const Report r = AnalyzeDdp(o);
  SCOPED_TRACE(Text(r));
  ASSERT_TRUE(r.straggler.found);
  EXPECT_EQ(r.straggler.rank, 1);
  ASSERT_EQ(r.straggler.waiting.size(), 1u);
  EXPECT_FALSE(r.straggler.waiting[0].collectives_timed);
  EXPECT_NE(r.straggler.summary.find("were not timed"), std::string::npos);
}

// Two ranks sharing one GPU through gloo (what a single H200 allows): the all-reduce is a CPU
// one, so the wait is host code with no collective kernel to time it. Rank 1 keeps its losses
// and an accumulator on it explains its climb; rank 0 climbs as much with none: the straggler is
// inferred, and said to be.
TEST(Ranks, GlooStragglerIsInferred) {
  for (uint64_t seed : {1, 2}) {
    DdpOptions o = Job(2, seed);
    o.backend = DdpOptions::Backend::kGloo;
    Keeps(&o, 1, 2);
    const Report r = AnalyzeDdp(o);
    SCOPED_TRACE(Text(r));
    const analysis::RangeReport& step = Range(r, "train_step");
    EXPECT_FALSE(OnRank(step, 0).collectives);
    EXPECT_TRUE(OnRank(step, 0).climbing) << "rank 0 waits for rank 1 in the CPU all-reduce";
    EXPECT_EQ(step.by_rank.pattern, "straggler");
    EXPECT_TRUE(step.by_rank.inferred);
    ASSERT_TRUE(r.straggler.found);
    EXPECT_TRUE(r.straggler.inferred);
    EXPECT_EQ(r.straggler.rank, 1);
    EXPECT_EQ(r.straggler.accumulators, std::vector<std::string>{kKept});
    EXPECT_NE(r.straggler.summary.find("no collective kernels time the wait"), std::string::npos);
  }
}

// Gloo controls: every rank keeps its losses (no rank is singled out, and no shared-cause claim
// is made that the traces cannot support), and every rank flat.
TEST(Ranks, GlooControls) {
  DdpOptions o = Job(2);
  o.backend = DdpOptions::Backend::kGloo;
  Keeps(&o, 0, 2);
  Keeps(&o, 1, 2);
  Report r = AnalyzeDdp(o);
  EXPECT_FALSE(r.straggler.found) << Text(r);
  const analysis::RangeReport& step = Range(r, "train_step");
  EXPECT_EQ(step.by_rank.pattern, "all") << Text(r);
  EXPECT_NE(step.by_rank.summary.find("cannot be measured"), std::string::npos);

  o = Job(2);
  o.backend = DdpOptions::Backend::kGloo;
  r = AnalyzeDdp(o);
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  EXPECT_FALSE(r.straggler.found);
}

// The JSON report carries it all for several traces and nothing new for one.
TEST(Ranks, JsonFields) {
  DdpOptions o = Job(2);
  Keeps(&o, 1, 2);
  const std::vector<std::string> traces = SimulateDdp(o);
  auto json = analysis::ToJson(AnalyzeTraces(traces), {.indent = -1, .per_rank = false});
  ASSERT_TRUE(json.ok());
  EXPECT_NE(
      json->find(
          "\"straggler\":{\"rank\":1,\"index\":1,\"inferred\":false,\"range\":\"train_step\""),
      std::string::npos);
  EXPECT_NE(json->find("\"climb_by_rank\":{\"pattern\":\"straggler\",\"straggler\":1"),
            std::string::npos);
  EXPECT_NE(json->find("\"by_rank\":[{\"rank\":0,\"index\":0,\"lives\":false,\"growth_per_iter\":"
                       "null"),
            std::string::npos)
      << "rank 0 has no series of the call site";
  auto single = analysis::AnalyzeBuffers({traces[1]}, {"rank1.trace"}, {});
  ASSERT_TRUE(single.ok());
  auto one = analysis::ToJson(*single, {.indent = -1, .per_rank = false});
  ASSERT_TRUE(one.ok());
  for (const char* key : {"\"straggler\"", "\"climb_by_rank\"", "\"by_rank\""})
    EXPECT_EQ(one->find(key), std::string::npos) << key;
}

TEST(Ranks, RankList) {
  EXPECT_EQ(analysis::internal::RankList({1}), "rank 1");
  EXPECT_EQ(analysis::internal::RankList({3, 0, 2}), "ranks 0, 2, 3");
  EXPECT_EQ(analysis::internal::RankList({0, 1, 2, 3, 4, 6, 7}), "ranks 0–4, 6, 7");
  EXPECT_EQ(analysis::internal::RankList({0, 1}), "ranks 0, 1");
}

}  // namespace
}  // namespace cuclimb::testing
