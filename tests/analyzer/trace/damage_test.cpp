// SPDX-License-Identifier: Apache-2.0
// Damaged binary traces: cut at every byte, every bit flipped, wrong magic and versions, newer
// minors, huge declared sizes. The reader must never crash, must deliver exactly the events of
// the intact chunks before the damage, and must say where and why it stopped.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interposer/format/chunk_encoder.h"
#include "interposer/format/column_layout.h"
#include "interposer/format/crc32c.h"
#include "interposer/format/trace_format.h"
#include "random_trace.h"
#include "tests/format/format_test_util.h"
#include "trace/reader.h"
#include "trace_builder.h"

namespace cuclimb::trace {
namespace {

using format::ChunkHeader;
using format::FileHeader;
using testing::ReadAll;

struct ChunkInfo {
  size_t offset;
  size_t end;
  uint32_t events;  // events delivered from this chunk (definitions excluded)
};

// Walks the chunk headers of an intact file, counting each chunk's events by reading prefixes.
std::vector<ChunkInfo> Chunks(const std::string& bin) {
  std::vector<ChunkInfo> out;
  size_t off = sizeof(FileHeader);
  size_t events_before = 0;
  while (off + sizeof(ChunkHeader) <= bin.size()) {
    ChunkHeader h;
    std::memcpy(&h, bin.data() + off, sizeof(h));
    const size_t end = off + sizeof(h) + h.stored_bytes;
    const size_t events_through = ReadAll(std::string_view(bin).substr(0, end)).size();
    out.push_back({off, end, static_cast<uint32_t>(events_through - events_before)});
    events_before = events_through;
    off = end;
  }
  return out;
}

bool IsPrefixOf(const std::vector<Event>& a, const std::vector<Event>& b) {
  if (a.size() > b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(Event)) != 0)
      return false;
  }
  return true;
}

// Every test runs on both layouts: format 1.1 (columns) and 1.0 (rows), which readers keep reading.
class DamageTest : public ::testing::TestWithParam<format::ChunkLayout> {
 protected:
  std::string SmallTrace() const {
    testing::TraceBuilder b = testing::RandomTrace(11, 400);
    return b.ToBinary(true, 3, 1024, GetParam());  // small chunks: many boundaries
  }
};

INSTANTIATE_TEST_SUITE_P(Layouts, DamageTest,
                         ::testing::Values(format::ChunkLayout::kColumnsV2,
                                           format::ChunkLayout::kColumns,
                                           format::ChunkLayout::kRows),
                         [](const ::testing::TestParamInfo<format::ChunkLayout>& p) {
                           return p.param == format::ChunkLayout::kRows      ? "Rows"
                                  : p.param == format::ChunkLayout::kColumns ? "Columns"
                                                                             : "ColumnsV2";
                         });

TEST_P(DamageTest, CutAtEveryByte) {
  const std::string bin = SmallTrace();
  const std::vector<Event> all = ReadAll(bin);
  const std::vector<ChunkInfo> chunks = Chunks(bin);
  ASSERT_GT(chunks.size(), 5u);
  for (size_t cut = 0; cut < bin.size(); ++cut) {
    const std::string_view prefix = std::string_view(bin).substr(0, cut);
    auto reader = TraceReader::FromBuffer(prefix);
    if (cut < sizeof(FileHeader)) {
      EXPECT_FALSE(reader.ok()) << "cut " << cut;
      continue;
    }
    ASSERT_TRUE(reader.ok()) << "cut " << cut << ": " << reader.status();
    std::vector<Event> got;
    Event ev{};
    while ((*reader)->Next(&ev)) got.push_back(ev);
    const ReadStatus& st = (*reader)->status();
    size_t expected = 0;
    bool at_boundary = cut == sizeof(FileHeader);
    size_t damaged_chunk_offset = 0;
    for (const ChunkInfo& c : chunks) {
      if (c.end <= cut)
        expected += c.events;
      if (c.end == cut)
        at_boundary = true;
      if (c.offset <= cut && cut < c.end)
        damaged_chunk_offset = c.offset;
    }
    ASSERT_EQ(got.size(), expected) << "cut " << cut << ": " << st.message;
    EXPECT_TRUE(IsPrefixOf(got, all)) << "cut " << cut;
    if (at_boundary) {
      EXPECT_EQ(st.reason, StopReason::kNoTrailer) << "cut " << cut << ": " << st.message;
    } else {
      EXPECT_EQ(st.reason, StopReason::kTruncated) << "cut " << cut << ": " << st.message;
      EXPECT_EQ(st.offset, damaged_chunk_offset) << st.message;
      EXPECT_NE(st.message.find("truncated"), std::string::npos) << st.message;
    }
  }
}

