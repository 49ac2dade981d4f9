// SPDX-License-Identifier: Apache-2.0
// The format library on its own (no analyzer, no Abseil): ChunkEncoder and ChunkDecoder agree on
// every layout, the column layout behaves as column_layout.h says, caps hold, byte planes share
// compressed blocks, the automatic level follows the chunk's size, and TraceEncoder renumbers
// ids.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interposer/format/chunk_decoder.h"
#include "interposer/format/chunk_encoder.h"
#include "interposer/format/column_layout.h"
#include "interposer/format/crc32c.h"
#include "interposer/format/event_fields.h"
#include "interposer/format/trace_encoder.h"
#include "tests/format/format_test_util.h"

namespace cuclimb::format {
namespace {

using test_util::ColumnChunk;
using test_util::DecodeAll;
using test_util::RandomEvents;
using test_util::Same;
using test_util::Tables;

class CodecTest : public ::testing::TestWithParam<ChunkLayout> {};
INSTANTIATE_TEST_SUITE_P(Layouts, CodecTest,
                         ::testing::Values(ChunkLayout::kColumnsV2, ChunkLayout::kColumns,
                                           ChunkLayout::kRows),
                         [](const ::testing::TestParamInfo<ChunkLayout>& p) {
                           return p.param == ChunkLayout::kRows      ? "Rows"
                                  : p.param == ChunkLayout::kColumns ? "Columns"
                                                                     : "ColumnsV2";
                         });

TEST_P(CodecTest, EveryTypeAndValueRoundTrips) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    ChunkEncoder enc(seed % 2 == 0 ? 0 : 3, GetParam());
    std::string bytes;
    for (uint32_t s = 1; s < 20; ++s) ASSERT_TRUE(enc.DefineString(s, "s" + std::to_string(s)));
    const uint64_t frames[] = {PcFrame(0x401000), StringFrame(3)};
    ASSERT_TRUE(enc.DefineStack(1, frames, 2));
    const std::vector<Event> events = RandomEvents(seed, 3000, 20, 2);
    for (size_t i = 0; i < events.size(); ++i) {
      ASSERT_TRUE(enc.Add(events[i]));
      if (i % 700 == 699) {
        ASSERT_TRUE(enc.Seal(ChunkType::kEvents, &bytes));
      }
    }
    ASSERT_TRUE(enc.Seal(ChunkType::kEvents, &bytes));
    Tables tables;
    std::string error;
    const bool sequenced = GetParam() != ChunkLayout::kRows;  // 1.0 chunks carry no numbers
    EXPECT_TRUE(Same(DecodeAll(bytes, &tables, &error, sequenced), events)) << error;
    EXPECT_EQ(error, "");
    EXPECT_EQ(tables.strings_.size(), 20u);
    EXPECT_EQ(tables.stacks_.at(1), std::vector<uint64_t>(frames, frames + 2));
  }
}

// Decodes one chunk, `read` events per Decode() call.
std::vector<Event> DecodeInReadsOf(const std::string& chunk_bytes, size_t read, Tables* tables,
                                   std::string* error) {
  UnpackedChunk chunk;
  std::memcpy(&chunk.header, chunk_bytes.data(), sizeof(ChunkHeader));
  chunk.stored = chunk_bytes.substr(sizeof(ChunkHeader));
  Unpacker unpacker;
  ChunkDecoder decoder;
  std::vector<Event> out, buffer(read);
  if (!unpacker.Unpack(&chunk)) {
    *error = chunk.error;
    return out;
  }
  if (!decoder.Start(&chunk, tables)) {
    *error = decoder.error();
    return out;
  }
  while (size_t n = decoder.Decode(buffer.data(), read, tables)) {
    out.insert(out.end(), buffer.begin(), buffer.begin() + static_cast<long>(n));
  }
  *error = decoder.error();
  return out;
}

