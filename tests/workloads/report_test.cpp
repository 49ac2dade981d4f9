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