TEST_P(DamageTest, EveryBitFlipIsCaughtAtItsChunk) {
  const std::string bin = SmallTrace();
  const std::vector<Event> all = ReadAll(bin);
  const std::vector<ChunkInfo> chunks = Chunks(bin);
  for (size_t byte = 0; byte < bin.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = bin;
      damaged[byte] = static_cast<char>(damaged[byte] ^ (1 << bit));
      auto reader = TraceReader::FromBuffer(damaged);
      if (byte < sizeof(FileHeader)) {
        EXPECT_FALSE(reader.ok()) << "byte " << byte << " bit " << bit;
        continue;
      }
      ASSERT_TRUE(reader.ok());
      std::vector<Event> got;
      Event ev{};
      while ((*reader)->Next(&ev)) got.push_back(ev);
      const ReadStatus& st = (*reader)->status();
      size_t expected = 0;
      for (const ChunkInfo& c : chunks) {
        if (c.end <= byte)
          expected += c.events;
      }
      EXPECT_TRUE(st.reason == StopReason::kCorrupt || st.reason == StopReason::kTruncated)
          << "byte " << byte << " bit " << bit << ": " << st.message;
      EXPECT_EQ(got.size(), expected) << "byte " << byte << " bit " << bit << ": " << st.message;
      EXPECT_TRUE(IsPrefixOf(got, all));
    }
  }
}

TEST_P(DamageTest, WrongMagicIsNotATrace) {
  std::string bin = SmallTrace();
  bin[0] = 'X';
  auto reader = TraceReader::FromBuffer(bin);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(reader.status().message().find("not a cuclimb trace"), std::string::npos);
}

TEST_P(DamageTest, OtherMajorIsRefusedWithBothVersions) {
  std::string bin = SmallTrace();
  FileHeader h;
  std::memcpy(&h, bin.data(), sizeof(h));
  h.format_major = 2;
  h.header_crc = format::Crc32c(0, &h, offsetof(FileHeader, header_crc));
  std::memcpy(bin.data(), &h, sizeof(h));
  auto reader = TraceReader::FromBuffer(bin);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(reader.status().message().find("2."), std::string::npos) << reader.status();
}

// A newer minor may grow the header, add record types and append fields to a type: this reader
// skips all three and still delivers every event it knows.
TEST(DamageFileTest, NewerMinorIsReadBySkipping) {
  format::FileHeader h = format::MakeFileHeader(format::ClockId::kSynthetic, 0, 0, "future");
  h.format_minor = 9;
  h.header_bytes = sizeof(h) + 16;
  h.header_crc = format::Crc32c(0, &h, offsetof(FileHeader, header_crc));
  std::string bin(reinterpret_cast<const char*>(&h), sizeof(h));
  bin.append(16, '\x5a');  // header extension
  // Chunk payload: an unknown record type 0x60 with a 3-byte body, then a push event whose body
  // carries one field more than this reader knows.
  const std::string body("\x0a\x01\x00\x00\x00\x07",
                         6);  // ts 5, tid 1, name, domain, payload, extra
  const std::string payload = std::string(
                                  "\x60\x03"
                                  "abc",
                                  5) +
                              static_cast<char>(format::EventType::kPush) +
                              static_cast<char>(body.size()) + body;
  ChunkHeader c{};
  c.magic = format::kChunkMagic;
  c.type = static_cast<uint8_t>(format::ChunkType::kEvents);
  c.codec = static_cast<uint8_t>(format::Codec::kRaw);
  c.stored_bytes = c.raw_bytes = static_cast<uint32_t>(payload.size());
  c.record_count = 2;
  c.crc = format::Crc32c(format::Crc32c(0, &c, offsetof(ChunkHeader, crc)), payload.data(),
                         payload.size());
  bin.append(reinterpret_cast<const char*>(&c), sizeof(c));
  bin += payload;
  ReadStatus st;
  const std::vector<Event> got = ReadAll(bin, &st);
  ASSERT_EQ(got.size(), 1u) << st.message;
  EXPECT_EQ(got[0].type, format::EventType::kPush);
  EXPECT_EQ(got[0].ts, 5);
  EXPECT_EQ(got[0].tid, 1u);
  EXPECT_EQ(st.skipped_records, 1u);
  EXPECT_EQ(st.reason, StopReason::kNoTrailer);
}

