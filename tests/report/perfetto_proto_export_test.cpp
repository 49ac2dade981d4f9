// SPDX-License-Identifier: Apache-2.0
// The protobuf Perfetto export's contract in C++ (perfetto_proto_test.py decodes its files with
// an independent decoder): the iteration window's errors, write errors, pieces of bounded size,
// compressed bundles, invalid UTF-8 names repaired, ranges left open by a cut trace closed.
#include "report/perfetto_proto_export.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/analyze.h"
#include "report_traces.h"

namespace cuclimb::testing {
namespace {

analysis::Report AnalyzeBytes(const std::string& bytes) {
  auto report = analysis::AnalyzeBuffers({bytes}, {"t.trace"}, {});
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *std::move(report) : analysis::Report{};
}

struct Exported {
  analysis::PerfettoStats stats;
  std::string bytes;
  std::vector<size_t> pieces;
  bool partial = false;
};

absl::StatusOr<Exported> Export(const std::string& trace, analysis::PerfettoOptions o = {},
                                const std::string& analyzed = "") {
  const analysis::Report report = AnalyzeBytes(analyzed.empty() ? trace : analyzed);
  auto reader = trace::TraceReader::FromBuffer(trace);
  EXPECT_TRUE(reader.ok());
  Exported e;
  auto stats =
      analysis::ExportPerfettoProto(reader->get(), report.ranks[0], o, [&](std::string_view piece) {
        e.bytes.append(piece);
        e.pieces.push_back(piece.size());
        return absl::OkStatus();
      });
  if (!stats.ok())
    return stats.status();
  e.stats = *stats;
  e.partial = (*reader)->status().partial();
  return e;
}

bool Contains(const std::string& bytes, std::string_view what) {
  return bytes.find(what) != std::string::npos;
}

TEST(PerfettoProtoExport, UncompressedPacketsHoldTheNames) {
  analysis::PerfettoOptions o;
  o.compress_packets = false;
  auto e = Export(SimulateBinary(ClimbSim(30)), o);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->stats.iterations, 30);
  EXPECT_GT(e->stats.trace_events_written, e->stats.events_read);  // a BEGIN and an END per call
  for (const char* name : {"adam_update_kernel", "P/step", "iteration 29", "live bytes: pool",
                           "step time", "GPU 0: NVIDIA H200 (simulated)"}) {
    EXPECT_TRUE(Contains(e->bytes, name)) << name;
  }
  // Interned: a kernel name is written twice (the kernel, "launch NAME") for 30 iterations.
  size_t count = 0;
  for (size_t at = e->bytes.find("adam_update_kernel"); at != std::string::npos;
       at = e->bytes.find("adam_update_kernel", at + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 2u);
}

TEST(PerfettoProtoExport, CompressedBundlesAreSmaller) {
  const std::string trace = SimulateBinary(ClimbSim(60));
  analysis::PerfettoOptions plain;
  plain.compress_packets = false;
  auto a = Export(trace, plain), b = Export(trace);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->stats.trace_events_written, b->stats.trace_events_written);
  EXPECT_LT(b->bytes.size() * 3, a->bytes.size());
  EXPECT_FALSE(Contains(b->bytes, "adam_update_kernel"));    // inside a deflated bundle
  EXPECT_EQ(static_cast<unsigned char>(b->bytes[0]), 0x0a);  // Trace.packet, length-delimited
}

TEST(PerfettoProtoExport, WindowAndItsErrors) {
  const std::string trace = SimulateBinary(FlatSim(20));
  analysis::PerfettoOptions o;
  o.first_iteration = 5;
  o.end_iteration = 50;
  EXPECT_EQ(Export(trace, o).status().code(), absl::StatusCode::kInvalidArgument);
  o.end_iteration = 8;
  o.compress_packets = false;
  auto e = Export(trace, o);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->stats.iterations, 3);
  EXPECT_TRUE(Contains(e->bytes, "iteration 7"));
  EXPECT_FALSE(Contains(e->bytes, "iteration 8"));
  EXPECT_FALSE(Contains(e->bytes, "iteration 4"));
}

TEST(PerfettoProtoExport, InvalidUtf8NamesAreRepaired) {
  HostileShape shape;
  shape.iterations = 20;
  TraceBuilder b = HostileTrace(shape);
  b.Launch(1, 10, "bad \xFF\xFE utf8", 999999);
  analysis::PerfettoOptions o;
  o.compress_packets = false;
  auto e = Export(b.ToBinary(), o);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(Contains(e->bytes, "launch bad \xEF\xBF\xBD\xEF\xBF\xBD utf8"));
  EXPECT_FALSE(Contains(e->bytes, "\xFF\xFE"));
  EXPECT_TRUE(Contains(e->bytes, kHostileKernel));
}

TEST(PerfettoProtoExport, StreamsInBoundedPieces) {
  HostileShape shape;
  shape.iterations = 300;
  analysis::PerfettoOptions o;
  o.compress_packets = false;
  auto e = Export(HostileTrace(shape).ToBinary(), o);
  ASSERT_TRUE(e.ok());
  ASSERT_GT(e->pieces.size(), 3u);
  for (size_t p : e->pieces) EXPECT_LT(p, (1u << 20) + 4096);
}

TEST(PerfettoProtoExport, CutTraceClosesOpenRanges) {
  const std::string whole = SimulateBinary(ClimbSim(60));
  const std::string cut = whole.substr(0, whole.size() * 2 / 3);
  analysis::PerfettoOptions o;
  o.compress_packets = false;
  auto e = Export(cut, o, whole);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->partial);
  EXPECT_TRUE(Contains(e->bytes, "unfinished")) << "ranges open at the cut end at the last time";
}

TEST(PerfettoProtoExport, WriteErrorsPropagate) {
  const std::string trace = SimulateBinary(FlatSim(20));
  const analysis::Report report = AnalyzeBytes(trace);
  auto reader = trace::TraceReader::FromBuffer(trace);
  int calls = 0;
  auto stats =
      analysis::ExportPerfettoProto(reader->get(), report.ranks[0], {}, [&](std::string_view) {
        ++calls;
        return absl::UnavailableError("disk full");
      });
  EXPECT_EQ(stats.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(calls, 1) << "nothing is written after the first error";
}

TEST(ValidUtf8, RepairsLikeJsonQuote) {
  EXPECT_EQ(analysis::ValidUtf8("caf\xC3\xA9"), "caf\xC3\xA9");
  EXPECT_EQ(analysis::ValidUtf8("\xFF"
                                "a\xC3"),
            "\xEF\xBF\xBD"
            "a\xEF\xBF\xBD");
  EXPECT_EQ(analysis::ValidUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(analysis::ValidUtf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

}  // namespace
}  // namespace cuclimb::testing
