// SPDX-License-Identifier: Apache-2.0
// Summarize(): windowed medians, percentages and loss windows over synthetic records.
#include "workloads/adam/report.h"

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace cuclimb::workloads {
namespace {

std::vector<IterationRecord> Linear(int count, double first, double last) {
  std::vector<IterationRecord> records;
  for (int i = 0; i < count; ++i) {
    IterationRecord r;
    r.iter = i;
    const double t = count > 1 ? static_cast<double>(i) / (count - 1) : 0.0;
    r.st_ms = {first + (last - first) * t, 2.0};
    r.gpu_st_ms = {0.5, 0.5};
    r.loss = {static_cast<float>(1.0 - 0.9 * t), 1.0f};
    records.push_back(r);
  }
  return records;
}

TEST(SummarizeTest, LinearClimbIsMeasuredBetweenWindows) {
  Options options;
  options.iters = 1000;
  const Summary summary = Summarize(options, {"p0", "p1"}, Linear(1000, 1.0, 2.0));
  EXPECT_EQ(summary.warmup, 50);
  EXPECT_EQ(summary.window, 50);
  ASSERT_EQ(summary.rows.size(), 2u);
  // First window: iterations 50..99 (median ~ iteration 74.5), last: 950..999 (~974.5).
  EXPECT_NEAR(summary.rows[0].st_first_ms, 1.0 + 74.5 / 999.0, 1e-6);
  EXPECT_NEAR(summary.rows[0].st_last_ms, 1.0 + 974.5 / 999.0, 1e-6);
  EXPECT_NEAR(summary.rows[0].st_change_pct, 100.0 * (974.5 - 74.5) / (999.0 + 74.5), 1e-6);
  EXPECT_NEAR(summary.rows[1].st_change_pct, 0.0, 1e-9);
  EXPECT_LT(summary.rows[0].loss_last, summary.rows[0].loss_first);
  EXPECT_EQ(summary.rows[1].net, "p1");
}

TEST(SummarizeTest, MedianIgnoresASingleSpike) {
  Options options;
  options.iters = 200;
  std::vector<IterationRecord> records = Linear(200, 1.0, 1.0);
  records[190].st_ms[0] = 500.0;
  const Summary summary = Summarize(options, {"p0", "p1"}, records);
  EXPECT_NEAR(summary.rows[0].st_change_pct, 0.0, 1e-9);
}

TEST(SummarizeTest, TinyRunsStillProduceAWindow) {
  Options options;
  options.iters = 2;
  const Summary summary = Summarize(options, {"p0", "p1"}, Linear(2, 1.0, 3.0));
  EXPECT_EQ(summary.window, 1);
  EXPECT_NEAR(summary.rows[0].st_change_pct, 200.0, 1e-9);
}

// A machine whose host speed drops by 30 % for the last third of the run: st and ref shift
// alike, so st/ref stays flat while st alone "climbs".
TEST(SummarizeTest, ReferenceDividesOutASharedLevelShift) {
  Options options;
  options.iters = 900;
  options.reference = true;
  std::vector<IterationRecord> records = Linear(900, 1.0, 1.0);
  for (IterationRecord& r : records) {
    const double slow = r.iter >= 600 ? 1.3 : 1.0;
    r.st_ms[0] *= slow;
    r.ref_st_ms = 0.4 * slow;
  }
  const Summary summary = Summarize(options, {"p0", "p1"}, records);
  ASSERT_TRUE(summary.reference);
  EXPECT_NEAR(summary.rows[0].st_change_pct, 30.0, 1e-9);
  EXPECT_NEAR(summary.ref_change_pct, 30.0, 1e-9);
  EXPECT_NEAR(summary.rows[0].rel_first, 2.5, 1e-9);
  EXPECT_NEAR(summary.rows[0].rel_change_pct, 0.0, 1e-9);
}

// The allocator's own growth is not in ref, so st/ref keeps it.
TEST(SummarizeTest, ReferenceKeepsAnAllocatorClimb) {
  Options options;
  options.iters = 1000;
  options.reference = true;
  std::vector<IterationRecord> records = Linear(1000, 1.0, 2.0);
  for (IterationRecord& r : records) r.ref_st_ms = 0.5;
  const Summary summary = Summarize(options, {"p0", "p1"}, records);
  EXPECT_NEAR(summary.ref_change_pct, 0.0, 1e-9);
  EXPECT_NEAR(summary.rows[0].rel_change_pct, summary.rows[0].st_change_pct, 1e-9);
  EXPECT_GT(summary.rows[0].rel_change_pct, 80.0);
  EXPECT_NEAR(summary.rows[1].rel_first, 4.0, 1e-9);  // p1: 2.0 ms against 0.5 ms
}

TEST(SummarizeTest, WithoutReferenceTheRatioIsAbsent) {
  Options options;
  options.iters = 100;
  const Summary summary = Summarize(options, {"p0", "p1"}, Linear(100, 1.0, 2.0));
  EXPECT_FALSE(summary.reference);
  EXPECT_EQ(summary.rows[0].rel_first, 0.0);
}

TEST(ReporterTest, ReferenceAppearsInLinesAndSummary) {
  Options options;
  options.iters = 40;
  options.reference = true;
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  Reporter reporter(options, out);
  std::vector<IterationRecord> records = Linear(40, 1.0, 2.0);
  for (IterationRecord& r : records) r.ref_st_ms = 0.25;
  reporter.Iteration({"p0"}, records[0]);
  reporter.Final(Summarize(options, {"p0"}, records));
  std::rewind(out);
  char buffer[1024] = {};
  ASSERT_NE(std::fgets(buffer, sizeof(buffer), out), nullptr);
  EXPECT_NE(std::string(buffer).find(" ref=0.250ms"), std::string::npos) << buffer;
  ASSERT_NE(std::fgets(buffer, sizeof(buffer), out), nullptr);
  const std::string summary = buffer;
  EXPECT_NE(summary.find("  st/ref 4."), std::string::npos) << summary;
  EXPECT_NE(summary.find("ref +0.0%"), std::string::npos) << summary;
  std::fclose(out);
}

// --stats: per-iteration deltas of the counters, levels of the gauges, in text and JSON.
TEST(ReporterTest, StatsAppearAsDeltasAndLevels) {
  std::vector<IterationRecord> records = Linear(2, 1.0, 1.0);
  AllocatorStats& s = records[1].stats;
  s.reserves = 10, s.slots_scanned = 20, s.slices_scanned = 30, s.coalesce_touched = 40;
  s.pages_visited = 50, s.device_allocs = 60, s.device_frees = 70, s.host_allocs = 80;
  s.event_waits = 90, s.persistent_slots = 7, s.largest_bucket_slots = 8, s.pages = 9;
  s.slices = 11, s.dead_bytes = 12, s.reserved_bytes = 13, s.live_handles = 14;
  records[0].stats = s;
  records[0].stats.reserves = 4, records[0].stats.event_waits = 89, records[0].stats.pages = 1;
  for (const bool json : {false, true}) {
    Options options;
    options.stats = true;
    options.json = json;
    std::FILE* out = std::tmpfile();
    ASSERT_NE(out, nullptr);
    Reporter reporter(options, out);
    reporter.Iteration({"p0"}, records[0]);
    reporter.Iteration({"p0"}, records[1]);
    std::rewind(out);
    char buffer[2048] = {};
    ASSERT_NE(std::fgets(buffer, sizeof(buffer), out), nullptr);
    ASSERT_NE(std::fgets(buffer, sizeof(buffer), out), nullptr);
    const std::string line = buffer;
    const std::string expected =
        json ? ",\"stats\":{\"reserves\":6,\"slots_scanned\":0,\"slices_scanned\":0,"
               "\"coalesce_touched\":0,\"pages_visited\":0,\"device_allocs\":0,"
               "\"device_frees\":0,\"host_allocs\":0,\"event_waits\":1,"
               "\"persistent_slots\":7,\"largest_bucket_slots\":8,\"pages\":9,\"slices\":11,"
               "\"dead_bytes\":12,\"reserved_bytes\":13,\"live_handles\":14}}\n"
             : " | reserves=6 slots_scanned=0 slices_scanned=0 coalesce_touched=0 "
               "pages_visited=0 dev_allocs=0 dev_frees=0 host_allocs=0 event_waits=1 slots=7 "
               "bucket_max=8 pages=9 slices=11 dead_bytes=12 reserved_bytes=13 live=14\n";
    ASSERT_GE(line.size(), expected.size());
    EXPECT_EQ(line.substr(line.size() - expected.size()), expected) << line;
    std::fclose(out);
  }
}

TEST(ReporterTest, TextLinesUseTheReportsForm) {
  Options options;
  options.nets = 2;
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  Reporter reporter(options, out);
  std::vector<IterationRecord> records = Linear(3, 1.0, 2.0);
  reporter.Iteration({"p0", "p1"}, records[1]);
  std::rewind(out);
  char buffer[512] = {};
  ASSERT_NE(std::fgets(buffer, sizeof(buffer), out), nullptr);
  const std::string line = buffer;
  EXPECT_EQ(line.rfind("iter=1 st=1.500ms st[p0]=1.500ms st[p1]=2.000ms", 0), 0u) << line;
  std::fclose(out);
}

TEST(ReporterTest, JsonLinesCarryEveryNetwork) {
  Options options;
  options.nets = 2;
  options.json = true;
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  Reporter reporter(options, out);
  std::vector<IterationRecord> records = Linear(3, 1.0, 2.0);
  reporter.Iteration({"p0", "p1"}, records[2]);
  std::rewind(out);
  char buffer[1024] = {};
  ASSERT_NE(std::fgets(buffer, sizeof(buffer), out), nullptr);
  const std::string line = buffer;
  EXPECT_NE(line.find("\"iter\":2"), std::string::npos) << line;
  EXPECT_NE(line.find("\"st\":{\"p0\":2.0000,\"p1\":2.0000}"), std::string::npos) << line;
  EXPECT_EQ(line.front(), '{');
  std::fclose(out);
}

}  // namespace
}  // namespace cuclimb::workloads
