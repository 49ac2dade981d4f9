// SPDX-License-Identifier: Apache-2.0
// The terminal report: cause / where / next first, ranges grouped by what explains them, no
// statistics unless verbose, and no line over 100 columns — on realistic simulated runs (noise,
// late GPU records, a loader thread, spikes) and on the hostile trace.
#include "report/text_report.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "analysis/analyze.h"
#include "report/headline.h"
#include "report_traces.h"

namespace cuclimb::testing {
namespace {

analysis::Report AnalyzeSim(const SimOptions& o) {
  auto report = analysis::AnalyzeBuffers({SimulateBinary(o)}, {"run.trace"}, {});
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *std::move(report) : analysis::Report{};
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n');
}

size_t Columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

void ExpectFits(const std::string& text) {
  for (const std::string& line : Lines(text)) EXPECT_LE(Columns(line), 100u) << line;
}

// The line index of the first line starting with `prefix`, or -1.
int LineOf(const std::string& text, const std::string& prefix) {
  const std::vector<std::string> lines = Lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind(prefix, 0) == 0)
      return static_cast<int>(i);
  }
  return -1;
}

SimOptions RealisticClimb(bool stacks) {
  SimOptions o = ClimbSim(300, 7);
  o.stacks = stacks;
  o.noise = 0.05;
  o.spike_rate = 0.01;  // GC pauses
  o.jit_warmup_iterations = 5;
  return o;
}

TEST(TextReport, OpensWithWhatCauseWhereAndNext) {
  const analysis::Report report = AnalyzeSim(RealisticClimb(/*stacks=*/true));
  ASSERT_EQ(report.verdict, "climbing");
  const std::string text = analysis::ToText(report);
  const int what = LineOf(text, "what:"), cause = LineOf(text, "cause:"),
            where = LineOf(text, "where:"), next = LineOf(text, "next:");
  ASSERT_GE(what, 0) << text;
  EXPECT_LT(what, 4);
  EXPECT_LT(what, cause);
  EXPECT_LT(cause, where);
  EXPECT_LT(where, next);
  EXPECT_LT(next, LineOf(text, "climbing ranges"));
  // The cause names the state in plain words and where the extra time goes.
  std::string cause_text =
      text.substr(text.find("cause:"), text.find("where:") - text.find("cause:"));
  for (size_t p; (p = cause_text.find("\n       ")) != std::string::npos;)
    cause_text.replace(p, 8, " ");
  EXPECT_NE(cause_text.find("2 cuMemAllocAsync allocations of 512 B per iteration are never freed"),
            std::string::npos)
      << cause_text;
  EXPECT_NE(cause_text.find("the extra time is host code between CUDA calls"), std::string::npos)
      << cause_text;
  // The call site was recorded: it is named, and no step asks to record stacks again.
  EXPECT_NE(text.find("where: MemoryManagement::reserve"), std::string::npos) << text;
  EXPECT_EQ(text.find("--stacks fp"), std::string::npos);
  EXPECT_NE(text.find("cuclimb analyze run.trace --html"), std::string::npos);
  EXPECT_NE(text.find("cuclimb diff GOOD.trace run.trace"), std::string::npos);
  EXPECT_NE(text.find("cuclimb check run.trace --max-climb 5 --max-growth device_allocations=0"),
            std::string::npos);
  ExpectFits(text);
}

TEST(TextReport, WithoutStacksTheNextStepRecordsThem) {
  const analysis::Report report = AnalyzeSim(RealisticClimb(/*stacks=*/false));
  ASSERT_EQ(report.verdict, "climbing");
  const std::string text = analysis::ToText(report);
  EXPECT_NE(text.find("where: no call stack was recorded"), std::string::npos) << text;
  EXPECT_NE(text.find("cuclimb record --stacks fp -- "), std::string::npos) << text;
  analysis::TextOptions o;
  o.html_path = "r.html";
  EXPECT_NE(analysis::ToText(report, o).find("xdg-open r.html"), std::string::npos);
}

TEST(TextReport, StatisticsOnlyWhenVerbose) {
  const analysis::Report report = AnalyzeSim(RealisticClimb(true));
  const std::string plain = analysis::ToText(report);
  EXPECT_EQ(plain.find("p="), std::string::npos) << plain;
  EXPECT_EQ(plain.find(" p "), std::string::npos) << plain;
  EXPECT_EQ(plain.find("e-"), std::string::npos) << plain;  // no p-value exponents
  analysis::TextOptions o;
  o.verbose = true;
  const std::string verbose = analysis::ToText(report, o);
  EXPECT_NE(verbose.find("slope/iter"), std::string::npos);
  EXPECT_NE(verbose.find("p="), std::string::npos);
  ExpectFits(verbose);
}