// One chunk of `events` in `layout`, after the strings 1..19 and one stack (what RandomEvents'
// ids name).
std::string EncodeLong(ChunkLayout layout, const std::vector<Event>& events) {
  ChunkEncoder enc(3, layout);
  for (uint32_t s = 1; s < 20; ++s) EXPECT_TRUE(enc.DefineString(s, "s" + std::to_string(s)));
  const uint64_t frames[] = {PcFrame(0x401000), StringFrame(3)};
  EXPECT_TRUE(enc.DefineStack(1, frames, 2));
  for (const Event& ev : events) EXPECT_TRUE(enc.Add(ev));
  std::string bytes;
  EXPECT_TRUE(enc.Seal(ChunkType::kEvents, &bytes));
  return bytes;
}

// A chunk several times the column decoder's window, read one event at a time, a few, or more
// than a window per call: the same events. A bad id far into it is named at its own event, and
// every event before it is delivered.
TEST_P(CodecTest, LongChunksDecodeAlikeInAnyReadSizeAndNameLateDamage) {
  std::vector<Event> events = RandomEvents(7, 5000, 20, 2);
  auto encode = [&](const std::vector<Event>& list) { return EncodeLong(GetParam(), list); };
  const std::string bytes = encode(events);
  for (size_t read : {size_t{1}, size_t{7}, size_t{1000}, size_t{4096}}) {
    Tables tables;
    std::string error;
    EXPECT_TRUE(Same(DecodeInReadsOf(bytes, read, &tables, &error), events)) << "reads of " << read;
    EXPECT_EQ(error, "") << "reads of " << read;
  }
  constexpr size_t kBad = 3333;
  Event bad = MakeEvent(EventType::kLaunch);
  bad.ts = events[kBad - 1].ts;
  bad.name = 25;  // never defined
  events[kBad] = bad;
  const std::string damaged = encode(events);
  for (size_t read : {size_t{1}, size_t{256}, size_t{4096}}) {
    Tables tables;
    std::string error;
    const std::vector<Event> got = DecodeInReadsOf(damaged, read, &tables, &error);
    EXPECT_TRUE(Same(got, std::vector<Event>(events.begin(), events.begin() + kBad)))
        << "reads of " << read << ": " << got.size() << " events";
    EXPECT_NE(error.find("undefined string 25"), std::string::npos) << error;
    if (GetParam() != ChunkLayout::kRows) {
      EXPECT_NE(error.find("event 3333 (column 'launch.kernel')"), std::string::npos) << error;
    }
  }
}

