// SPDX-License-Identifier: Apache-2.0
// The Perfetto / chrome://tracing export: valid trace-event JSON, the tracks and counters it
// promises, slices that nest per thread (Perfetto drops slices that do not), the iteration cut,
// hostile and invalid strings, streaming, and cut traces.
#include "report/perfetto_export.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "analysis/analyze.h"
#include "report_traces.h"

namespace cuclimb::testing {
namespace {

using Json = nlohmann::json;

struct Exported {
  analysis::PerfettoStats stats;
  Json json;
  std::vector<size_t> pieces;  // sizes of the writes
};

analysis::Report AnalyzeBytes(const std::string& bytes) {
  auto report = analysis::AnalyzeBuffers({bytes}, {"t.trace"}, {});
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *std::move(report) : analysis::Report{};
}

absl::StatusOr<Exported> Export(const std::string& bytes, const analysis::PerfettoOptions& o = {}) {
  const analysis::Report report = AnalyzeBytes(bytes);
  auto reader = trace::TraceReader::FromBuffer(bytes);
  EXPECT_TRUE(reader.ok());
  std::string out;
  Exported e;
  auto stats =
      analysis::ExportPerfetto(reader->get(), report.ranks[0], o, [&](std::string_view piece) {
        out.append(piece);
        e.pieces.push_back(piece.size());
        return absl::OkStatus();
      });
  if (!stats.ok())
    return stats.status();
  e.stats = *stats;
  e.json = Json::parse(out);  // throws (test error) when the output is not JSON
  return e;
}

std::vector<Json> Events(const Json& j, const std::string& ph) {
  std::vector<Json> out;
  for (const Json& e : j["traceEvents"]) {
    if (e["ph"] == ph)
      out.push_back(e);
  }
  return out;
}

// Every event has what the trace-event format requires for its phase.
void ExpectWellFormed(const Json& j) {
  ASSERT_TRUE(j["traceEvents"].is_array());
  for (const Json& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid")) << e;
    ASSERT_TRUE(e["pid"].is_number_integer()) << e;
    const std::string ph = e["ph"];
    ASSERT_TRUE(ph == "X" || ph == "M" || ph == "C" || ph == "i" || ph == "b" || ph == "e") << e;
    if (ph == "M") {
      ASSERT_TRUE(e["args"].is_object()) << e;
      continue;
    }
    ASSERT_TRUE(e["ts"].is_number()) << e;
    ASSERT_TRUE(e["name"].is_string()) << e;
    if (ph == "X") {
      ASSERT_TRUE(e["tid"].is_number_integer()) << e;
      ASSERT_TRUE(e["dur"].is_number() && e["dur"].get<double>() >= 0) << e;
    }
    if (ph == "C") {
      for (const auto& [k, v] : e["args"].items()) ASSERT_TRUE(v.is_number()) << e;
    }
  }
}

// Complete slices on one thread track must nest (Perfetto drops improperly nested ones).
void ExpectNested(const Json& j) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> tracks;
  for (const Json& e : Events(j, "X")) {
    const double ts = e["ts"], dur = e["dur"];
    tracks[{e["pid"], e["tid"]}].push_back({ts, ts + dur});
  }
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<double> open;  // ends of enclosing slices
    for (const auto& [a, b] : slices) {
      while (!open.empty() && open.back() <= a + 1e-6) open.pop_back();  // µs with ns digits
      if (!open.empty()) {
        ASSERT_LE(b, open.back() + 1e-6)
            << "pid " << track.first << " tid " << track.second << ": [" << a << ", " << b
            << "] overlaps its parent ending at " << open.back();
      }
      open.push_back(b);
    }
  }
}

TEST(JsonQuote, EscapesAndRepairs) {
  EXPECT_EQ(analysis::JsonQuote("a\"b\\c\n\x01"), "\"a\\\"b\\\\c\\n\\u0001\"");
  EXPECT_EQ(analysis::JsonQuote("caf\xC3\xA9"), "\"caf\xC3\xA9\"");
  EXPECT_EQ(analysis::JsonQuote("\xFF"
                                "a\xC3"),
            "\"\xEF\xBF\xBD"
            "a\xEF\xBF\xBD\"");
  EXPECT_EQ(analysis::JsonQuote("\xED\xA0\x80"),
            "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");  // a surrogate
  EXPECT_NO_THROW([[maybe_unused]] const Json parsed =
                      Json::parse(analysis::JsonQuote("\xF0\x9F\x98\x80 \xE2\x80\xA8")));
}