TEST(TextReport, RangesSharingAnExplanationAreGroupedOnce) {
  SimOptions o = RealisticClimb(true);
  o.steps = 6;
  const analysis::Report report = AnalyzeSim(o);
  const std::string text = analysis::ToText(report);
  // Explained or most likely caused (graded attribution): either way one heading for all.
  int caused = 0;
  for (const analysis::RangeReport& r : report.ranges)
    caused += r.cause.kind == analysis::kCauseAccumulator;
  ASSERT_GE(caused, 2) << text;
  size_t headings = 0;
  for (size_t p = text.find("by accumulator 1 ("); p != std::string::npos;
       p = text.find("by accumulator 1 (", p + 1)) {
    ++headings;
  }
  EXPECT_EQ(headings, 1u) << text;
  // A range that rises with the accumulator without following it is not called unexplained.
  EXPECT_EQ(text.find("not explained by any accumulator"), std::string::npos) << text;
}

TEST(TextReport, SharesAboveAHundredPercentSayWhatShrank) {
  analysis::RangeReport r;
  r.name = "step";
  r.climbing = true;
  r.trend.tested = true;
  r.decomposition.wall.delta_ms = 4.8;
  r.decomposition.host.delta_ms = 5.5;
  r.decomposition.api.delta_ms = -0.66;
  r.decomposition.sync.delta_ms = -0.04;
  EXPECT_EQ(analysis::ShrankPhrase(r), "CUDA calls −660 µs");
  EXPECT_EQ(analysis::TimePhrase(r), "host code between CUDA calls");
  analysis::Report report;
  report.verdict = "climbing";
  report.iterations.count = 100;
  report.ranges = {r};
  const std::string text = analysis::ToText(report);
  EXPECT_NE(text.find("host +5.5 ms, calls −660 µs"), std::string::npos) << text;
}

TEST(TextReport, FlatRunSaysNothingClimbs) {
  const analysis::Report report = AnalyzeSim(FlatSim(200, 3));
  ASSERT_EQ(report.verdict, "flat");
  const std::string text = analysis::ToText(report);
  EXPECT_EQ(LineOf(text, "what:  nothing climbs"), 2) << text;
  EXPECT_EQ(text.find("cause:"), std::string::npos);
  EXPECT_NE(text.find("fail CI if it starts to climb"), std::string::npos);
  ExpectFits(text);
}

TEST(TextReport, GpuClimbIsNotBlamedOnAStateThatOnlyRisesAlongside) {
  SimOptions o = ClimbSim(200, 5);
  o.host_ns_per_leaked = 0;
  o.leak_device = 0;
  o.leak_events = 1;
  o.gpu_slowdown_ns = 400;
  const analysis::Report report = AnalyzeSim(o);
  const analysis::Headline h = analysis::MakeHeadline(report);
  ASSERT_EQ(report.verdict, "climbing");
  ASSERT_NE(h.range, nullptr);
  ASSERT_NE(h.accumulator, nullptr);  // the leaked events rise alongside
  EXPECT_TRUE(h.range->explained_by.empty());
  EXPECT_EQ(h.where, "");  // their call site is not pointed at
  // It leads with the GPU time that grows, then names the events as probably not the cause.
  EXPECT_NE(h.cause.find("GPU"), std::string::npos) << h.cause;
  EXPECT_LT(h.cause.find("GPU"), h.cause.find("event")) << h.cause;
  EXPECT_NE(h.cause.find("probably not the cause"), std::string::npos) << h.cause;
  ExpectFits(analysis::ToText(report));
}

TEST(TextReport, HostileNamesStayWithin100Columns) {
  HostileShape shape;
  shape.iterations = 300;
  auto report = analysis::AnalyzeBuffers({HostileTrace(shape).ToBinary()}, {"h.trace"}, {});
  ASSERT_TRUE(report.ok());
  ExpectFits(analysis::ToText(*report));
  analysis::TextOptions o;
  o.verbose = true;
  ExpectFits(analysis::ToText(*report, o));
}

}  // namespace
}  // namespace cuclimb::testing