// Decoded apart from its definitions (a prefetch worker's StartDetached()), a column chunk gives
// the same events, in batches of any size; what the tables must hold covers the ids the batch
// names, and an id that the definitions do not cover shows in the batch that has it.
TEST_P(CodecTest, DetachedDecodingNamesTheIdsItsEventsNeed) {
  if (GetParam() == ChunkLayout::kRows)
    GTEST_SKIP() << "rows apply their definitions as they come";
  std::vector<Event> events = RandomEvents(11, 5000, 20, 2);
  constexpr size_t kBad = 3333;
  auto encode = [&](const std::vector<Event>& list) { return EncodeLong(GetParam(), list); };
  auto unpack = [](const std::string& bytes, UnpackedChunk* chunk) {
    std::memcpy(&chunk->header, bytes.data(), sizeof(ChunkHeader));
    chunk->stored = bytes.substr(sizeof(ChunkHeader));
    Unpacker unpacker;
    EXPECT_TRUE(unpacker.Unpack(chunk)) << chunk->error;
  };
  struct Batch {
    std::vector<Event> events;
    uint64_t strings, stacks;
  };
  auto detached = [](const UnpackedChunk& chunk, size_t read) {
    ChunkDecoder decoder;
    EXPECT_TRUE(decoder.StartDetached(&chunk));
    std::vector<Batch> out;
    std::vector<Event> buffer(read);
    while (size_t n = decoder.Decode(buffer.data(), read, nullptr)) {
      out.push_back({std::vector<Event>(buffer.begin(), buffer.begin() + static_cast<long>(n)),
                     decoder.strings_needed(), decoder.stacks_needed()});
    }
    EXPECT_TRUE(decoder.finished());
    EXPECT_EQ(decoder.error(), "");
    return out;
  };
  UnpackedChunk chunk;
  unpack(encode(events), &chunk);
  for (size_t read : {size_t{1}, size_t{1024}, size_t{4096}}) {
    std::vector<Event> all;
    for (const Batch& b : detached(chunk, read)) {
      for (const Event& ev : b.events) {
        EXPECT_LT(ev.name, b.strings);
        EXPECT_LT(ev.api, b.strings);
        EXPECT_LT(ev.stack, b.stacks);
      }
      EXPECT_LE(b.strings, 20u);  // what the chunk defines covers it
      EXPECT_LE(b.stacks, 2u);
      all.insert(all.end(), b.events.begin(), b.events.end());
    }
    EXPECT_TRUE(Same(all, events)) << "reads of " << read;
  }
  // A string id past the definitions, then one past the caps.
  for (uint32_t name : {25u, kMaxStrings + 5}) {
    events[kBad].type = EventType::kLaunch;
    events[kBad].name = name;
    UnpackedChunk damaged;
    unpack(encode(events), &damaged);
    ChunkDecoder decoder;
    ASSERT_TRUE(decoder.StartDetached(&damaged));
    std::vector<Event> buffer(1024);
    size_t decoded = 0;
    while (size_t n = decoder.Decode(buffer.data(), buffer.size(), nullptr)) {
      decoded += n;
      if (decoded <= kBad - kBad % kColumnWindow) {  // windows before the bad event's
        EXPECT_LE(decoder.strings_needed(), 20u) << decoded << " events";
      } else {
        EXPECT_GT(decoder.strings_needed(), name < kMaxStrings ? name : kMaxStrings);
      }
    }
    if (name < kMaxStrings) {
      EXPECT_EQ(decoded, events.size());
      EXPECT_FALSE(decoder.failed());
    } else {
      EXPECT_EQ(decoded, kBad);  // stops at the cap, as inline decoding does at the tables
      EXPECT_TRUE(decoder.failed());
      EXPECT_GT(decoder.strings_needed(), kMaxStrings);
    }
  }
  // Row chunks have no detached decoding.
  ChunkEncoder rows(3, ChunkLayout::kRows);
  ASSERT_TRUE(rows.Add(events[0]));
  std::string row_bytes;
  ASSERT_TRUE(rows.Seal(ChunkType::kEvents, &row_bytes));
  UnpackedChunk row_chunk;
  unpack(row_bytes, &row_chunk);
  ChunkDecoder decoder;
  EXPECT_FALSE(decoder.StartDetached(&row_chunk));
}

TEST_P(CodecTest, UndefinedStringIsNamed) {
  ChunkEncoder enc(3, GetParam());
  std::string bytes;
  Event ev = MakeEvent(EventType::kLaunch);
  ev.name = 5;  // never defined
  ASSERT_TRUE(enc.Add(ev));
  ASSERT_TRUE(enc.Seal(ChunkType::kEvents, &bytes));
  Tables tables;
  std::string error;
  EXPECT_TRUE(DecodeAll(bytes, &tables, &error, false).empty());
  EXPECT_NE(error.find("undefined string 5"), std::string::npos) << error;
  EXPECT_NE(error.find("kernel"), std::string::npos) << error;  // the field is named
}

TEST(CodecLimitsTest, StringsOverTheCapAreRefusedNotCut) {
  ChunkEncoder enc;
  EXPECT_TRUE(enc.DefineString(1, std::string(kMaxStringBytes, 'x')));
  EXPECT_FALSE(enc.DefineString(2, std::string(kMaxStringBytes + 1, 'x')));
  std::vector<uint64_t> frames(kMaxStackFrames + 1, PcFrame(1));
  EXPECT_FALSE(enc.DefineStack(1, frames.data(), frames.size()));
  EXPECT_EQ(enc.pending_records(), 1u);
}