TEST(DamageFileTest, HugeDeclaredChunkIsRefusedBeforeAllocating) {
  format::FileHeader h = format::MakeFileHeader(format::ClockId::kSynthetic, 0, 0, "x");
  std::string bin(reinterpret_cast<const char*>(&h), sizeof(h));
  ChunkHeader c{};
  c.magic = format::kChunkMagic;
  c.type = 1;
  c.stored_bytes = 0xfffffff0u;
  c.raw_bytes = 0xfffffff0u;
  bin.append(reinterpret_cast<const char*>(&c), sizeof(c));
  ReadStatus st;
  EXPECT_TRUE(ReadAll(bin, &st).empty());
  EXPECT_EQ(st.reason, StopReason::kCorrupt);
  EXPECT_NE(st.message.find("cap"), std::string::npos) << st.message;
}

TEST(DamageFileTest, EmptyInputIsNotATrace) {
  auto reader = TraceReader::FromBuffer("");
  ASSERT_FALSE(reader.ok());
  EXPECT_NE(reader.status().message().find("empty"), std::string::npos);
}

TEST_P(DamageTest, LargeTraceStreamsThroughEveryEvent) {
  testing::TrainingLoopShape shape;
  shape.iterations = 10000;  // ~1 M events
  testing::TraceBuilder b = testing::TrainingLoopTrace(shape);
  const std::string bin = b.ToBinary(true, 1, 1u << 20, GetParam());
  ReadStatus st;
  const size_t n = ReadAll(bin, &st).size();
  EXPECT_EQ(n, b.events().size());
  EXPECT_GT(n, 900000u);
  EXPECT_EQ(st.reason, StopReason::kComplete);
}

TEST_P(DamageTest, TrailerCountMismatchMeansMissingData) {
  testing::TraceBuilder b = testing::RandomTrace(3, 300);
  const std::string full = b.ToBinary(true, 3, 1024, GetParam());
  const std::vector<ChunkInfo> chunks = Chunks(full);
  ASSERT_GT(chunks.size(), 3u);
  // Drop a middle chunk entirely: every remaining chunk is intact, but the trailer knows.
  std::string spliced = full.substr(0, chunks[1].offset) + full.substr(chunks[1].end);
  ReadStatus st;
  ReadAll(spliced, &st);
  EXPECT_EQ(st.reason, StopReason::kCorrupt) << st.message;
}

// Chunks that are intact but out of order (tests/analyzer/trace/swap_chunks.py makes such a file
// from a recording): format 1.1 numbers its chunks, so the reader stops at the first one out of
// place, having delivered exactly the chunks before it.
TEST(SequenceTest, SwappedChunksAreDamageAtTheFirstOutOfPlace) {
  testing::TraceBuilder b = testing::RandomTrace(5, 400);
  const std::string full = b.ToBinary(true, 3, 1024);
  const std::vector<ChunkInfo> chunks = Chunks(full);
  ASSERT_GT(chunks.size(), 5u);
  const std::string swapped = full.substr(0, chunks[2].offset) +
                              full.substr(chunks[3].offset, chunks[3].end - chunks[3].offset) +
                              full.substr(chunks[2].offset, chunks[2].end - chunks[2].offset) +
                              full.substr(chunks[3].end);
  ReadStatus st;
  const std::vector<Event> got = ReadAll(swapped, &st);
  EXPECT_EQ(st.reason, StopReason::kCorrupt) << st.message;
  EXPECT_EQ(st.offset, chunks[2].offset);
  EXPECT_NE(st.message.find("sequence number 3, expected 2"), std::string::npos) << st.message;
  EXPECT_EQ(got.size(), chunks[0].events + chunks[1].events);
}

