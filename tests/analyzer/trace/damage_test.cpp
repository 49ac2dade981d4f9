// SPDX-License-Identifier: Apache-2.0
// Damaged binary traces: cut at every byte, every bit flipped, wrong magic and versions, newer
// minors, huge declared sizes. The reader must never crash, must deliver exactly the events of
// the intact chunks before the damage, and must say where and why it stopped.
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interposer/format/chunk_encoder.h"
#include "interposer/format/crc32c.h"
#include "interposer/format/trace_format.h"
#include "random_trace.h"
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

// Reading with prefetch workers (checksums and decompression on other threads) delivers the same
// events and stops at the same place with the same words, whatever the damage.
struct Outcome {
  std::vector<Event> events;
  ReadStatus status;
  bool opened = false;
};

Outcome ReadWith(std::string_view bytes, int threads) {
  Outcome o;
  auto reader = TraceReader::FromBuffer(bytes);
  if (!reader.ok())
    return o;
  o.opened = true;
  (*reader)->Prefetch(threads);
  Event batch[37];
  while (size_t n = (*reader)->Read(batch, 37)) o.events.insert(o.events.end(), batch, batch + n);
  o.status = (*reader)->status();
  return o;
}

void ExpectSameOutcome(std::string_view bytes, const std::string& what) {
  const Outcome inline_read = ReadWith(bytes, 0);
  for (int threads : {1, 3}) {
    const Outcome prefetched = ReadWith(bytes, threads);
    ASSERT_EQ(prefetched.opened, inline_read.opened) << what;
    ASSERT_EQ(prefetched.events.size(), inline_read.events.size()) << what;
    EXPECT_TRUE(IsPrefixOf(prefetched.events, inline_read.events)) << what;
    EXPECT_EQ(prefetched.status.reason, inline_read.status.reason) << what;
    EXPECT_EQ(prefetched.status.offset, inline_read.status.offset) << what;
    EXPECT_EQ(prefetched.status.message, inline_read.status.message) << what;
    EXPECT_EQ(prefetched.status.chunks, inline_read.status.chunks) << what;
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

}  // namespace
}  // namespace cuclimb::trace
