// SPDX-License-Identifier: Apache-2.0
// The JSON Lines form: the issue's fixed field names, detection by content, strict errors with
// line numbers, truncation.
#include "trace/jsonl.h"

#include <string>

#include <gtest/gtest.h>

#include "trace/reader.h"
#include "trace_builder.h"

namespace cuclimb::trace {
namespace {

using testing::ReadAll;

constexpr char kIssueExample[] =
    R"({"ev":"process","ts":0,"pid":4242,"cmd":"train --mode climb"}
{"ev":"alloc","ts":10,"tid":1,"api":"cuMemAllocAsync","kind":"device","addr":"0x7f0000000000","size":512,"stream":"0x10","device":0,"stack":["frame","caller"]}
{"ev":"free","ts":20,"tid":1,"api":"cuMemFreeAsync","addr":"0x7f0000000000","stream":"0x10","device":0}
{"ev":"api","ts":30,"dur":5,"tid":1,"name":"cuStreamSynchronize"}
{"ev":"launch","ts":40,"dur":3,"tid":1,"kernel":"adam_update","stream":"0x10","corr":17}
{"ev":"kernel","ts":45,"dur":100,"kernel":"adam_update","stream":"0x10","corr":17,"device":0}
{"ev":"push","ts":50,"tid":1,"name":"iter"}
{"ev":"pop","ts":60,"tid":1}
{"ev":"create","ts":70,"tid":1,"type":"stream","handle":"0x5001"}
{"ev":"destroy","ts":80,"tid":1,"type":"stream","handle":"0x5001"}
{"ev":"gauge","ts":90,"device":0,"name":"pool.reserved","value":1048576}
{"ev":"sample","ts":95,"tid":1,"stack":["0x401000","main"]}
)";

TEST(JsonLinesTest, IssueExamplesReadAndWriteBackVerbatim) {
  auto reader = TraceReader::FromBuffer(kIssueExample);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::string out;
  Event ev{};
  while ((*reader)->Next(&ev)) AppendEventLine(ev, (*reader)->strings(), (*reader)->stacks(), &out);
  EXPECT_EQ((*reader)->status().reason, StopReason::kNoTrailer);
  EXPECT_EQ(out, kIssueExample);
}

TEST(JsonLinesTest, FieldsLandInTheDocumentedSlots) {
  const std::vector<Event> evs = ReadAll(kIssueExample);
  ASSERT_EQ(evs.size(), 12u);
  EXPECT_EQ(evs[0].value, 4242);  // pid
  EXPECT_EQ(evs[1].addr, 0x7f0000000000u);
  EXPECT_EQ(evs[1].size, 512u);
  EXPECT_EQ(evs[1].stream, 0x10u);
  EXPECT_EQ(evs[1].kind, static_cast<uint8_t>(format::MemoryKind::kDevice));
  EXPECT_EQ(evs[2].device, 0);
  EXPECT_EQ(evs[3].dur, 5);
  EXPECT_EQ(evs[4].corr, 17u);
  EXPECT_EQ(evs[8].handle, 0x5001u);
  EXPECT_EQ(evs[8].kind, static_cast<uint8_t>(format::HandleType::kStream));
  EXPECT_EQ(evs[10].value, 1048576);
  EXPECT_EQ(evs[0].device, format::kNoDevice);
}

struct BadLine {
  const char* text;
  const char* message_part;
  StopReason reason;
};

class JsonLinesErrorTest : public ::testing::TestWithParam<BadLine> {};

TEST_P(JsonLinesErrorTest, StopsWithLineAndReason) {
  const std::string input =
      std::string(R"({"ev":"push","ts":1,"tid":1,"name":"a"})") + "\n" + GetParam().text;
  ReadStatus st;
  const std::vector<Event> evs = ReadAll(input, &st);
  EXPECT_EQ(evs.size(), 1u);
  EXPECT_EQ(st.reason, GetParam().reason) << st.message;
  EXPECT_NE(st.message.find("line 2"), std::string::npos) << st.message;
  EXPECT_NE(st.message.find(GetParam().message_part), std::string::npos) << st.message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, JsonLinesErrorTest,
    ::testing::Values(
        BadLine{R"({"ev":"push","ts":2,"tid":1,"name":"a","colour":"red"})"
                "\n",
                "unknown field 'colour'", StopReason::kCorrupt},
        BadLine{R"({"ev":"teleport","ts":2})"
                "\n",
                "unknown event type 'teleport'", StopReason::kCorrupt},
        BadLine{R"({"ev":"push","tid":1,"name":"a"})"
                "\n",
                "no \"ts\"", StopReason::kCorrupt},
        BadLine{R"({"ev":"alloc","ts":2,"tid":1,"api":"x","kind":"device","addr":"0xZZ","size":1})"
                "\n",
                "hex string", StopReason::kCorrupt},
        BadLine{R"({"ev":"alloc","ts":2,"tid":1,"api":"x","kind":"gpu","addr":"0x1","size":1})"
                "\n",
                "unknown value 'gpu'", StopReason::kCorrupt},
        BadLine{R"({"ev":"launch","ts":2,"dur":1,"tid":1,"kernel":"k","stream":"0x1","grid":[1,2]})"
                "\n",
                "[x, y, z]", StopReason::kCorrupt},
        BadLine{"[1,2,3]\n", "not a JSON object", StopReason::kCorrupt},
        BadLine{R"({"ev":"push","ts":"soon","tid":1,"name":"a"})"
                "\n",
                "an integer", StopReason::kCorrupt},
        BadLine{R"({"ev":"trailer","ts":2,"events":5,"dropped":0})"
                "\n",
                "data is missing", StopReason::kCorrupt},
        BadLine{R"({"ev":"push","ts":2,"tid)", "truncated", StopReason::kTruncated}));

TEST(JsonLinesTest, HeaderBlankLinesAndTrailerAreHonoured) {
  const std::string input =
      "\n  \n"
      R"({"ev":"header","ts":0,"format":"1.0","producer":"hand","clock":"monotonic","base_clock_ns":7,"base_realtime_ns":9})"
      "\n\n"
      R"({"ev":"mark","ts":3,"tid":2,"name":"step"})"
      "\n"
      R"({"ev":"trailer","ts":4,"events":1,"dropped":3})"
      "\n";
  auto reader = TraceReader::FromBuffer(input);
  ASSERT_TRUE(reader.ok()) << reader.status();
  Event ev{};
  ASSERT_TRUE((*reader)->Next(&ev));
  EXPECT_EQ(ev.type, EventType::kMark);
  EXPECT_FALSE((*reader)->Next(&ev));
  EXPECT_EQ((*reader)->status().reason, StopReason::kComplete);
  EXPECT_EQ((*reader)->header().producer, "hand");
  EXPECT_EQ((*reader)->header().clock, format::ClockId::kMonotonic);
  EXPECT_EQ((*reader)->header().base_clock_ns, 7);
  ASSERT_TRUE((*reader)->trailer().has_value());
  EXPECT_EQ((*reader)->trailer()->value, 3);
}

TEST(JsonLinesTest, EventAfterTrailerIsAnError) {
  ReadStatus st;
  ReadAll(R"({"ev":"trailer","ts":4,"events":0,"dropped":0})"
          "\n"
          R"({"ev":"pop","ts":5,"tid":1})"
          "\n",
          &st);
  EXPECT_EQ(st.reason, StopReason::kCorrupt);
  EXPECT_NE(st.message.find("after the trailer"), std::string::npos);
}

TEST(JsonLinesTest, OtherMajorIsRefused) {
  auto reader = TraceReader::FromBuffer(R"({"ev":"header","ts":0,"format":"3.1"})"
                                        "\n");
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(JsonLinesTest, GarbageIsNotATrace) {
  auto reader = TraceReader::FromBuffer("hello world, not a trace");
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find("not a cuclimb trace"), std::string::npos);
}

TEST(JsonLinesTest, FullRangeIntegersSurvive) {
  const std::string input =
      R"({"ev":"alloc","ts":-5,"tid":4294967295,"api":"a","kind":"pinned","addr":"0xffffffffffffffff","size":18446744073709551615,"corr":18446744073709551615})"
      "\n";
  const std::vector<Event> evs = ReadAll(input);
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].ts, -5);
  EXPECT_EQ(evs[0].tid, 4294967295u);
  EXPECT_EQ(evs[0].addr, UINT64_MAX);
  EXPECT_EQ(evs[0].size, UINT64_MAX);
  EXPECT_EQ(evs[0].corr, UINT64_MAX);
}

// Issue #14: values that do not fit their field used to wrap ("tid": 2^32 + 1 became thread 1,
// a grid of 2^32 became 0, "ts": 2^63 became negative); now they stop the read as corrupt.
TEST(JsonLinesTest, IntegersThatDoNotFitTheirFieldAreErrors) {
  const char* kBad[] = {
      R"({"ev":"push","ts":1,"tid":4294967297,"name":"r"})",
      R"({"ev":"push","ts":1,"tid":-1,"name":"r"})",
      R"({"ev":"push","ts":9223372036854775808,"tid":1,"name":"r"})",
      R"({"ev":"push","ts":1,"tid":1,"name":"r","payload":9223372036854775808})",
      R"({"ev":"kernel","ts":1,"dur":1,"kernel":"k","stream":"0x1","corr":1,"device":2147483648})",
      R"({"ev":"kernel","ts":1,"dur":1,"kernel":"k","stream":"0x1","corr":1,"device":0,"grid":[4294967296,1,1]})",
      R"({"ev":"kernel","ts":1,"dur":1,"kernel":"k","stream":"0x1","corr":1,"device":0,"grid":[-1,1,1]})",
      R"({"ev":"alloc","ts":1,"tid":1,"api":"a","kind":"device","addr":"0x1","size":-512})",
      R"({"ev":"alloc","ts":1,"tid":1,"api":"a","kind":"device","addr":-1,"size":512})",
      R"({"ev":"api","ts":1.5,"dur":1,"tid":1,"name":"a"})",
  };
  for (const char* line : kBad) {
    ReadStatus st;
    EXPECT_TRUE(ReadAll(std::string(line) + "\n", &st).empty()) << line;
    EXPECT_EQ(st.reason, StopReason::kCorrupt) << line;
    EXPECT_NE(st.message.find("line 1"), std::string::npos) << st.message;
  }
  // The extremes that fit are kept (the writer prints signed fields signed, others unsigned).
  const std::vector<Event> evs = ReadAll(
      R"({"ev":"kernel","ts":-9223372036854775808,"dur":18446744073709551615,"kernel":"k","stream":"0x1","corr":1,"device":-2147483648,"grid":[4294967295,1,1]})"
      "\n");
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].ts, INT64_MIN);
  EXPECT_EQ(evs[0].dur, -1);  // an unsigned field over a signed slot round-trips
  EXPECT_EQ(evs[0].device, INT32_MIN);
  EXPECT_EQ(evs[0].grid[0], UINT32_MAX);
}