TEST(SequenceTest, ARepeatedChunkIsDamage) {
  testing::TraceBuilder b = testing::RandomTrace(5, 400);
  const std::string full = b.ToBinary(true, 3, 1024);
  const std::vector<ChunkInfo> chunks = Chunks(full);
  ASSERT_GT(chunks.size(), 3u);
  const std::string repeated = full.substr(0, chunks[2].end) +
                               full.substr(chunks[1].offset, chunks[1].end - chunks[1].offset) +
                               full.substr(chunks[2].end);
  ReadStatus st;
  ReadAll(repeated, &st);
  EXPECT_EQ(st.reason, StopReason::kCorrupt) << st.message;
  EXPECT_EQ(st.offset, chunks[2].end);
}

// Format 1.0 files carry no sequence numbers (the field was reserved, 0): still read.
TEST(SequenceTest, OldFilesAreNotChecked) {
  testing::TraceBuilder b = testing::RandomTrace(5, 400);
  const std::string full = b.ToBinary(true, 3, 1024, format::ChunkLayout::kRows);
  ReadStatus st;
  EXPECT_EQ(ReadAll(full, &st).size(), b.events().size());
  EXPECT_EQ(st.reason, StopReason::kComplete) << st.message;
}

// Reading with prefetch workers (checksums, decompression and the column chunks' events decoded
// ahead on other threads) delivers the same events and stops at the same place with the same
// words, whatever the damage: by Read() (the events copied out of the batches decoded ahead) and
// by TakeBatch() where the reader offers batches (Read() for the rest).
struct Outcome {
  std::vector<Event> events;
  ReadStatus status;
  bool opened = false;
  size_t batches = 0;  // taken whole
};

// join_every > 0: no workers at first; one joins the reading each time join_every more events
// have been read, up to `threads` (a thread of the job that came free, analysis/thread_shares.h).
Outcome ReadWith(std::string_view bytes, int threads, bool take_batches = false,
                 size_t join_every = 0) {
  Outcome o;
  auto reader = TraceReader::FromBuffer(bytes);
  if (!reader.ok())
    return o;
  o.opened = true;
  int joined = join_every > 0 ? 0 : threads;
  (*reader)->Prefetch(joined);
  Event batch[37];
  for (;;) {
    if (joined < threads && o.events.size() >= join_every * static_cast<size_t>(joined + 1)) {
      (*reader)->Prefetch(1);
      ++joined;
    }
    if (take_batches) {
      if (EventBatch* taken = (*reader)->TakeBatch()) {
        EXPECT_TRUE(taken->sealed);
        EXPECT_GT(taken->size, 0u);
        o.events.insert(o.events.end(), taken->events, taken->events + taken->size);
        (*reader)->batches().GiveBack(taken);
        ++o.batches;
        continue;
      }
    }
    const size_t n = (*reader)->Read(batch, 37);
    if (n == 0)
      break;
    o.events.insert(o.events.end(), batch, batch + n);
  }
  o.status = (*reader)->status();
  return o;
}

void ExpectSameOutcome(std::string_view bytes, const std::string& what) {
  const Outcome inline_read = ReadWith(bytes, 0);
  EXPECT_EQ(inline_read.status.events, inline_read.events.size()) << what;
  for (int threads : {1, 3}) {
    for (bool take_batches : {false, true}) {
      const std::string how = what + ", " + std::to_string(threads) + " workers" +
                              (take_batches ? ", batches taken" : ", by Read()");
      // Workers from the start, or (3) joining the reading under way one at a time: after 40
      // events (inside the first chunk), after 80 and after 120.
      std::vector<size_t> joins = {0};
      if (threads > 1)
        joins.push_back(40);
      for (size_t join_every : joins) {
        const std::string when = join_every > 0 ? how + ", joining under way" : how;
        const Outcome prefetched = ReadWith(bytes, threads, take_batches, join_every);
        ASSERT_EQ(prefetched.opened, inline_read.opened) << when;
        ASSERT_EQ(prefetched.events.size(), inline_read.events.size()) << when;
        EXPECT_TRUE(IsPrefixOf(prefetched.events, inline_read.events)) << when;
        EXPECT_EQ(prefetched.status.reason, inline_read.status.reason) << when;
        EXPECT_EQ(prefetched.status.offset, inline_read.status.offset) << when;
        EXPECT_EQ(prefetched.status.message, inline_read.status.message) << when;
        EXPECT_EQ(prefetched.status.chunks, inline_read.status.chunks) << when;
        EXPECT_EQ(prefetched.status.events, inline_read.status.events) << when;
        EXPECT_EQ(prefetched.status.skipped_records, inline_read.status.skipped_records) << when;
      }
    }
  }
}

