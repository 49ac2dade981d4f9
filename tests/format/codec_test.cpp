// SPDX-License-Identifier: Apache-2.0
// The format library on its own (no analyzer, no Abseil): ChunkEncoder and ChunkDecoder agree on
// both layouts, the column layout behaves as column_layout.h says, caps hold, and TraceEncoder
// renumbers ids.
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

namespace cuclimb::format {
namespace {

class Tables : public DefinitionTables, public SourceTables {
 public:
  Tables() : strings_(1), stacks_(1) {}
  uint32_t string_count() const override { return static_cast<uint32_t>(strings_.size()); }
  uint32_t stack_count() const override { return static_cast<uint32_t>(stacks_.size()); }
  uint64_t string_bytes() const override { return string_bytes_; }
  uint64_t stack_frames() const override { return stack_frames_; }
  void AddString(std::string_view bytes) override {
    strings_.emplace_back(bytes);
    string_bytes_ += bytes.size();
  }
  void AddStack(const uint64_t* frames, size_t count) override {
    stacks_.emplace_back(frames, frames + count);
    stack_frames_ += count;
  }
  std::string_view String(uint32_t id) const override { return strings_.at(id); }
  void Stack(uint32_t id, std::vector<uint64_t>* frames) const override {
    *frames = stacks_.at(id);
  }

  std::vector<std::string> strings_;
  std::vector<std::vector<uint64_t>> stacks_;
  uint64_t string_bytes_ = 0;  // tests may preset these to sit near a cap
  uint64_t stack_frames_ = 0;
};

// Random events of every type, every slot its schema uses set to a random (sometimes extreme,
// sometimes absent) value; string ids below `strings`, stack ids below `stacks`.
std::vector<Event> RandomEvents(uint32_t seed, size_t n, uint32_t strings, uint32_t stacks) {
  std::mt19937_64 rng(seed);
  auto value = [&]() -> uint64_t {
    switch (rng() % 5) {
      case 0:
        return 0;
      case 1:
        return rng() % 100;
      case 2:
        return rng();
      case 3:
        return ~uint64_t{0} - rng() % 3;
      default:
        return rng() % 100000;
    }
  };
  std::vector<Event> out;
  int64_t ts = 1000;
  for (size_t i = 0; i < n; ++i) {
    const auto type =
        static_cast<EventType>(1 + rng() % (static_cast<int>(EventType::kTrailer) - 1));
    Event ev = MakeEvent(type);
    const EventSpec& spec = SpecOf(type);
    for (uint8_t k = 0; k < spec.field_count; ++k) {
      const FieldSpec& f = spec.fields[k];
      switch (f.coding) {
        case Coding::kTime:
          ts += static_cast<int64_t>(rng() % 5000) - 1000;  // sometimes backwards, like GPU records
          ev.ts = ts;
          break;
        case Coding::kString:
          SetSlot(&ev, f.slot, rng() % strings);
          break;
        case Coding::kStack:
          SetSlot(&ev, f.slot, rng() % stacks);
          break;
        case Coding::kEnum:
          SetSlot(&ev, f.slot, rng() % NamesOf(static_cast<EnumKind>(spec.enum_kind)).count);
          break;
        case Coding::kDevice:
          ev.device = static_cast<int32_t>(rng() % 3) - 1;
          break;
        case Coding::kDims:
          for (int d = 0; d < 3; ++d) DimsOf(&ev, f.slot)[d] = static_cast<uint32_t>(value());
          break;
        default:
          SetSlot(&ev, f.slot, value());
          break;
      }
    }
    out.push_back(ev);
  }
  return out;
}

// Decodes every chunk of `bytes` (a sequence of chunks, no file header).
std::vector<Event> DecodeAll(const std::string& bytes, Tables* tables, std::string* error,
                             bool sequenced = true) {
  std::vector<Event> out;
  Unpacker unpacker;
  ChunkDecoder decoder;
  UnpackedChunk chunk;
  size_t pos = 0;
  for (uint64_t index = 0; pos + sizeof(ChunkHeader) <= bytes.size(); ++index) {
    std::memcpy(&chunk.header, bytes.data() + pos, sizeof(ChunkHeader));
    chunk.stored.assign(bytes, pos + sizeof(ChunkHeader), chunk.header.stored_bytes);
    chunk.place = {index, pos};
    chunk.sequenced = sequenced;
    pos += sizeof(ChunkHeader) + chunk.header.stored_bytes;
    if (!unpacker.Unpack(&chunk)) {
      *error = chunk.error;
      return out;
    }
    if (!decoder.Start(&chunk, tables)) {
      *error = decoder.error();
      return out;
    }
    Event batch[7];
    while (size_t n = decoder.Decode(batch, 7, tables)) out.insert(out.end(), batch, batch + n);
    if (decoder.failed()) {
      *error = decoder.error();
      return out;
    }
  }
  return out;
}

bool Same(const std::vector<Event>& a, const std::vector<Event>& b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(Event)) != 0)
      return false;
  }
  return true;
}

class CodecTest : public ::testing::TestWithParam<ChunkLayout> {};
INSTANTIATE_TEST_SUITE_P(Layouts, CodecTest,
                         ::testing::Values(ChunkLayout::kColumns, ChunkLayout::kRows),
                         [](const ::testing::TestParamInfo<ChunkLayout>& p) {
                           return p.param == ChunkLayout::kRows ? "Rows" : "Columns";
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
    const bool sequenced = GetParam() == ChunkLayout::kColumns;  // 1.0 chunks carry no numbers
    EXPECT_TRUE(Same(DecodeAll(bytes, &tables, &error, sequenced), events)) << error;
    EXPECT_EQ(error, "");
    EXPECT_EQ(tables.strings_.size(), 20u);
    EXPECT_EQ(tables.stacks_.at(1), std::vector<uint64_t>(frames, frames + 2));
  }
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

// Hand-made column chunks: a payload from (key, bytes) streams in one raw block.
std::string ColumnChunk(uint32_t events,
                        const std::vector<std::pair<uint32_t, std::string>>& streams) {
  auto varint = [](std::string* s, uint64_t v) {
    uint8_t buf[kMaxVarintBytes];
    s->append(reinterpret_cast<char*>(buf), static_cast<size_t>(PutVarint(buf, v) - buf));
  };
  std::string payload, data;
  varint(&payload, events);
  varint(&payload, 0);
  varint(&payload, streams.size());
  for (const auto& [key, bytes] : streams) {
    varint(&payload, key);
    varint(&payload, bytes.size());
    data += bytes;
  }
  varint(&payload, 1);
  payload.push_back(static_cast<char>(Codec::kRaw));
  varint(&payload, data.size());
  varint(&payload, data.size());
  payload += data;
  ChunkHeader h{};
  h.magic = kChunkMagic;
  h.type = static_cast<uint8_t>(ChunkType::kColumns);
  h.stored_bytes = static_cast<uint32_t>(payload.size());
  h.raw_bytes = static_cast<uint32_t>(data.size());
  h.record_count = events;
  h.crc = Crc32c(Crc32c(0, &h, offsetof(ChunkHeader, crc)), payload.data(), payload.size());
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h)) + payload;
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
