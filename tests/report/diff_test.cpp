// SPDX-License-Identifier: Apache-2.0
// cuclimb diff: the divergence test on series, and whole runs of the simulator (A/A, flat vs a
// leak that starts at a known iteration, payload alignment), JSON and HTML forms.
#include "diff/diff.h"

#include <cmath>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "report_traces.h"

namespace cuclimb::testing {
namespace {

using analysis::DiffOptions;
using analysis::FirstDivergence;
using Json = nlohmann::json;

analysis::Report AnalyzeSimulation(const SimOptions& o) {
  auto report = analysis::AnalyzeBuffers({SimulateBinary(o)}, {"sim.trace"}, {});
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *std::move(report) : analysis::Report{};
}

analysis::Series Noisy(size_t n, double level, double noise, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d(0, noise);
  analysis::Series s(n);
  for (double& v : s) v = level + d(rng);
  return s;
}

TEST(FirstDivergence, Counts) {
  const DiffOptions o;
  analysis::Series a(100, 12), b(100, 12);
  EXPECT_EQ(FirstDivergence(a, b, false, o), -1);
  for (size_t i = 40; i < 100; ++i) b[i] = 13;
  EXPECT_EQ(FirstDivergence(a, b, false, o), 40);
  // A blip shorter than `persist` is not a divergence.
  analysis::Series c(100, 12);
  c[10] = c[11] = 30;
  EXPECT_EQ(FirstDivergence(a, c, false, o), -1);
  // Within 1 % of a large level is the same.
  analysis::Series big(100, 1e6), near(100, 1e6 + 5000);
  EXPECT_EQ(FirstDivergence(big, near, false, o), -1);
}

TEST(FirstDivergence, TimesNeedToExceedToleranceAndNoise) {
  const DiffOptions o;
  const analysis::Series a = Noisy(1000, 1.0, 0.02, 1), b = Noisy(1000, 1.0, 0.02, 2);
  EXPECT_EQ(FirstDivergence(a, b, true, o), -1);
  // 3 % apart: under the 5 % tolerance.
  analysis::Series c = Noisy(1000, 1.03, 0.02, 3);
  EXPECT_EQ(FirstDivergence(a, c, true, o), -1);
  // A ramp of 0.1 % per iteration from iteration 300 reaches 5 % around iteration 350.
  analysis::Series d = Noisy(1000, 1.0, 0.02, 4);
  for (size_t i = 300; i < d.size(); ++i) d[i] += 0.001 * static_cast<double>(i - 300);
  const int64_t at = FirstDivergence(a, d, true, o);
  EXPECT_GE(at, 330);
  EXPECT_LE(at, 380);
  // Very noisy runs need more than the tolerance.
  const analysis::Series e = Noisy(200, 1.0, 0.5, 5), f = Noisy(200, 1.06, 0.5, 6);
  EXPECT_EQ(FirstDivergence(e, f, true, o), -1);
  EXPECT_EQ(FirstDivergence({}, {}, true, o), -1);
}

TEST(Diff, SameProgramTwiceIsTheSame) {
  const analysis::Report a = AnalyzeSimulation(FlatSim(200, 1));
  const analysis::Report b = AnalyzeSimulation(FlatSim(200, 7));
  const analysis::DiffReport d = analysis::DiffReports(a, b);
  EXPECT_EQ(d.verdict, "same") << analysis::DiffToText(d);
  EXPECT_EQ(d.first_divergence, -1);
  EXPECT_EQ(d.aligned, 200);
  EXPECT_EQ(d.alignment, "index");
  EXPECT_FALSE(d.ranges.empty());
  EXPECT_FALSE(d.census.empty());
}

TEST(Diff, FindsWhereTheLeakStartsAndWhatItDoes) {
  SimOptions climb = ClimbSim(200, 1);
  climb.leak_from = 60;
  const analysis::Report base = AnalyzeSimulation(FlatSim(200, 1));
  const analysis::Report other = AnalyzeSimulation(climb);
  const analysis::DiffReport d = analysis::DiffReports(base, other);
  const std::string text = analysis::DiffToText(d);
  EXPECT_EQ(d.verdict, "diverged") << text;
  EXPECT_EQ(d.first_divergence, 60) << text;
  ASSERT_FALSE(d.first_items.empty());
  bool census = false;
  for (const auto& it : d.first_items) census |= it.section == "census" && it.metric == "allocs";
  EXPECT_TRUE(census) << text;
  // The leak is a new accumulator in the other run.
  bool fresh = false;
  for (const analysis::DiffEntry& e : d.accumulators) {
    if (e.status == "only_other" && e.key.rfind("device_allocations:", 0) == 0) {
      fresh = true;
      EXPECT_NEAR(e.other_growth, 2, 0.01);
      EXPECT_GE(e.diverges_at, 60);
    }
  }
  EXPECT_TRUE(fresh) << text;
  // The persistent network's step diverges after the leak starts, and climbs only in other.
  bool step = false;
  for (const analysis::DiffEntry& e : d.ranges) {
    if (e.key != "P/step")
      continue;
    step = true;
    EXPECT_GE(e.diverges_at, 60) << text;
    ASSERT_TRUE(e.base && e.other);
    EXPECT_GT(e.other->change_pct, 20);
    EXPECT_LT(std::fabs(e.base->change_pct), 5);
  }
  EXPECT_TRUE(step);
  EXPECT_NE(text.find("verdict: diverged"), std::string::npos);
  EXPECT_NE(d.summary.find("iteration 60"), std::string::npos) << d.summary;
}

TEST(Diff, AlignsByPayloadWhenOneRunStartsLater) {
  const analysis::Report base = AnalyzeSimulation(ClimbSim(120, 1));
  // The same run, recorded from its iteration 20 on: series and spans lose their first 20.
  analysis::Report other = base;
  analysis::RankReport& r = other.ranks[0];
  auto cut = [](analysis::Series* s) {
    if (s->size() >= 20)
      s->erase(s->begin(), s->begin() + 20);
  };
  r.iterations.spans.erase(r.iterations.spans.begin(), r.iterations.spans.begin() + 20);
  r.iterations.count -= 20;
  for (analysis::RangeReport& rr : r.ranges) cut(&rr.total_ms);
  for (analysis::Accumulator& a : r.accumulators) cut(&a.values);
  for (analysis::StateSeries& s : r.state) cut(&s.values);
  for (analysis::KernelRow& k : r.kernels) {
    cut(&k.launches_per_iter);
    cut(&k.mean_us);
  }
  const analysis::DiffReport d = analysis::DiffReports(base, other);
  EXPECT_EQ(d.alignment, "payload");
  EXPECT_EQ(d.aligned, 100);
  EXPECT_EQ(d.base_offset, 20);
  EXPECT_EQ(d.other_offset, 0);
  EXPECT_EQ(d.verdict, "same") << analysis::DiffToText(d);
}

TEST(Diff, JsonAndHtml) {
  SimOptions climb = ClimbSim(120, 1);
  climb.leak_from = 30;
  const analysis::DiffReport d =
      analysis::DiffReports(AnalyzeSimulation(FlatSim(120, 1)), AnalyzeSimulation(climb));
  auto json = analysis::DiffToJson(d);
  ASSERT_TRUE(json.ok());
  EXPECT_EQ(*json, *analysis::DiffToJson(d));
  const Json j = Json::parse(*json);
  EXPECT_EQ(j["schema"], "cuclimb.diff/1");
  EXPECT_EQ(j["verdict"], "diverged");
  EXPECT_EQ(j["first_divergence"]["iteration"], 30);
  EXPECT_FALSE(j["first_divergence"]["items"].empty());
  for (const char* section : {"ranges", "accumulators", "census", "handles", "kernels"}) {
    ASSERT_TRUE(j[section].is_array()) << section;
  }
  EXPECT_TRUE(j["ranges"][0].contains("diverges_at"));
  EXPECT_FALSE(j["ranges"][0].contains("base_series"));  // series only in the page
  auto html = analysis::DiffToHtml(d);
  ASSERT_TRUE(html.ok());
  EXPECT_NE(html->find("\"page\":\"diff\""), std::string::npos);
  EXPECT_NE(html->find("\"base_series\":["), std::string::npos);
  EXPECT_LT(html->size(), 10u << 20);
}

}  // namespace
}  // namespace cuclimb::testing