TEST_P(DamageTest, PrefetchReadsTheSameAsInline) {
  const std::string bin = SmallTrace();
  ExpectSameOutcome(bin, "intact");
  for (size_t cut = 0; cut < bin.size(); cut += 7) {
    ExpectSameOutcome(std::string_view(bin).substr(0, cut), "cut " + std::to_string(cut));
  }
  for (size_t byte = sizeof(FileHeader); byte < bin.size(); byte += 13) {
    std::string damaged = bin;
    damaged[byte] = static_cast<char>(damaged[byte] ^ 0x10);
    ExpectSameOutcome(damaged, "flip at " + std::to_string(byte));
  }
  ExpectSameOutcome(bin + "extra", "bytes after the trailer");
}

// Chunks of many batches (several column windows each), intact and damaged: the batches decoded
// ahead are taken whole.
TEST_P(DamageTest, PrefetchDecodesLargeChunksAheadAlike) {
  testing::TrainingLoopShape shape;
  shape.iterations = 300;
  testing::TraceBuilder b = testing::TrainingLoopTrace(shape);
  const std::string bin = b.ToBinary(true, 1, 256u << 10, GetParam());
  ExpectSameOutcome(bin, "intact");
  const Outcome taken = ReadWith(bin, 2, true);
  EXPECT_EQ(taken.events.size(), b.events().size());
  // Workers that join under way decode the chunks after the one being read.
  const Outcome joined = ReadWith(bin, 2, true, 40);
  EXPECT_EQ(joined.events.size(), b.events().size());
  if (GetParam() == format::ChunkLayout::kRows) {
    EXPECT_EQ(taken.batches, 0u);  // rows are decoded by the reading thread
    EXPECT_EQ(joined.batches, 0u);
  } else {
    EXPECT_GT(taken.batches, 10u);
    EXPECT_GT(joined.batches, 10u);
  }
  for (size_t byte = bin.size() / 5; byte < bin.size(); byte += bin.size() / 5) {
    std::string damaged = bin;
    damaged[byte] = static_cast<char>(damaged[byte] ^ 0x01);
    ExpectSameOutcome(damaged, "flip at " + std::to_string(byte));
  }
  ExpectSameOutcome(std::string_view(bin).substr(0, bin.size() / 2), "cut in half");
}

TEST(PrefetchTest, TinyTracesReadAlike) {
  for (format::ChunkLayout layout :
       {format::ChunkLayout::kColumnsV2, format::ChunkLayout::kColumns}) {
    testing::TraceBuilder empty;
    ExpectSameOutcome(empty.ToBinary(true, 3, 1024, layout), "no events");
    testing::TraceBuilder one;
    one.Launch(10, 5, "k", 1);
    ExpectSameOutcome(one.ToBinary(true, 3, 1024, layout), "one event");
    ExpectSameOutcome(one.ToBinary(false, 3, 1024, layout), "one event, no trailer");
  }
}

// Column chunks whose events name ids that only a later chunk defines, or none: the worker cannot
// tell (it decodes before the definitions are applied); the reading thread finds the batch's ids
// undefined and decodes the chunk itself, delivering the events before the bad one and stopping
// with the message of reading without workers.
class AheadIdsTest : public ::testing::TestWithParam<format::ChunkLayout> {
 protected:
  // Three chunks of kEvents launches; chunk 1's event `bad_at` names string `bad_name` and stack
  // `bad_stack`; chunk 2 defines strings 6 and 7 and stack 2.
  std::string Trace(uint32_t bad_at, uint32_t bad_name, uint32_t bad_stack) const {
    const format::ChunkLayout layout = GetParam();
    format::FileHeader h = format::MakeFileHeader(format::ClockId::kSynthetic, 0, 0, "t", layout);
    std::string bin(reinterpret_cast<const char*>(&h), sizeof(h));
    format::ChunkEncoder enc(3, layout);
    for (uint32_t s = 1; s <= 5; ++s) EXPECT_TRUE(enc.DefineString(s, "s" + std::to_string(s)));
    const uint64_t frames[] = {format::PcFrame(0x401000)};
    EXPECT_TRUE(enc.DefineStack(1, frames, 1));
    int64_t ts = 100;
    for (int chunk = 0; chunk < 3; ++chunk) {
      if (chunk == 2) {
        EXPECT_TRUE(enc.DefineString(6, "s6"));
        EXPECT_TRUE(enc.DefineString(7, "s7"));
        EXPECT_TRUE(enc.DefineStack(2, frames, 1));
      }
      for (uint32_t i = 0; i < kEvents; ++i) {
        format::Event ev = format::MakeEvent(format::EventType::kLaunch);
        ev.ts = ts += 10;
        ev.tid = 1;
        ev.name = 1 + i % 5;
        ev.stack = i % 2;
        if (chunk == 1 && i == bad_at) {
          ev.name = bad_name;
          ev.stack = bad_stack;
        }
        EXPECT_TRUE(enc.Add(ev));
      }
      EXPECT_TRUE(enc.Seal(format::ChunkType::kEvents, &bin));
    }
    return bin;
  }
  static constexpr uint32_t kEvents = 5000;  // five batches and more
};