TEST(PerfettoExport, TracksSlicesAndCounters) {
  auto e = Export(SimulateBinary(ClimbSim(60)));
  ASSERT_TRUE(e.ok()) << e.status();
  const Json& j = e->json;
  ExpectWellFormed(j);
  ExpectNested(j);
  EXPECT_EQ(j["otherData"]["iterations"], "0:60");
  std::set<std::string> process_names, thread_names, counters, kernels, ranges;
  for (const Json& m : Events(j, "M")) {
    if (m["name"] == "process_name")
      process_names.insert(m["args"]["name"].get<std::string>());
    if (m["name"] == "thread_name")
      thread_names.insert(m["args"]["name"].get<std::string>());
  }
  int iterations = 0;
  for (const Json& x : Events(j, "X")) {
    if (x["cat"] == "iteration")
      ++iterations;
    if (x["cat"] == "kernel") {
      kernels.insert(x["name"].get<std::string>());
      EXPECT_GE(x["pid"].get<int64_t>(), int64_t{1} << 30);
    }
    if (x["cat"] == "nvtx")
      ranges.insert(x["name"].get<std::string>());
  }
  for (const Json& c : Events(j, "C")) counters.insert(c["name"].get<std::string>());
  EXPECT_EQ(iterations, 60);
  EXPECT_TRUE(process_names.count("adam_sim --mode climb")) << j["traceEvents"][0];
  EXPECT_TRUE(process_names.count("GPU 0: NVIDIA H200 (simulated)"));
  EXPECT_TRUE(thread_names.count("main") && thread_names.count("loader") &&
              thread_names.count("iterations"));
  EXPECT_TRUE(thread_names.count("stream 0x10")) << "kernels need a stream track";
  EXPECT_TRUE(kernels.count("adam_update_kernel"));
  EXPECT_TRUE(ranges.count("iteration") && ranges.count("P/step"));
  for (const char* c : {"live bytes", "live allocations", "live handles"})
    EXPECT_TRUE(counters.count(c)) << c;
  EXPECT_TRUE(std::any_of(counters.begin(), counters.end(),
                          [](const std::string& c) { return c.rfind("pool.reserved", 0) == 0; }));
  // The live allocations counter ends where the leak leaves it: 2 per iteration, plus set-up.
  const std::vector<Json> live = [&] {
    std::vector<Json> v;
    for (const Json& c : Events(j, "C")) {
      if (c["name"] == "live allocations")
        v.push_back(c);
    }
    return v;
  }();
  ASSERT_FALSE(live.empty());
  EXPECT_GE(live.back()["args"]["pool"].get<int64_t>(), 120);
}

TEST(PerfettoExport, IterationWindow) {
  const std::string bytes = SimulateBinary(ClimbSim(60));
  const analysis::Report report = AnalyzeBytes(bytes);
  analysis::PerfettoOptions o;
  o.first_iteration = 10;
  o.end_iteration = 20;
  auto e = Export(bytes, o);
  ASSERT_TRUE(e.ok()) << e.status();
  ExpectWellFormed(e->json);
  ExpectNested(e->json);
  EXPECT_EQ(e->stats.iterations, 10);
  const auto& spans = report.ranks[0].iterations.spans;
  EXPECT_EQ(e->stats.window_start_ns, spans[10].start_ns);
  EXPECT_EQ(e->stats.window_end_ns, spans[19].end_ns);
  const double w0 = static_cast<double>(spans[10].start_ns) / 1000,
               w1 = static_cast<double>(spans[19].end_ns) / 1000;
  int iterations = 0;
  for (const Json& x : e->json["traceEvents"]) {
    if (x["ph"] == "M")
      continue;
    const double ts = x["ts"];
    EXPECT_GE(ts, w0 - 1e-6) << x;
    EXPECT_LE(ts + (x.contains("dur") ? x["dur"].get<double>() : 0.0), w1 + 1e-6) << x;
    if (x["ph"] == "X" && x["cat"] == "iteration")
      ++iterations;
  }
  EXPECT_EQ(iterations, 10);
  // Counters start from the live state at the window's start, not from zero.
  for (const Json& c : e->json["traceEvents"]) {
    if (c["ph"] == "C" && c["name"] == "live allocations") {
      EXPECT_DOUBLE_EQ(c["ts"].get<double>(), w0);
      EXPECT_GE(c["args"]["pool"].get<int64_t>(), 20);  // 2 leaked per iteration before 10
      break;
    }
  }
  // Fewer events than the whole trace.
  auto all = Export(bytes);
  EXPECT_LT(e->stats.trace_events_written * 4, all->stats.trace_events_written);
}

