// SPDX-License-Identifier: Apache-2.0
// The address history of format 1.2 column chunks: alloc and free addresses round-trip through
// it whatever the allocator does, it pays where allocators reuse memory, and damage to its words
// or escape columns is named, never decoded into wrong addresses.
#include "interposer/format/address_history.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "interposer/format/chunk_decoder.h"
#include "interposer/format/chunk_encoder.h"
#include "interposer/format/column_layout.h"
#include "tests/format/format_test_util.h"

namespace cuclimb::format {
namespace {

using test_util::ColumnChunk;
using test_util::DecodeAll;
using test_util::Same;
using test_util::Tables;

using List = AddressHistory::List;

TEST(AddressHistoryTest, FindsTheMostRecentFirstAndForgetsBeyondItsDepth) {
  AddressHistory h;
  h.Reset();
  for (uint64_t a = 1; a <= AddressHistory::kDepth + 2; ++a) h.Push(List::kLive, a * 0x100);
  EXPECT_EQ(h.count(List::kLive), AddressHistory::kDepth);
  EXPECT_EQ(h.Find(List::kLive, (AddressHistory::kDepth + 2) * 0x100), 1u);  // the newest
  EXPECT_EQ(h.Find(List::kLive, 0x100), 0u);                                 // fell off
  EXPECT_EQ(h.Find(List::kLive, 0x300), AddressHistory::kDepth - 1);         // now the oldest
  EXPECT_EQ(h.Find(List::kFreed, 0x400), 0u);  // the lists are separate
  uint64_t addr = 0;
  EXPECT_TRUE(h.Take(List::kLive, 2, &addr));
  EXPECT_EQ(addr, AddressHistory::kDepth * 0x100);
  EXPECT_FALSE(h.Take(List::kLive, AddressHistory::kDepth, &addr));  // past the end now
  EXPECT_FALSE(h.Take(List::kLive, 0, &addr));
}

// The history against the plainest model of its rules (a list, most recent first, kDepth long):
// every push, find and take of a long random sequence agrees, with the lists full and empty.
TEST(AddressHistoryTest, AgreesWithAPlainListModel) {
  std::mt19937_64 rng(11);
  AddressHistory h;
  h.Reset();
  std::vector<uint64_t> model[2];
  for (int step = 0; step < 200000; ++step) {
    const int l = static_cast<int>(rng() % 2);
    const auto list = static_cast<List>(l);
    std::vector<uint64_t>& m = model[l];
    const unsigned dice = static_cast<unsigned>(rng() % 100);
    if (dice < 45) {  // small addresses, so that finds hit and lists see duplicates
      const uint64_t addr = rng() % 90;
      h.Push(list, addr);
      m.insert(m.begin(), addr);
      if (m.size() > AddressHistory::kDepth)
        m.pop_back();
    } else if (dice < 75) {
      const uint64_t addr = rng() % 90;
      uint64_t expected = 0;
      for (size_t i = 0; i < m.size(); ++i) {
        if (m[i] == addr) {
          expected = i + 1;
          m.erase(m.begin() + static_cast<long>(i));
          break;
        }
      }
      ASSERT_EQ(h.Find(list, addr), expected) << "step " << step;
    } else {
      const uint64_t word = rng() % (AddressHistory::kDepth + 3);
      uint64_t addr = 0;
      const bool ok = word >= 1 && word <= m.size();
      ASSERT_EQ(h.Take(list, word, &addr), ok) << "step " << step;
      if (ok) {
        ASSERT_EQ(addr, m[word - 1]) << "step " << step;
        m.erase(m.begin() + static_cast<long>(word - 1));
      }
    }
    ASSERT_EQ(h.count(list), m.size()) << "step " << step;
    if (step % 50000 == 49999) {  // a chunk boundary
      h.Reset();
      model[0].clear();
      model[1].clear();
    }
  }
}

// What allocators do: a caching or stream-ordered allocator hands out what was freed recently
// (not always the last one), a program frees in roughly the reverse order with long-lived
// blocks in between, CUPTI reports some allocations twice (driver callback and MEMORY2 record),
// and now and then a fresh segment appears far away. Other events interleave.
std::vector<Event> AllocatorEvents(uint32_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> live, freed;
  uint64_t next_segment = 0x7f0000000000;
  std::vector<Event> out;
  int64_t ts = 0;
  for (size_t i = 0; i < n; ++i) {
    ts += static_cast<int64_t>(rng() % 30000);
    const unsigned dice = static_cast<unsigned>(rng() % 100);
    Event ev;
    if (dice < 15) {
      ev = MakeEvent(EventType::kLaunch);
      ev.stream = 0x10;
    } else if (dice < 55 || live.empty()) {
      ev = MakeEvent(EventType::kAlloc);
      if (!freed.empty() && rng() % 10 < 8) {
        const size_t k = std::min<size_t>(freed.size() - 1, rng() % 6);  // near the top
        ev.addr = freed[freed.size() - 1 - k];
        freed.erase(freed.end() - 1 - static_cast<long>(k));
      } else {
        next_segment += (rng() % 64 + 1) << 21;
        ev.addr = rng() % 50 == 0 ? 0 : next_segment;  // an odd 0 too
      }
      live.push_back(ev.addr);
      ev.size = 512u << (rng() % 12);
      if (rng() % 20 == 0) {  // the same allocation reported twice
        ev.ts = ts;
        out.push_back(ev);
      }
    } else {
      ev = MakeEvent(EventType::kFree);
      const size_t k = rng() % 4 == 0 ? rng() % live.size() : std::min<size_t>(live.size() - 1, 2);
      ev.addr = live[live.size() - 1 - k];
      live.erase(live.end() - 1 - static_cast<long>(k));
      freed.push_back(ev.addr);
      if (rng() % 100 == 0)
        ev.addr = ~uint64_t{0} - rng() % 3;  // a free the allocator never handed out
    }
    ev.ts = ts;
    ev.tid = 7;
    out.push_back(ev);
  }
  return out;
}

std::string Encode(const std::vector<Event>& events, ChunkLayout layout, size_t chunk_events) {
  ChunkEncoder enc(3, layout);
  std::string bytes;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_TRUE(enc.Add(events[i]));
    if (i % chunk_events == chunk_events - 1) {
      EXPECT_TRUE(enc.Seal(ChunkType::kEvents, &bytes));
    }
  }
  EXPECT_TRUE(enc.Seal(ChunkType::kEvents, &bytes));
  return bytes;
}

TEST(AddressHistoryTest, AllocatorTracesRoundTripAndShrink) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const std::vector<Event> events = AllocatorEvents(seed, 40000);
    const std::string v2 = Encode(events, ChunkLayout::kColumnsV2, 7000 + seed * 1111);
    const std::string v1 = Encode(events, ChunkLayout::kColumns, 7000 + seed * 1111);
    Tables tables;
    std::string error;
    EXPECT_TRUE(Same(DecodeAll(v2, &tables, &error), events)) << error;
    EXPECT_EQ(error, "");
    // Most addresses are a small index instead of a heap-sized delta.
    EXPECT_LT(static_cast<double>(v2.size()), 0.92 * static_cast<double>(v1.size()))
        << v2.size() << " vs " << v1.size();
  }
}