TEST(CodecLimitsTest, TableCapsStopADecompressionBomb) {
  ChunkEncoder enc;
  std::string bytes;
  ASSERT_TRUE(enc.DefineString(1, "abcd"));
  ASSERT_TRUE(enc.Seal(ChunkType::kEvents, &bytes));
  Tables tables;
  tables.string_bytes_ = kMaxStringTableBytes - 3;  // what earlier chunks already defined
  std::string error;
  DecodeAll(bytes, &tables, &error);
  EXPECT_NE(error.find("64 MiB cap"), std::string::npos) << error;

  ChunkEncoder stacks;
  bytes.clear();
  const uint64_t frames[] = {PcFrame(1), PcFrame(2)};
  ASSERT_TRUE(stacks.DefineStack(1, frames, 2));
  ASSERT_TRUE(stacks.Seal(ChunkType::kEvents, &bytes));
  Tables full;
  full.stack_frames_ = kMaxStackTableFrames - 1;
  error.clear();
  DecodeAll(bytes, &full, &error);
  EXPECT_NE(error.find("Mi frames"), std::string::npos) << error;
}

TEST(CodecLimitsTest, SequenceNumbersCatchReorderedChunks) {
  ChunkEncoder enc;
  std::string first, second;
  Event ev = MakeEvent(EventType::kPop);
  ASSERT_TRUE(enc.Add(ev));
  ASSERT_TRUE(enc.Seal(ChunkType::kEvents, &first));
  ASSERT_TRUE(enc.Add(ev));
  ASSERT_TRUE(enc.Seal(ChunkType::kEvents, &second));
  Tables tables;
  std::string error;
  EXPECT_EQ(DecodeAll(first + second, &tables, &error).size(), 2u);
  EXPECT_EQ(error, "");
  EXPECT_TRUE(DecodeAll(second + first, &tables, &error).empty());
  EXPECT_NE(error.find("sequence number 1, expected 0"), std::string::npos) << error;
}

constexpr uint8_t kPop = static_cast<uint8_t>(EventType::kPop);

TEST(ColumnLayoutTest, AbsentColumnsAndPlanesReadAsZero) {
  // Two pops with ts deltas 5 and 3 (zigzag 10, 6) and nothing else: tid and domain are 0.
  const std::string chunk = ColumnChunk(2, {{kTypesKey, std::string(2, static_cast<char>(kPop))},
                                            {ColumnKey(kPop, 0, 0), std::string("\x0a\x06", 2)}});
  Tables tables;
  std::string error;
  const std::vector<Event> got = DecodeAll(chunk, &tables, &error);
  ASSERT_EQ(got.size(), 2u) << error;
  EXPECT_EQ(got[0].ts, 5);
  EXPECT_EQ(got[1].ts, 8);
  EXPECT_EQ(got[1].tid, 0u);
}

TEST(ColumnLayoutTest, ANewerMinorsFieldsAndTypesAreSkipped) {
  // A field index beyond the pop schema, and an event of an unknown type 0x60 between two pops.
  const std::string chunk = ColumnChunk(
      3, {{kTypesKey, std::string{static_cast<char>(kPop), '\x60', static_cast<char>(kPop)}},
          {ColumnKey(kPop, 0, 0), std::string("\x02\x02", 2)},
          {ColumnKey(kPop, 9, 0), std::string("\x7f\x7f", 2)},
          {ColumnKey(0x60, 0, 0), std::string("\x01", 1)}});
  Tables tables;
  std::string error;
  const std::vector<Event> got = DecodeAll(chunk, &tables, &error);
  ASSERT_EQ(got.size(), 2u) << error;
  EXPECT_EQ(got[1].ts, 2);
}

TEST(ColumnLayoutTest, APlaneOfTheWrongSizeIsDamage) {
  const std::string chunk = ColumnChunk(2, {{kTypesKey, std::string(2, static_cast<char>(kPop))},
                                            {ColumnKey(kPop, 1, 0), std::string("\x01", 1)}});
  Tables tables;
  std::string error;
  EXPECT_TRUE(DecodeAll(chunk, &tables, &error).empty());
  EXPECT_NE(error.find("column pop.tid plane 0 holds 1 bytes for 2 events"), std::string::npos)
      << error;
}