TEST(PerfettoExport, BadIterationRangeIsInvalidArgument) {
  const std::string bytes = SimulateBinary(FlatSim(20));
  analysis::PerfettoOptions o;
  o.first_iteration = 5;
  o.end_iteration = 50;
  EXPECT_EQ(Export(bytes, o).status().code(), absl::StatusCode::kInvalidArgument);
  o.first_iteration = 30;
  o.end_iteration = -1;
  EXPECT_EQ(Export(bytes, o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PerfettoExport, HostileAndInvalidStringsStayStrings) {
  HostileShape shape;
  shape.iterations = 40;
  shape.ranges = 4;
  TraceBuilder b = HostileTrace(shape);
  b.Launch(1, 10, "bad \xFF\xFE utf8", 999999);
  auto e = Export(b.ToBinary());
  ASSERT_TRUE(e.ok()) << e.status();
  ExpectWellFormed(e->json);
  std::set<std::string> names;
  for (const Json& x : e->json["traceEvents"]) {
    names.insert(x.value("name", ""));
    if (x["ph"] == "M")
      names.insert(x["args"].value("name", ""));
  }
  EXPECT_TRUE(names.count(kHostileKernel));
  EXPECT_TRUE(names.count(kHostileRange));
  EXPECT_TRUE(names.count(kHostileThread));
  EXPECT_TRUE(names.count(kHostileCmd));
  EXPECT_TRUE(names.count("launch bad \xEF\xBF\xBD\xEF\xBF\xBD utf8"));
}

TEST(PerfettoExport, StreamsInPieces) {
  HostileShape shape;
  shape.iterations = 300;
  auto e = Export(HostileTrace(shape).ToBinary());
  ASSERT_TRUE(e.ok());
  ASSERT_GT(e->pieces.size(), 3u);
  for (size_t p : e->pieces) EXPECT_LT(p, (1u << 20) + 4096);
}

TEST(PerfettoExport, CutTraceExportsWhatWasRead) {
  std::string bytes = SimulateBinary(ClimbSim(60));
  const analysis::Report report = AnalyzeBytes(bytes);
  // Cut inside the last events chunk (the trailer chunk after it is smaller than 200 bytes), so
  // that earlier chunks' events are read whatever the encoding's chunk sizes.
  bytes.resize(bytes.size() - 200);
  auto reader = trace::TraceReader::FromBuffer(bytes);
  ASSERT_TRUE(reader.ok());
  std::string out;
  auto stats =
      analysis::ExportPerfetto(reader->get(), report.ranks[0], {}, [&](std::string_view p) {
        out.append(p);
        return absl::OkStatus();
      });
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE((*reader)->status().partial());
  const Json j = Json::parse(out);
  ExpectWellFormed(j);
  bool unfinished = false;
  for (const Json& x : j["traceEvents"])
    unfinished |= x.contains("args") && x["args"].contains("unfinished");
  EXPECT_TRUE(unfinished) << "ranges open at the cut are closed at the last timestamp";
}

TEST(PerfettoExport, WriteErrorsPropagate) {
  const std::string bytes = SimulateBinary(FlatSim(20));
  const analysis::Report report = AnalyzeBytes(bytes);
  auto reader = trace::TraceReader::FromBuffer(bytes);
  auto stats = analysis::ExportPerfetto(reader->get(), report.ranks[0], {}, [](std::string_view) {
    return absl::UnavailableError("disk full");
  });
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace cuclimb::testing