TEST(AddressHistoryTest, EveryChunkStartsAFreshHistory) {
  // One event per chunk: every address is an escape, and each chunk decodes alone.
  const std::vector<Event> events = AllocatorEvents(9, 300);
  const std::string bytes = Encode(events, ChunkLayout::kColumnsV2, 1);
  Tables tables;
  std::string error;
  EXPECT_TRUE(Same(DecodeAll(bytes, &tables, &error), events)) << error;
}

constexpr uint8_t kAlloc = static_cast<uint8_t>(EventType::kAlloc);
constexpr uint8_t kFree = static_cast<uint8_t>(EventType::kFree);
const uint32_t kAllocAddr = static_cast<uint32_t>(HistoryField(kAlloc));
const uint32_t kFreeAddr = static_cast<uint32_t>(HistoryField(kFree));

std::string Types(std::initializer_list<uint8_t> types) {
  return std::string(types.begin(), types.end());
}

std::string DecodeError(const std::string& chunk, size_t* decoded = nullptr) {
  Tables tables;
  std::string error;
  const size_t n = DecodeAll(chunk, &tables, &error).size();
  if (decoded != nullptr)
    *decoded = n;
  return error;
}

TEST(AddressHistoryTest, HandMadeChunkDecodesAsSpecified) {
  // alloc 0x1000 (escape), free 0x1000 (live #1), alloc 0x1000 again (freed #1).
  const std::string chunk =
      ColumnChunk(3,
                  {{kTypesKey, Types({kAlloc, kFree, kAlloc})},
                   {ColumnKey(kFree, kFreeAddr, 0), std::string("\x01", 1)},
                   {ColumnKey(kAlloc, kAllocAddr, 0), std::string("\x00\x01", 2)},
                   {EscapeKey(kAlloc, kAllocAddr, 1), std::string("\x20", 1)}},  // zigzag(0x1000)
                  ChunkType::kColumnsV2);
  Tables tables;
  std::string error;
  const std::vector<Event> got = DecodeAll(chunk, &tables, &error);
  ASSERT_EQ(got.size(), 3u) << error;
  for (const Event& ev : got) EXPECT_EQ(ev.addr, 0x1000u);
}

