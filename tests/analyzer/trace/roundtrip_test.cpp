// SPDX-License-Identifier: Apache-2.0
// Round trips: events → binary → JSON Lines → binary read back identical, for every event type
// and field, with strings and stacks resolved.
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interposer/format/event_fields.h"
#include "random_trace.h"
#include "trace/binary_writer.h"
#include "trace/jsonl.h"
#include "trace/reader.h"
#include "trace_builder.h"

namespace cuclimb::trace {
namespace {

using testing::RandomTrace;
using testing::TraceBuilder;

// An event with its strings and stacks resolved to text, comparable across id spaces.
struct Resolved {
  Event ev;
  std::vector<std::string> strings;
  std::vector<std::vector<std::string>> stacks;
  bool operator==(const Resolved& o) const {
    return std::memcmp(&ev, &o.ev, sizeof(ev)) == 0 && strings == o.strings && stacks == o.stacks;
  }
};

Resolved Resolve(const Event& ev, const StringTable& strings, const StackTable& stacks) {
  Resolved r{ev, {}, {}};
  const format::EventSpec& spec = format::SpecOf(ev.type);
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    const format::FieldSpec& f = spec.fields[i];
    const auto id = static_cast<uint32_t>(format::GetSlot(ev, f.slot));
    if (f.coding == format::Coding::kString) {
      r.strings.emplace_back(strings.Get(id));
      format::SetSlot(&r.ev, f.slot, 0);
    } else if (f.coding == format::Coding::kStack) {
      std::vector<std::string> frames;
      for (uint64_t fr : stacks.Get(id)) {
        frames.push_back(
            format::IsStringFrame(fr)
                ? std::string(strings.Get(static_cast<uint32_t>(format::FrameValue(fr))))
                : "pc:" + std::to_string(format::FrameValue(fr)));
      }
      r.stacks.push_back(frames);
      format::SetSlot(&r.ev, f.slot, 0);
    }
  }
  return r;
}

std::vector<Resolved> ResolveAll(const TraceBuilder& b) {
  std::vector<Resolved> out;
  for (const Event& e : b.events()) out.push_back(Resolve(e, b.strings(), b.stacks()));
  return out;
}

std::vector<Resolved> ReadResolved(std::string_view bytes, ReadStatus* status,
                                   std::optional<Event>* trailer = nullptr) {
  std::vector<Resolved> out;
  auto reader = TraceReader::FromBuffer(bytes);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok())
    return out;
  Event ev{};
  while ((*reader)->Next(&ev))
    out.push_back(Resolve(ev, (*reader)->strings(), (*reader)->stacks()));
  *status = (*reader)->status();
  if (trailer != nullptr)
    *trailer = (*reader)->trailer();
  return out;
}

// Converts whatever `bytes` holds to the other form, as `cuclimb convert` does.
std::string Convert(std::string_view bytes, bool to_binary) {
  auto reader = TraceReader::FromBuffer(bytes);
  EXPECT_TRUE(reader.ok());
  std::string out;
  Event ev{};
  if (to_binary) {
    BinaryTraceWriter w((*reader)->header(), StringSink(&out), 3, 4096);
    while ((*reader)->Next(&ev))
      EXPECT_TRUE(w.Add(ev, (*reader)->strings(), (*reader)->stacks()).ok());
    if ((*reader)->trailer()) {
      const Event& t = *(*reader)->trailer();
      EXPECT_TRUE(w.Finish(t.ts, t.value, (*reader)->Str(t.text)).ok());
    }
  } else {
    AppendHeaderLine((*reader)->header(), &out);
    while ((*reader)->Next(&ev))
      AppendEventLine(ev, (*reader)->strings(), (*reader)->stacks(), &out);
    if ((*reader)->trailer()) {
      AppendEventLine(*(*reader)->trailer(), (*reader)->strings(), (*reader)->stacks(), &out);
    }
  }
  return out;
}

class RoundTripTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(RoundTripTest, BinaryJsonBinaryIsIdentical) {
  TraceBuilder b = RandomTrace(GetParam(), 3000);
  b.set_dropped(17);
  const std::vector<Resolved> expected = ResolveAll(b);

  const std::string bin1 = b.ToBinary(true, 3, 8192);  // many chunks
  ReadStatus st;
  std::optional<Event> trailer;
  EXPECT_EQ(ReadResolved(bin1, &st, &trailer), expected);
  EXPECT_EQ(st.reason, StopReason::kComplete) << st.message;
  EXPECT_GT(st.chunks, 3u);
  ASSERT_TRUE(trailer.has_value());
  EXPECT_EQ(trailer->value, 17);

  const std::string json = Convert(bin1, /*to_binary=*/false);
  EXPECT_EQ(ReadResolved(json, &st), expected);
  EXPECT_EQ(st.reason, StopReason::kComplete) << st.message;

  const std::string bin2 = Convert(json, /*to_binary=*/true);
  EXPECT_EQ(ReadResolved(bin2, &st, &trailer), expected);
  EXPECT_EQ(st.reason, StopReason::kComplete) << st.message;
  ASSERT_TRUE(trailer.has_value());
  EXPECT_EQ(trailer->value, 17);

