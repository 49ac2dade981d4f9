// SPDX-License-Identifier: Apache-2.0
// The JSON report's fixed keys, types and orders (docs/report-schema.md), and the text report.
#include "report/json_report.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../analysis/scenario_util.h"
#include "ddp_sim.h"
#include "report/text_report.h"

namespace cuclimb::testing {
namespace {

using nlohmann::json;

json Report(const SimOptions& o) {
  const analysis::Report r = AnalyzeSim(o);
  auto text = analysis::ToJson(r);
  EXPECT_TRUE(text.ok());
  return json::parse(*text);
}

SimOptions Climb() {
  SimOptions o;
  o.leak_device = 2;
  o.host_ns_per_leaked = 100;
  o.leak_events = 1;
  return o;
}

TEST(JsonReport, FixedTopLevelKeys) {
  const json j = Report(Climb());
  EXPECT_EQ(j["schema"], "cuclimb.report/1");
  EXPECT_EQ(j["verdict"], "climbing");
  ASSERT_TRUE(j["iterations"].is_object());
  EXPECT_EQ(j["iterations"]["source"], "nvtx_range");
  EXPECT_EQ(j["iterations"]["count"], 120);
  ASSERT_TRUE(j["ranges"].is_array());
  for (const json& r : j["ranges"]) {
    for (const char* k : {"first_ms", "last_ms", "climb_pct", "slope_ms_per_iter", "p_value"}) {
      EXPECT_TRUE(r[k].is_number()) << k;
    }
    EXPECT_TRUE(r["name"].is_string());
    EXPECT_TRUE(r["climbing"].is_boolean());
  }
  ASSERT_TRUE(j["accumulators"].is_array());
  ASSERT_EQ(j["accumulators"].size(), 2u);
  const std::set<std::string> kinds = {"device_allocations",
                                       "pinned_allocations",
                                       "managed_allocations",
                                       "vmm_mappings",
                                       "pool_reserved",
                                       "streams",
                                       "events",
                                       "modules",
                                       "graphs",
                                       "nvtx_regions",
                                       "host_function"};
  int rank = 0;
  for (const json& a : j["accumulators"]) {
    EXPECT_EQ(a["rank"], ++rank);
    EXPECT_TRUE(kinds.count(a["kind"].get<std::string>())) << a["kind"];
    EXPECT_TRUE(a["key"].is_string());
    EXPECT_TRUE(a["growth_per_iter"].is_number());
    EXPECT_TRUE(a["unit"] == "handles" || a["unit"] == "bytes" || a["unit"] == "samples");
    EXPECT_TRUE(a["p_value"].is_number());
    EXPECT_TRUE(a["explains"].is_array());
    ASSERT_TRUE(a["evidence"].is_object());
    EXPECT_EQ(a["evidence"]["series"].size(), 120u);
    EXPECT_TRUE(a["evidence"]["call_site"]["frames"].is_array());
  }
  EXPECT_EQ(j["accumulators"][0]["kind"], "device_allocations");
  EXPECT_EQ(j["accumulators"][0]["likely_cause_of"], json::array({"P/step"}));
  EXPECT_EQ(j["cause"]["kind"], "accumulator");
  EXPECT_EQ(j["cause"]["accumulator"], j["accumulators"][0]["id"]);
  EXPECT_EQ(j["accumulators"][0]["growth_per_iter"], 2);
  EXPECT_EQ(j["accumulators"][0]["evidence"]["bytes_per_iter"], 1024);
  // The events leak has a path to "iteration" (which creates the events) but not to P/step.
  EXPECT_EQ(j["accumulators"][1]["kind"], "events");
  for (const json& name : j["accumulators"][1]["explains"]) EXPECT_NE(name, "P/step");
}

TEST(JsonReport, EmptyAccumulatorsWhenFlat) {
  const json j = Report(SimOptions{});
  EXPECT_EQ(j["verdict"], "flat");
  EXPECT_TRUE(j["accumulators"].is_array());
  EXPECT_TRUE(j["accumulators"].empty());
}

TEST(JsonReport, PerRankSections) {
  const json j = Report(Climb());
  ASSERT_EQ(j["ranks"].size(), 1u);
  const json& r = j["ranks"][0];
  for (const char* k :
       {"trace", "process", "threads", "iterations", "ranges", "accumulators", "kernels", "apis",
        "state", "leaks", "temporaries", "peak", "fragmentation", "overhead", "notes"}) {
    EXPECT_TRUE(r.contains(k)) << k;
  }
  EXPECT_EQ(r["iterations"]["spans"].size(), 120u);
  const json& step = r["ranges"][1];
  EXPECT_EQ(step["name"], "P/step");
  EXPECT_EQ(step["total_ms"].size(), 120u);
  for (const char* k : {"wall", "api", "sync", "host", "gpu", "by_api", "by_sync", "by_kernel"}) {
    EXPECT_TRUE(step["decomposition"].contains(k)) << k;
  }
  EXPECT_EQ(r["trace"]["status"], "complete");
}

TEST(JsonReport, NumbersAreRoundedAndStable) {
  const analysis::Report r = AnalyzeSim(Climb());
  const std::string a = *analysis::ToJson(r), b = *analysis::ToJson(r);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.find("nan"), std::string::npos);
  // Arrays of numbers stay on one line.
  EXPECT_NE(a.find("\"series\": [2, 4, 6, 8"), std::string::npos);
  analysis::JsonOptions one_line;
  one_line.indent = -1;
  const std::string c = *analysis::ToJson(r, one_line);
  EXPECT_EQ(c.find('\n'), c.size() - 1);
  EXPECT_EQ(json::parse(a), json::parse(c));
}

TEST(JsonReport, InvalidUtf8InNamesIsReplaced) {
  TraceBuilder b;
  for (int i = 0; i < 20; ++i) {
    b.Push(i * 1000, "it\xff\xfe");
    b.Launch(i * 1000 + 10, 5, "kern\xc3", i + 1);
    b.Pop(i * 1000 + 500);
  }
  const std::string bytes = b.ToBinary();
  auto r = analysis::AnalyzeBuffers({bytes}, {"bad\xff.trace"}, {});
  ASSERT_TRUE(r.ok());
  auto j = analysis::ToJson(*r);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_NO_THROW([[maybe_unused]] const json parsed = json::parse(*j));
}

// The number every report writes: printf's %.6g read back by strtod, as reports were always
// written (and as the goldens hold); the fast conversion must give the same double for all.
TEST(JsonReport, NumbersAreWhatPrintfAndStrtodGive) {
  auto reference = [](double v) -> json {
    if (!std::isfinite(v) || v == 0)
      return 0;
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6g", v);
    const double r = std::strtod(buf, nullptr);
    if (r == std::trunc(r) && std::fabs(r) < 9.0e15)
      return static_cast<int64_t>(r);
    return r;
  };
  std::mt19937_64 rng(7);
  std::vector<double> values = {1,        -1,   0.5,  1e-320,   -4.9e-324, 1.7976931348623157e308,
                                999999.5, 1e15, 9e15, 123456.5, 0.1 + 0.2, 2.5e-7};
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = rng();
    double v = 0;
    std::memcpy(&v, &bits, sizeof(v));
    values.push_back(v);  // any bit pattern: every exponent, subnormals, NaNs
    values.push_back(std::ldexp(static_cast<double>(rng() >> 11), -static_cast<int>(rng() % 80)));
  }
  for (double v : values) {
    const json got = analysis::JsonNumber(v), want = reference(v);
    ASSERT_EQ(got.dump(), want.dump()) << v;
    ASSERT_EQ(got.type(), want.type()) << v;
  }
}

