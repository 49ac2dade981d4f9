// SPDX-License-Identifier: Apache-2.0
// Golden reports: analyses each trace set of golden.txt and compares the JSON report with the
// checked-in NAME.expected.json. Numbers may differ by round-off (1e-9 relative); anything else
// fails with the JSON path of the first difference. Regenerate with scripts/update_golden.sh.
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "report/json_report.h"

namespace cuclimb::analysis {
namespace {

std::string g_dir;

struct Case {
  std::string name;
  std::vector<std::string> options, traces;
};

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<Case> Cases() {
  std::vector<Case> out;
  std::istringstream in(Slurp(g_dir + "/golden.txt"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream words(line);
    Case c;
    words >> c.name;
    std::string w;
    bool traces = false;
    while (words >> w) {
      if (w == "--")
        traces = true;
      else
        (traces ? c.traces : c.options).push_back(w);
    }
    out.push_back(c);
  }
  return out;
}

AnalyzeOptions Options(const std::vector<std::string>& args) {
  AnalyzeOptions o;
  // Recorded paths and debug packages are looked up in an empty root (update_golden.sh passes
  // --symfs the same way): a program left at its recorded path on this machine must not change
  // the report.
  o.host_root = ::testing::TempDir() + "cuclimb-golden-empty-root";
  mkdir(o.host_root.c_str(), 0755);
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    const std::string& k = args[i];
    const std::string& v = args[i + 1];
    if (k == "--iteration")
      o.iteration = v;
    else if (k == "--warmup")
      o.thresholds.warmup = v == "auto" ? -1 : std::stoll(v);
    else if (k == "--alpha")
      o.thresholds.alpha = std::stod(v);
    else if (k == "--min-climb-pct")
      o.thresholds.min_climb_pct = std::stod(v);
    else if (k == "--min-share")
      o.thresholds.min_share = std::stod(v);
    else if (k == "--top")
      o.top = std::stoi(v);
    else
      ADD_FAILURE() << "golden.txt: unknown option " << k;
  }
  return o;
}

// First difference between two JSON values, as "path: expected vs actual"; "" when equal.
std::string Diff(const nlohmann::json& want, const nlohmann::json& got, const std::string& path) {
  if (want.is_number() && got.is_number()) {
    const double a = want.get<double>(), b = got.get<double>();
    if (a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)))
      return "";
    return path + ": " + want.dump() + " vs " + got.dump();
  }
  if (want.type() != got.type())
    return path + ": " + want.dump().substr(0, 80) + " vs " + got.dump().substr(0, 80);
  if (want.is_object()) {
    for (auto it = want.begin(); it != want.end(); ++it) {
      if (!got.contains(it.key()))
        return path + "/" + it.key() + ": missing";
      if (std::string d = Diff(*it, got[it.key()], path + "/" + it.key()); !d.empty())
        return d;
    }
    for (auto it = got.begin(); it != got.end(); ++it) {
      if (!want.contains(it.key()))
        return path + "/" + it.key() + ": not expected";
    }
    return "";
  }
  if (want.is_array()) {
    if (want.size() != got.size()) {
      return path + ": " + std::to_string(want.size()) + " elements vs " +
             std::to_string(got.size());
    }
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::string d = Diff(want[i], got[i], path + "/" + std::to_string(i)); !d.empty())
        return d;
    }
    return "";
  }
  return want == got ? "" : path + ": " + want.dump() + " vs " + got.dump();
}

TEST(Golden, ReportsMatch) {
  const std::vector<Case> cases = Cases();
  ASSERT_GE(cases.size(), 8u) << "golden.txt not found in " << g_dir;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> bytes;
    std::vector<std::string_view> views;
    for (const std::string& t : c.traces) bytes.push_back(Slurp(g_dir + "/" + t));
    for (const std::string& b : bytes) views.push_back(b);
    auto report = AnalyzeBuffers(views, c.traces, Options(c.options));
    ASSERT_TRUE(report.ok()) << report.status();
    auto json = ToJson(*report);
    ASSERT_TRUE(json.ok());
    const std::string expected = Slurp(g_dir + "/" + c.name + ".expected.json");
    ASSERT_FALSE(expected.empty())
        << c.name << ".expected.json is missing: run scripts/update_golden.sh";
    if (*json == expected)
      continue;
    const std::string d = Diff(nlohmann::json::parse(expected), nlohmann::json::parse(*json), "");
    EXPECT_TRUE(d.empty())
        << c.name << " differs at " << d
        << "\nIf the change is intended, run scripts/update_golden.sh and review the diff.";
  }
}

TEST(Golden, CoversTheScenariosTheIssueAsksFor) {
  std::string names;
  for (const Case& c : Cases()) names += c.name + " ";
  for (const char* want : {"climb_cubecl", "flat_control", "gpu_only_climb", "warmup_stops",
                           "every_kind", "no_nvtx", "truncated", "ranks"}) {
    EXPECT_NE(names.find(want), std::string::npos) << want;
  }
}

}  // namespace
}  // namespace cuclimb::analysis

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: golden_test DIR\n");
    return 2;
  }
  cuclimb::analysis::g_dir = argv[1];
  return RUN_ALL_TESTS();
}