INSTANTIATE_TEST_SUITE_P(Layouts, AheadIdsTest,
                         ::testing::Values(format::ChunkLayout::kColumnsV2,
                                           format::ChunkLayout::kColumns),
                         [](const ::testing::TestParamInfo<format::ChunkLayout>& p) {
                           return p.param == format::ChunkLayout::kColumns ? "Columns"
                                                                           : "ColumnsV2";
                         });

TEST_P(AheadIdsTest, IdsDefinedOnlyLaterStopWhereInlineStops) {
  for (uint32_t bad_at : {0u, 1023u, 1024u, 3333u, kEvents - 1}) {
    for (auto [name, stack] :
         std::vector<std::pair<uint32_t, uint32_t>>{{7, 1},  // defined by the next chunk
                                                    {3, 2},  // a stack defined by the next chunk
                                                    {0x7fffffffu, 0},     // past every cap
                                                    {1, 0xfffffffeu}}) {  // past every cap
      const std::string bin = Trace(bad_at, name, stack);
      const std::string what = "event " + std::to_string(bad_at) + " names string " +
                               std::to_string(name) + ", stack " + std::to_string(stack);
      const Outcome inline_read = ReadWith(bin, 0);
      ASSERT_EQ(inline_read.events.size(), kEvents + bad_at) << what;
      ASSERT_EQ(inline_read.status.reason, StopReason::kCorrupt) << what;
      EXPECT_NE(inline_read.status.message.find("chunk 1 "), std::string::npos)
          << inline_read.status.message;
      EXPECT_NE(inline_read.status.message.find("undefined"), std::string::npos)
          << inline_read.status.message;
      ExpectSameOutcome(bin, what);
    }
  }
  // Intact, the same trace is read through by every route.
  const std::string good = Trace(0, 1, 1);
  ASSERT_EQ(ReadWith(good, 0).events.size(), 3 * kEvents);
  ExpectSameOutcome(good, "intact");
}

// Events of a type a newer minor adds are skipped, ahead as inline, and counted once.
TEST(PrefetchTest, UnknownTypesInColumnsAreSkippedAndCountedOnce) {
  format::FileHeader h = format::MakeFileHeader(format::ClockId::kSynthetic, 0, 0, "future",
                                                format::ChunkLayout::kColumns);
  std::string bin(reinterpret_cast<const char*>(&h), sizeof(h));
  std::string types;
  for (uint32_t i = 0; i < 5000; ++i) {
    // Runs of unknown types across batch ends, and at the chunk's end.
    const bool unknown = i % 1024 >= 1000 || i >= 4990 || i % 7 == 3;
    types.push_back(static_cast<char>(unknown ? 77 : static_cast<int>(format::EventType::kPush)));
  }
  bin += format::test_util::ColumnChunk(static_cast<uint32_t>(types.size()),
                                        {{format::kTypesKey, types}});
  const Outcome inline_read = ReadWith(bin, 0);
  EXPECT_GT(inline_read.events.size(), 3000u);
  EXPECT_EQ(inline_read.events.size() + inline_read.status.skipped_records, types.size());
  ExpectSameOutcome(bin, "unknown types");
}
}  // namespace
}  // namespace cuclimb::trace