TEST(ColumnLayoutTest, UnsetOptionalFieldsCostNothing) {
  // 1000 launches with only ts and tid set take a few bytes each for nothing else; setting one
  // more optional field (smem) costs its column.
  ChunkEncoder plain, with_smem;
  std::string a, b;
  for (int i = 0; i < 1000; ++i) {
    Event ev = MakeEvent(EventType::kLaunch);
    ev.ts = i * 1000;
    ev.tid = 7;
    ASSERT_TRUE(plain.Add(ev));
    ev.size = 48 + static_cast<uint64_t>(i % 7);
    ASSERT_TRUE(with_smem.Add(ev));
  }
  ASSERT_TRUE(plain.Seal(ChunkType::kEvents, &a));
  ASSERT_TRUE(with_smem.Seal(ChunkType::kEvents, &b));
  EXPECT_LT(a.size(), 200u);
  EXPECT_GT(b.size(), a.size());
}

// Host launches as a Python training loop makes them: a repeating sequence of kernels, gaps
// that depend on the kernel (the Python code before it) plus jitter, durations of a few µs with
// nanosecond noise, an occasional pause (GC, a checkpoint).
std::vector<Event> NoisyLaunches(uint32_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> jitter(0.0, 0.25);
  std::uniform_int_distribution<int> pause(0, 499);
  std::vector<Event> events;
  int64_t ts = 1'000'000;
  for (size_t i = 0; i < n; ++i) {
    Event ev = MakeEvent(EventType::kLaunch);
    const uint32_t kernel = 1 + static_cast<uint32_t>(i % 37);
    ts += static_cast<int64_t>((800.0 + 1500.0 * (kernel % 9)) * jitter(rng));
    if (pause(rng) == 0)
      ts += 5'000'000;
    ev.ts = ts;
    ev.dur = static_cast<int64_t>(6000.0 * jitter(rng));
    ts += ev.dur;
    ev.tid = 4242;
    ev.name = kernel;
    ev.stream = 0x5a00;
    events.push_back(ev);
  }
  return events;
}

std::string EncodeOneChunk(const std::vector<Event>& events, int level,
                           SealPace pace = SealPace::kPaced) {
  ChunkEncoder enc(level);
  for (uint32_t s = 1; s <= 37; ++s) EXPECT_TRUE(enc.DefineString(s, "k" + std::to_string(s)));
  for (const Event& ev : events) EXPECT_TRUE(enc.Add(ev));
  std::string bytes;
  EXPECT_TRUE(enc.Seal(ChunkType::kEvents, &bytes, pace));
  return bytes;
}

// The streams of a column chunk at least kOwnBlockBytes long, and its blocks.
void CountStreamsAndBlocks(const std::string& chunk, size_t* large, size_t* blocks) {
  const auto* p = reinterpret_cast<const uint8_t*>(chunk.data()) + sizeof(ChunkHeader);
  const auto* end = reinterpret_cast<const uint8_t*>(chunk.data()) + chunk.size();
  uint64_t v = 0, streams = 0;
  p = GetVarint(p, end, &v);  // events
  p = GetVarint(p, end, &v);  // definitions
  p = GetVarint(p, end, &streams);
  *large = 0;
  for (uint64_t i = 0; i < streams && p != nullptr; ++i) {
    p = GetVarint(p, end, &v);  // key
    p = GetVarint(p, end, &v);  // bytes
    *large += v >= kOwnBlockBytes ? 1 : 0;
  }
  ASSERT_NE(p, nullptr);
  ASSERT_NE(GetVarint(p, end, &v), nullptr);
  *blocks = v;
}