// A job's ranks' sections are written on several threads and spliced into the top-level object:
// the text is what one dump of the whole object gives, for any number of threads and indents.
TEST(JsonReport, JobReportIsTheSameForAnyNumberOfThreads) {
  DdpOptions job;
  job.ranks = 5;
  job.iterations = 90;
  job.checkpoint_every = 25;
  job.rank.resize(5);
  job.rank[3].keep_per_iter = 2;
  job.rank[3].host_ns_per_kept = 50;
  const std::vector<std::string> traces = SimulateDdp(job);
  std::vector<std::string_view> views(traces.begin(), traces.end());
  auto report = analysis::AnalyzeBuffers(views, {"r0", "r1", "r2", "r3", "r4"}, {});
  ASSERT_TRUE(report.ok()) << report.status();
  const nlohmann::ordered_json whole = analysis::ReportJson(*report);
  for (int indent : {1, 0, 2, -1}) {
    analysis::JsonOptions options;
    options.indent = indent;
    const std::string one = *analysis::ToJson(*report, options);
    EXPECT_EQ(one, analysis::DumpJson(whole, indent) + "\n") << indent;
    for (int jobs : {2, 3, 8}) {
      options.jobs = jobs;
      EXPECT_EQ(*analysis::ToJson(*report, options), one) << indent << " " << jobs;
    }
  }
  analysis::JsonOptions summary;
  summary.per_rank = false;
  EXPECT_FALSE(json::parse(*analysis::ToJson(*report, summary)).contains("ranks"));
  EXPECT_EQ(analysis::ReportJson(*report, true, 4), whole);
}

TEST(TextReport, TableAndAccumulatorLines) {
  const std::string t = analysis::ToText(AnalyzeSim(Climb()));
  EXPECT_NE(t.find("range"), std::string::npos);
  EXPECT_NE(t.find("P/step"), std::string::npos);
  EXPECT_NE(t.find("climbing"), std::string::npos);
  EXPECT_NE(t.find("accumulators (state that grows every iteration):\n  1. device_allocations"),
            std::string::npos)
      << t;
  // Graded attribution: P/step is listed under its likely cause, not as unexplained.
  const size_t likely = t.find("most likely caused by accumulator 1 (device_allocations");
  ASSERT_NE(likely, std::string::npos) << t;
  EXPECT_NE(t.find("\n    P/step", likely), std::string::npos) << t;
  EXPECT_NE(t.find("likely cause of 1 climbing range"), std::string::npos) << t;
  EXPECT_NE(t.find("verdict: climbing"), std::string::npos);
  EXPECT_EQ(analysis::FormatMs(1.1734), "1.17 ms");
  EXPECT_EQ(analysis::FormatMs(0.85), "850 µs");
  EXPECT_EQ(analysis::FormatMs(2310), "2.31 s");
}

}  // namespace
}  // namespace cuclimb::testing
