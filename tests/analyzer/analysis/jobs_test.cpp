// SPDX-License-Identifier: Apache-2.0
// `--jobs`: analysing ranks concurrently and decompressing chunks ahead changes nothing in the
// report, byte for byte: not with several ranks, one rank, more threads than ranks, a damaged
// rank, a rank that needs a second pass, nor the old row layout.
#include <gtest/gtest.h>

#include "report/json_report.h"
#include "scenario_util.h"
#include "trace_builder.h"

namespace cuclimb::testing {
namespace {

// A rank of a job as real ones run: its own seed, jitter, a GC pause, evaluations and
// checkpoints every N iterations, late GPU records, a loader thread; the chosen ranks leak.
SimOptions Rank(int rank, bool leaks) {
  SimOptions o;
  o.seed = 17 + static_cast<uint64_t>(rank);
  o.iterations = 120;
  o.steps = 3;
  o.noise = 0.05;
  o.gc_every = 25;
  o.gc_ns = 2e6;
  o.eval_every = 20;
  o.checkpoint_every = 50;
  o.checkpoint_ns = 5e6;
  o.temps_per_launch = rank % 2;
  if (leaks) {
    o.leak_device = 2;
    o.host_ns_per_leaked = 80;
  }
  return o;
}

// Small chunks, so that every trace has dozens for the prefetch threads.
std::string Binary(const SimOptions& o,
                   format::ChunkLayout layout = format::ChunkLayout::kColumns) {
  TraceBuilder b;
  Simulate(o, &b);
  return b.ToBinary(true, 3, 16u << 10, layout);
}

std::string Json(const std::vector<std::string>& traces, int jobs, size_t prefix_events = 0) {
  std::vector<std::string_view> views(traces.begin(), traces.end());
  std::vector<std::string> names;
  for (size_t i = 0; i < traces.size(); ++i) names.push_back("rank" + std::to_string(i));
  analysis::AnalyzeOptions ao;
  ao.jobs = jobs;
  ao.prefix_events = prefix_events;
  auto report = analysis::AnalyzeBuffers(views, names, ao);
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok())
    return "";
  auto json = analysis::ToJson(*report);
  EXPECT_TRUE(json.ok()) << json.status();
  return json.ok() ? *json : "";
}

void ExpectSameForAnyJobs(const std::vector<std::string>& traces, size_t prefix_events = 0) {
  const std::string serial = Json(traces, 1, prefix_events);
  ASSERT_FALSE(serial.empty());
  for (int jobs : {2, 3, 8}) {
    EXPECT_EQ(Json(traces, jobs, prefix_events), serial) << "--jobs " << jobs;
  }
}

TEST(Jobs, FourRanksOneLeaking) {
  std::vector<std::string> traces;
  for (int r = 0; r < 4; ++r) traces.push_back(Binary(Rank(r, r == 2)));
  ExpectSameForAnyJobs(traces);
  // The report says something: the leaking rank is found, whatever the number of threads.
  EXPECT_NE(Json(traces, 3).find("\"verdict\": \"climbing\""), std::string::npos);
}

TEST(Jobs, OneLargeRankWithPrefetch) {
  SimOptions o = Rank(1, true);
  o.iterations = 300;
  ExpectSameForAnyJobs({Binary(o)});
}

TEST(Jobs, DamagedRankReadsTheSameUpToTheDamage) {
  std::vector<std::string> traces = {Binary(Rank(0, true)), Binary(Rank(1, true))};
  traces[1].resize(traces[1].size() * 2 / 3);  // cut inside a chunk: partial
  std::string flipped = Binary(Rank(2, false));
  flipped[flipped.size() / 2] ^= 0x40;  // a bad checksum halfway
  traces.push_back(flipped);
  ExpectSameForAnyJobs(traces);
  EXPECT_NE(Json(traces, 4).find("\"partial\": true"), std::string::npos);
}

TEST(Jobs, SecondPassAndRowLayout) {
  // A long set-up with launches before the first iteration range: the prefix alone picks the
  // launch period, and the whole trace says otherwise.
  TraceBuilder late;
  uint64_t corr = 0;
  int64_t t = 0;
  for (int i = 0; i < 300; ++i) late.Launch(t += 100, 10, i % 3 ? "setup_a" : "setup_b", ++corr);
  Simulate(Rank(0, true), &late);
  std::vector<std::string> traces = {late.ToBinary(true, 3, 16u << 10),
                                     Binary(Rank(1, true), format::ChunkLayout::kRows)};
  ExpectSameForAnyJobs(traces, 200);
  analysis::AnalyzeOptions ao;
  ao.jobs = 4;
  ao.prefix_events = 200;
  auto r = analysis::AnalyzeBuffers({traces[0]}, {"late"}, ao);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ranks[0].trace.repassed);
}

}  // namespace
}  // namespace cuclimb::testing