TEST(ColumnBlocksTest, NoisyPlanesShareBlocksAndReadBack) {
  // The low bytes of times and durations are near-uniform alike: one block (one entropy table)
  // serves several of them, and the chunk reads back the same.
  const std::vector<Event> events = NoisyLaunches(7, 8000);
  const std::string chunk = EncodeOneChunk(events, kDefaultZstdLevel);
  size_t large = 0, blocks = 0;
  CountStreamsAndBlocks(chunk, &large, &blocks);
  EXPECT_GE(large, 4u);
  EXPECT_LT(blocks, 1 + large);  // the small streams' block, and fewer than one per large stream
  Tables tables;
  std::string error;
  EXPECT_TRUE(Same(DecodeAll(chunk, &tables, &error), events)) << error;
}

TEST(ColumnBlocksTest, AutoLevelCompressesSmallChunksHarder) {
  // A chunk of at most kSmallChunkEvents records sealed because its second was up gets
  // kSmallChunkZstdLevel, which pays on noisy times; one sealed early (full, or a flush) and a
  // larger one the default.
  const std::vector<Event> small = NoisyLaunches(11, 8000);
  const std::string automatic = EncodeOneChunk(small, kAutoZstdLevel);
  EXPECT_EQ(automatic, EncodeOneChunk(small, kSmallChunkZstdLevel));
  EXPECT_LT(automatic.size(), EncodeOneChunk(small, kDefaultZstdLevel).size());
  EXPECT_EQ(EncodeOneChunk(small, kAutoZstdLevel, SealPace::kEarly),
            EncodeOneChunk(small, kDefaultZstdLevel));
  const std::vector<Event> large = NoisyLaunches(11, kSmallChunkEvents - 36);  // + 37 strings
  EXPECT_EQ(EncodeOneChunk(large, kAutoZstdLevel), EncodeOneChunk(large, kDefaultZstdLevel));
  Tables tables;
  std::string error;
  EXPECT_TRUE(Same(DecodeAll(automatic, &tables, &error), small)) << error;
}

TEST(TraceEncoderTest, RenumbersInOrderOfFirstUse) {
  Tables source;
  for (const char* s : {"a", "b", "c", "d"}) source.AddString(s);
  const uint64_t frames[] = {StringFrame(4), PcFrame(0x10)};
  source.AddStack(frames, 2);
  TraceEncoder enc(3, ChunkLayout::kColumns, 1u << 20);
  std::string out;
  Event ev = MakeEvent(EventType::kAlloc);
  ev.api = 3;
  ev.stack = 1;
  ASSERT_TRUE(enc.Add(ev, source, &out));
  ASSERT_TRUE(enc.Finish(10, 0, "done", &out));
  Tables file;
  std::string error;
  const std::vector<Event> got = DecodeAll(out, &file, &error);
  ASSERT_EQ(got.size(), 2u) << error;  // the alloc and the trailer
  EXPECT_EQ(got[0].api, 1u);
  EXPECT_EQ(file.strings_[1], "c");
  EXPECT_EQ(file.strings_[2], "d");  // defined by the stack's string frame
  EXPECT_EQ(file.stacks_[1], (std::vector<uint64_t>{StringFrame(2), PcFrame(0x10)}));
  EXPECT_EQ(file.strings_[got[1].text], "done");
  EXPECT_EQ(got[1].size, 1u);
}

TEST(TraceEncoderTest, AStringItCannotDefineBecomesNoneAndIsCounted) {
  Tables source;
  source.AddString(std::string(kMaxStringBytes + 1, 'x'));
  TraceEncoder enc(3, ChunkLayout::kColumns, 1u << 20);
  std::string out;
  Event ev = MakeEvent(EventType::kLaunch);
  ev.name = 1;
  ASSERT_TRUE(enc.Add(ev, source, &out));
  EXPECT_EQ(enc.definition_failures(), 1u);
  ASSERT_TRUE(enc.SealEvents(&out));
  Tables file;
  std::string error;
  const std::vector<Event> got = DecodeAll(out, &file, &error);
  ASSERT_EQ(got.size(), 1u) << error;
  EXPECT_EQ(got[0].name, 0u);
}

}  // namespace
}  // namespace cuclimb::format