  // Text is stable: converting again gives the same lines byte for byte.
  EXPECT_EQ(Convert(bin2, false), json);
}

INSTANTIATE_TEST_SUITE_P(Seeds, RoundTripTest, ::testing::Values(1, 2, 3, 42, 1234567));

TEST(RoundTripTest, EveryEventTypeIsCovered) {
  TraceBuilder b = RandomTrace(7, 3000);
  std::vector<int> seen(static_cast<int>(EventType::kCount), 0);
  for (const Event& e : b.events()) ++seen[static_cast<int>(e.type)];
  for (int t = 1; t < static_cast<int>(EventType::kTrailer); ++t) {
    EXPECT_GT(seen[t], 0) << format::kEventSchema[t].json;
  }
}

TEST(RoundTripTest, RawAndCompressedChunksReadAlike) {
  TraceBuilder b = RandomTrace(9, 500);
  ReadStatus st;
  EXPECT_EQ(ReadResolved(b.ToBinary(true, 0), &st), ReadResolved(b.ToBinary(true, 19), &st));
}

// Format 1.0 (rows), 1.1 (columns) and 1.2 (columns with an address history) hold the same
// events; readers read all three.
TEST(RoundTripTest, EveryLayoutReadsAlike) {
  TraceBuilder b = RandomTrace(12, 3000);
  const std::vector<Resolved> expected = ResolveAll(b);
  for (const size_t chunk : {size_t{2048}, size_t{1} << 20}) {
    ReadStatus st;
    EXPECT_EQ(ReadResolved(b.ToBinary(true, 3, chunk, format::ChunkLayout::kRows), &st), expected);
    EXPECT_EQ(st.reason, StopReason::kComplete) << st.message;
    EXPECT_EQ(ReadResolved(b.ToBinary(true, 3, chunk, format::ChunkLayout::kColumns), &st),
              expected);
    EXPECT_EQ(st.reason, StopReason::kComplete) << st.message;
    EXPECT_EQ(ReadResolved(b.ToBinary(true, 3, chunk, format::ChunkLayout::kColumnsV2), &st),
              expected);
    EXPECT_EQ(st.reason, StopReason::kComplete) << st.message;
  }
}

// The layouts encode values differently (columns split every word into byte planes, 1.2 codes
// addresses by a history): extreme values of every coding must survive all of them.
TEST(RoundTripTest, ExtremeValuesSurviveEveryLayout) {
  TraceBuilder b;
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  for (int64_t ts : {int64_t{0}, kMax, kMin, int64_t{-1}, int64_t{1}}) {
    Event& a = b.Alloc(ts, ~uint64_t{0}, ~uint64_t{0});
    a.dur = kMin;
    a.corr = ~uint64_t{0};
    a.aux = 0x8000'0000'0000'0000ull;
    a.device = std::numeric_limits<int32_t>::min();
    Event& g = b.Gauge(ts, "g", kMin, ~uint64_t{0});
    g.device = std::numeric_limits<int32_t>::max();
    Event& l = b.Launch(ts, 1, "k", ~uint64_t{0});
    l.grid[0] = l.grid[1] = l.grid[2] = ~uint32_t{0};
    l.corr = 1;
  }
  const std::vector<Resolved> expected = ResolveAll(b);
  for (auto layout : {format::ChunkLayout::kRows, format::ChunkLayout::kColumns,
                      format::ChunkLayout::kColumnsV2}) {
    ReadStatus st;
    EXPECT_EQ(ReadResolved(b.ToBinary(true, 3, 512, layout), &st), expected);
    EXPECT_EQ(st.reason, StopReason::kComplete) << st.message;
  }
}

TEST(RoundTripTest, InvalidUtf8IsReplacedNotDropped) {
  TraceBuilder b;
  b.Push(1, std::string("bad\xff\xfe name"));
  const std::string json = Convert(b.ToBinary(), false);
  EXPECT_NE(json.find("bad\xef\xbf\xbd\xef\xbf\xbd name"), std::string::npos) << json;
  ReadStatus st;
  EXPECT_EQ(ReadResolved(json, &st).size(), 1u);
}

TEST(RoundTripTest, EmptyTraceRoundTrips) {
  TraceBuilder b;
  ReadStatus st;
  EXPECT_TRUE(ReadResolved(b.ToBinary(), &st).empty());
  EXPECT_EQ(st.reason, StopReason::kComplete);
  EXPECT_TRUE(ReadResolved(Convert(b.ToBinary(), false), &st).empty());
  EXPECT_EQ(st.reason, StopReason::kComplete);
}

TEST(RoundTripTest, SizeOnATrainingLoopIsCompact) {
  // The goal is ≤ 4 bytes per event; assert a loose bound so a regression (e.g. deltas lost)
  // fails while noise does not. bench/trace_size_bench reports the figure.
  testing::TrainingLoopShape shape;
  shape.iterations = 300;
  TraceBuilder b = testing::TrainingLoopTrace(shape);
  const std::string bin = b.ToBinary(true, 3, 512u << 10);
  const double per_event = static_cast<double>(bin.size()) / b.events().size();
  EXPECT_LT(per_event, 6.0) << bin.size() << " bytes for " << b.events().size() << " events";
}

}  // namespace
}  // namespace cuclimb::trace
