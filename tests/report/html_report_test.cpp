// SPDX-License-Identifier: Apache-2.0
// The HTML report: escaping of hostile trace strings, determinism, size bounds on long runs, and
// the data the page script needs. (tests/report/browser_test.py renders it in chromium.)
#include "report/html_report.h"

#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "report/json_report.h"
#include "report_traces.h"

namespace cuclimb::testing {
namespace {

using analysis::ToHtml;
using Json = nlohmann::json;

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// The JSON inside <script type="application/json" id="cuclimb-data">.
Json PageData(const std::string& html) {
  const std::string open = "id=\"cuclimb-data\">";
  const size_t a = html.find(open);
  EXPECT_NE(a, std::string::npos);
  const size_t b = html.find("</script>", a);
  EXPECT_NE(b, std::string::npos);
  return Json::parse(html.substr(a + open.size(), b - a - open.size()));
}

analysis::Report AnalyzeBytes(const std::string& bytes, const std::string& name = "t.trace") {
  auto report = analysis::AnalyzeBuffers({bytes}, {name}, {});
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *std::move(report) : analysis::Report{};
}

analysis::Report Hostile(int iterations, int ranges = 36) {
  HostileShape shape;
  shape.iterations = iterations;
  shape.ranges = ranges;
  return AnalyzeBytes(HostileTrace(shape).ToBinary(), "<hostile>.trace");
}

TEST(EscapeJsonForScript, NothingCanCloseTheElementAndTheValueSurvives) {
  const std::string json = Json{{"k", "</script><!-- & \u2028 \u2029 >"}}.dump();
  const std::string safe = analysis::EscapeJsonForScript(json);
  EXPECT_EQ(safe.find('<'), std::string::npos);
  EXPECT_EQ(safe.find('>'), std::string::npos);
  EXPECT_EQ(safe.find('&'), std::string::npos);
  EXPECT_EQ(safe.find("\u2028"), std::string::npos);
  EXPECT_EQ(Json::parse(safe), Json::parse(json));
}

TEST(EscapeHtml, EscapesMarkupCharacters) {
  EXPECT_EQ(analysis::EscapeHtml("<a href='x'>\"&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&quot;&amp;&quot;&lt;/a&gt;");
}

TEST(HtmlReport, HostileStringsStayData) {
  const analysis::Report report = Hostile(60);
  auto html = ToHtml(report);
  ASSERT_TRUE(html.ok()) << html.status();
  // Exactly the page's own two script elements, and no other markup from the trace.
  EXPECT_EQ(Count(*html, "<script"), 2u);
  EXPECT_EQ(Count(*html, "</script"), 2u);
  EXPECT_EQ(Count(*html, "<img"), 0u);
  EXPECT_EQ(Count(*html, "<svg"), 0u);
  EXPECT_EQ(Count(*html, "<iframe"), 0u);
  EXPECT_EQ(Count(*html, "<!--"), 0u);
  // The title carries the command line, escaped.
  EXPECT_NE(html->find("<title>cuclimb: train.py --tag &#39;&quot;&gt;&lt;script&gt;"),
            std::string::npos);
  // The strings arrive intact in the data.
  const Json data = PageData(*html);
  const std::string dump = data.dump();
  EXPECT_NE(dump.find(Json(kHostileKernel).dump()), std::string::npos);
  EXPECT_NE(dump.find(Json(kHostileRange).dump()), std::string::npos);
  EXPECT_NE(dump.find(Json(kHostileFrame).dump()), std::string::npos);
  EXPECT_NE(dump.find(Json(kEntityRange).dump()), std::string::npos);
  EXPECT_EQ(data["ranks"][0]["process"]["cmd"], kHostileCmd);
}

TEST(HtmlReport, HasEveryPartThePageDraws) {
  const analysis::Report report = Hostile(120, 6);
  auto html = ToHtml(report);
  ASSERT_TRUE(html.ok());
  const Json data = PageData(*html);
  EXPECT_EQ(data["schema"], "cuclimb.report/1");
  EXPECT_EQ(data["verdict"], "climbing");
  EXPECT_FALSE(data["headline"]["what"].get<std::string>().empty());
  const Json& r = data["ranks"][0];
  EXPECT_EQ(r["iterations"]["count"], 120);
  ASSERT_GE(r["ranges"].size(), 7u);  // step + 6
  bool climbing = false;
  for (const Json& range : r["ranges"]) {
    EXPECT_EQ(range["total_ms"].size(), 120u) << range["name"];
    climbing |= range["climbing"].get<bool>() && range["name"] == kHostileRange;
  }
  EXPECT_TRUE(climbing) << data["ranks"][0]["ranges"].dump();
  EXPECT_EQ(r["ranges"][0]["decomposition"]["host"]["ms"].size(), 120u);
  ASSERT_FALSE(r["accumulators"].empty());
  const Json& acc = r["accumulators"][0];
  EXPECT_EQ(acc["kind"], "device_allocations");
  EXPECT_EQ(acc["evidence"]["series"].size(), 120u);
  EXPECT_EQ(acc["evidence"]["survivors_by_alloc_iteration"].size(), 120u);
  EXPECT_FALSE(acc["evidence"]["examples"].empty());
  EXPECT_FALSE(acc["evidence"]["call_site"]["frames"].empty());
  EXPECT_FALSE(r["kernels"].empty());
  EXPECT_FALSE(r["state"].empty());
  EXPECT_GT(r["overhead"]["dropped"].get<int64_t>(), 0);
  EXPECT_FALSE(r["temporaries"]["lifetime_histogram"].empty());
  EXPECT_EQ(data["page"]["series_left_out"], 0);
  EXPECT_FALSE(r["iterations"].contains("spans"));  // the page does not draw them
}

// One model, one serializer: the page's data is the JSON report, key for key, except what the
// page documents as cut (spans, undrawn rows and series) and its own "page" notes.
TEST(HtmlReport, PageDataIsTheJsonReport) {
  const analysis::Report report = AnalyzeBytes(SimulateBinary(ClimbSim(200)));
  const Json page = PageData(*ToHtml(report));
  const Json json = Json::parse(*analysis::ToJson(report));
  std::function<void(const Json&, const Json&, const std::string&)> same_keys =
      [&](const Json& p, const Json& j, const std::string& where) {
        if (!p.is_object() || !j.is_object())
          return;
        for (auto it = p.begin(); it != p.end(); ++it) {
          if (it.key() == "page")
            continue;
          EXPECT_TRUE(j.contains(it.key()))
              << where << "/" << it.key() << " is not in the JSON report";
          if (j.contains(it.key()))
            same_keys(it.value(), j[it.key()], where + "/" + it.key());
        }
        for (auto it = j.begin(); it != j.end(); ++it) {
          if (it.key() != "spans") {
            EXPECT_TRUE(p.contains(it.key()))
                << where << "/" << it.key() << " is missing from the page";
          }
        }
      };
  same_keys(page, json, "");
  for (size_t i = 0; i < page["ranks"][0]["ranges"].size(); ++i) {
    same_keys(page["ranks"][0]["ranges"][i], json["ranks"][0]["ranges"][i], "range");
    EXPECT_EQ(page["ranks"][0]["ranges"][i]["total_ms"], json["ranks"][0]["ranges"][i]["total_ms"]);
  }
  EXPECT_EQ(page["headline"], json["headline"]);
  EXPECT_EQ(page["accumulators"], json["accumulators"]);
}

// Kernel timing is sampled: iterations without GPU records are gaps (null), not zeros, in the
// JSON report and on the page; iterations with records keep their values.
TEST(HtmlReport, IterationsWithoutGpuRecordsAreGaps) {
  SimOptions o = ClimbSim(200);
  o.sampled_kernels_every = 16;
  const analysis::Report report = AnalyzeBytes(SimulateBinary(o));
  const Json json = Json::parse(*analysis::ToJson(report));
  const Json& rank = json["ranks"][0];
  int gaps = 0, timed = 0;
  for (const Json& v : rank["ranges"][0]["decomposition"]["gpu"]["ms"]) {
    gaps += v.is_null();
    timed += v.is_number() && v.get<double>() > 0;
  }
  EXPECT_GT(gaps, 150) << rank["ranges"][0]["decomposition"]["gpu"]["ms"].dump();
  EXPECT_GT(timed, 8);
  for (const Json& k : rank["kernels"]) {
    for (size_t i = 0; i < k["gpu_ms_per_iter"].size(); ++i) {
      EXPECT_EQ(k["gpu_ms_per_iter"][i].is_null(), k["mean_us"][i].is_null()) << i;
    }
  }
  // Host-side series have no gaps.
  for (const Json& v : rank["ranges"][0]["total_ms"]) EXPECT_TRUE(v.is_number());
  const Json page = PageData(*ToHtml(report));
  EXPECT_EQ(page["ranks"][0]["ranges"][0]["decomposition"]["gpu"]["ms"],
            rank["ranges"][0]["decomposition"]["gpu"]["ms"]);
}

TEST(HtmlReport, SameReportSameBytes) {
  const std::string bytes = SimulateBinary(ClimbSim(120));
  const std::string a = *ToHtml(AnalyzeBytes(bytes));
  const std::string b = *ToHtml(AnalyzeBytes(bytes));
  EXPECT_EQ(a, b);
}

TEST(HtmlReport, LongHostileRunStaysUnderTenMegabytes) {
  const analysis::Report report = Hostile(1500);
  auto html = ToHtml(report);
  ASSERT_TRUE(html.ok());
  RecordProperty("html_bytes_1500_iterations_36_ranges", static_cast<int>(html->size()));
  EXPECT_LT(html->size(), 10u << 20);
  const Json data = PageData(*html);
  EXPECT_GE(data["ranks"][0]["ranges"].size(), 37u);
  // Every range keeps its exact series at 1500 iterations.
  for (const Json& range : data["ranks"][0]["ranges"]) EXPECT_EQ(range["total_ms"].size(), 1500u);
}

TEST(HtmlReport, SimulatedClimbOf1500IterationsIsSmall) {
  auto html = ToHtml(AnalyzeBytes(SimulateBinary(ClimbSim(1500))));
  ASSERT_TRUE(html.ok());
  RecordProperty("html_bytes_sim_1500", static_cast<int>(html->size()));
  EXPECT_LT(html->size(), 10u << 20);
}

TEST(HtmlReport, BudgetLeavesSeriesOutAndSaysSo) {
  const analysis::Report report = Hostile(300);
  analysis::HtmlOptions o;
  o.max_data_bytes = 64 << 10;
  auto html = ToHtml(report, o);
  ASSERT_TRUE(html.ok());
  const Json data = PageData(*html);
  EXPECT_GT(data["page"]["series_left_out"].get<int>(), 0);
  EXPECT_LT(html->size(), (64u << 10) + 200000u);  // data budget + template and script
  // Rows stay even without their series.
  EXPECT_GE(data["ranks"][0]["ranges"].size(), 37u);
}

TEST(HtmlReport, VeryLongRunsAreBinned) {
  const analysis::Report report = Hostile(1200, 1);
  analysis::HtmlOptions o;
  o.max_points = 500;
  auto html = ToHtml(report, o);
  ASSERT_TRUE(html.ok());
  const Json data = PageData(*html);
  const Json& s = data["ranks"][0]["ranges"][0]["total_ms"];
  ASSERT_TRUE(s.is_object()) << s.dump().substr(0, 200);
  EXPECT_EQ(s["bin"], 3);
  EXPECT_EQ(s["v"].size(), 400u);
}

TEST(HtmlPage, PlaceholdersInDataAreNotExpanded) {
  const std::string page = analysis::HtmlPage("{{JS}}", R"({"x":"{{CSS}} {{DATA}}"})");
  EXPECT_NE(page.find("<title>{{JS}}</title>"), std::string::npos);
  EXPECT_NE(page.find(R"({"x":"{{CSS}} {{DATA}}"})"), std::string::npos);
  EXPECT_NE(page.find("script-src 'sha256-"), std::string::npos);
  // default-src does not cover these: an injected <base> or <form> must not work either.
  EXPECT_NE(page.find("base-uri 'none'"), std::string::npos);
  EXPECT_NE(page.find("form-action 'none'"), std::string::npos);
}

}  // namespace
}  // namespace cuclimb::testing