// Issue #14: a push without "name" read as the unnamed range and turned a climb flat.
TEST(JsonLinesTest, RequiredFieldsMustBePresent) {
  const char* kBad[] = {
      R"({"ev":"push","ts":1,"tid":1})",
      R"({"ev":"push","ts":1,"name":"r"})",
      R"({"ev":"launch","ts":1,"dur":1,"tid":1,"stream":"0x10"})",
      R"({"ev":"alloc","ts":1,"tid":1,"api":"a","kind":"device","addr":"0x1"})",
      R"({"ev":"pop","tid":1})",
  };
  for (const char* line : kBad) {
    ReadStatus st;
    EXPECT_TRUE(ReadAll(std::string(line) + "\n", &st).empty()) << line;
    EXPECT_EQ(st.reason, StopReason::kCorrupt) << line;
  }
  ReadStatus st;
  ReadAll(std::string(kBad[0]) + "\n", &st);
  EXPECT_NE(st.message.find("'push' without its required field 'name'"), std::string::npos)
      << st.message;
  // Optional fields may be left out; required ones may hold their zero value.
  EXPECT_EQ(ReadAll(R"({"ev":"push","ts":1,"tid":0,"name":""})"
                    "\n")
                .size(),
            1u);
}

// A frame word holds 63 bits of address: "0xffffffffffffffff" lost its top bit (read back as
// 0x7fffffffffffffff after conversion); it stays a text frame now.
TEST(JsonLinesTest, FrameAddressesBeyond63BitsStayText) {
  const std::string in =
      R"({"ev":"sample","ts":1,"tid":1,"stack":["0x7fffffffffffffff","0xffffffffffffffff","f"]})"
      "\n";
  auto reader = TraceReader::FromBuffer(in);
  ASSERT_TRUE(reader.ok());
  Event ev{};
  ASSERT_TRUE((*reader)->Next(&ev));
  const auto frames = (*reader)->stacks().Get(ev.stack);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_FALSE(format::IsStringFrame(frames[0]));
  EXPECT_EQ(format::FrameValue(frames[0]), 0x7fffffffffffffffu);
  EXPECT_TRUE(format::IsStringFrame(frames[1]));
  std::string out;
  AppendEventLine(ev, (*reader)->strings(), (*reader)->stacks(), &out);
  EXPECT_EQ(out, in);
}

TEST(JsonLinesTest, StringsAreEscaped) {
  std::string out;
  AppendJsonString("a\"b\\c\n\x01 é", &out);
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001 é\"");
}

}  // namespace
}  // namespace cuclimb::trace