TEST(AddressHistoryTest, AWordPastTheHistoryIsDamage) {
  const std::string chunk =
      ColumnChunk(1, {{kTypesKey, Types({kFree})}, {ColumnKey(kFree, kFreeAddr, 0), "\x05"}},
                  ChunkType::kColumnsV2);
  const std::string error = DecodeError(chunk);
  EXPECT_NE(error.find("column 'free.addr'): names address 5 of a history of 0"), std::string::npos)
      << error;
}

TEST(AddressHistoryTest, MissingOrExtraEscapeWordsAreDamage) {
  // Two escapes needed, one word given: the first event decodes, the second is named.
  size_t decoded = 0;
  std::string error = DecodeError(
      ColumnChunk(
          2, {{kTypesKey, Types({kAlloc, kAlloc})}, {EscapeKey(kAlloc, kAllocAddr, 0), "\x02"}},
          ChunkType::kColumnsV2),
      &decoded);
  EXPECT_EQ(decoded, 1u);
  EXPECT_NE(error.find("needs escape word 2 of a column of 1"), std::string::npos) << error;
  // One escape needed (alloc, free of it, alloc of it again), two given.
  error = DecodeError(ColumnChunk(3,
                                  {{kTypesKey, Types({kAlloc, kFree, kAlloc})},
                                   {ColumnKey(kFree, kFreeAddr, 0), "\x01"},
                                   {ColumnKey(kAlloc, kAllocAddr, 0), std::string("\x00\x01", 2)},
                                   {EscapeKey(kAlloc, kAllocAddr, 0), std::string("\x02\x04")}},
                                  ChunkType::kColumnsV2));
  EXPECT_NE(error.find("escape column alloc.addr holds 2 words, its events used 1"),
            std::string::npos)
      << error;
  // More escape words than events, or planes that disagree, are caught before decoding.
  error = DecodeError(ColumnChunk(1,
                                  {{kTypesKey, Types({kAlloc})},
                                   {EscapeKey(kAlloc, kAllocAddr, 0), std::string("\x02\x04")},
                                   {EscapeKey(kAlloc, kAllocAddr, 1), std::string("\x02\x04")}},
                                  ChunkType::kColumnsV2));
  EXPECT_NE(error.find("holds 2 words for 1 events"), std::string::npos) << error;
  error = DecodeError(ColumnChunk(2,
                                  {{kTypesKey, Types({kAlloc, kAlloc})},
                                   {EscapeKey(kAlloc, kAllocAddr, 0), std::string("\x02\x04")},
                                   {EscapeKey(kAlloc, kAllocAddr, 1), std::string("\x02")}},
                                  ChunkType::kColumnsV2));
  EXPECT_NE(error.find("plane 1 holds 1 bytes, another plane 2"), std::string::npos) << error;
}

TEST(AddressHistoryTest, A11ChunkKeepsDeltasAndSkipsEscapeKeys) {
  // In a kColumns (1.1) chunk the addr column is a delta, and an escape key is an unknown
  // stream of a newer minor.
  const std::string chunk = ColumnChunk(1,
                                        {{kTypesKey, Types({kAlloc})},
                                         {ColumnKey(kAlloc, kAllocAddr, 0), "\x04"},
                                         {EscapeKey(kAlloc, kAllocAddr, 0), "\x7f"}},
                                        ChunkType::kColumns);
  Tables tables;
  std::string error;
  const std::vector<Event> got = DecodeAll(chunk, &tables, &error);
  ASSERT_EQ(got.size(), 1u) << error;
  EXPECT_EQ(got[0].addr, 2u);
}

}  // namespace
}  // namespace cuclimb::format
