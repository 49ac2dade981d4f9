// SPDX-License-Identifier: Apache-2.0
// AddressMap against std::unordered_map: random inserts, finds and erases over addresses as
// allocators hand them out (256-byte aligned, reused), unaligned host addresses, colliding homes,
// the reserved address ~0, growth, and moves.
#include "series/address_map.h"

#include <cstdint>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace cuclimb::analysis {
namespace {

struct Value {
  uint64_t a = 0;
  uint32_t b = 0;
};

void ExpectSame(const AddressMap<Value>& map, const std::unordered_map<uint64_t, Value>& ref) {
  ASSERT_EQ(map.size(), ref.size());
  size_t visited = 0;
  for (const auto& [addr, v] : map) {
    auto it = ref.find(addr);
    ASSERT_NE(it, ref.end()) << addr;
    EXPECT_EQ(v.a, it->second.a);
    EXPECT_EQ(v.b, it->second.b);
    ++visited;
  }
  EXPECT_EQ(visited, ref.size());
}

// One random workload over addresses drawn by `draw`.
template <class Draw>
void RunAgainstReference(uint32_t seed, int ops, Draw draw) {
  std::mt19937_64 rng(seed);
  AddressMap<Value> map;
  std::unordered_map<uint64_t, Value> ref;
  for (int i = 0; i < ops; ++i) {
    const uint64_t addr = draw(rng);
    const int op = static_cast<int>(rng() % 3);
    if (op == 0) {
      const Value v{rng(), static_cast<uint32_t>(i)};
      auto [e, inserted] = map.try_emplace(addr, v);
      auto [r, rinserted] = ref.try_emplace(addr, v);
      ASSERT_EQ(inserted, rinserted) << addr;
      ASSERT_EQ(e->first, addr);
      ASSERT_EQ(e->second.a, r->second.a);
    } else if (op == 1) {
      auto* e = map.find(addr);
      auto r = ref.find(addr);
      ASSERT_EQ(e != nullptr, r != ref.end()) << addr;
      if (e != nullptr) {
        ASSERT_EQ(e->second.b, r->second.b);
        e->second.b += 1;  // writes through the entry are kept
        r->second.b += 1;
      }
    } else {
      auto* e = map.find(addr);
      auto r = ref.find(addr);
      ASSERT_EQ(e != nullptr, r != ref.end()) << addr;
      if (e != nullptr) {
        map.erase(e);
        ref.erase(r);
      }
    }
  }
  ExpectSame(map, ref);
  // Every address still found after the churn (backward shifts kept the probe chains whole).
  for (const auto& [addr, v] : ref) {
    auto* e = map.find(addr);
    ASSERT_NE(e, nullptr) << addr;
    EXPECT_EQ(e->second.a, v.a);
  }
}

TEST(AddressMap, MatchesReferenceOnAlignedDeviceAddresses) {
  // A caching-allocator-free loop: a few hundred 256-byte-aligned addresses, reused.
  RunAgainstReference(1, 200000, [](std::mt19937_64& rng) -> uint64_t {
    return 0x7f0000000000ull + (rng() % 512) * 256;
  });
}

TEST(AddressMap, MatchesReferenceOnUnalignedAndSpecialAddresses) {
  RunAgainstReference(2, 200000, [](std::mt19937_64& rng) -> uint64_t {
    switch (rng() % 8) {
      case 0:
        return uint64_t{0};
      case 1:
        return ~uint64_t{0};  // the map's empty marker, kept aside
      case 2:
        return ~uint64_t{0} - 1;
      default:
        return 0x5500000000ull + rng() % 4096;  // host addresses, byte-aligned
    }
  });
}

TEST(AddressMap, GrowsWithManyLiveAddressesAndShrinksBackToEmpty) {
  AddressMap<Value> map;
  std::vector<uint64_t> addrs;
  for (uint64_t i = 0; i < 100000; ++i) addrs.push_back(0x7f0000000000ull + i * 512);
  for (uint64_t a : addrs) ASSERT_TRUE(map.try_emplace(a, {a, 1}).second);
  EXPECT_EQ(map.size(), addrs.size());
  for (uint64_t a : addrs) ASSERT_FALSE(map.try_emplace(a, {0, 0}).second);
  for (size_t i = 0; i < addrs.size(); i += 2) map.erase(map.find(addrs[i]));
  for (size_t i = 0; i < addrs.size(); ++i) {
    auto* e = map.find(addrs[i]);
    ASSERT_EQ(e != nullptr, i % 2 == 1) << i;
    if (e != nullptr) {
      EXPECT_EQ(e->second.a, addrs[i]);
    }
  }
  for (size_t i = 1; i < addrs.size(); i += 2) map.erase(map.find(addrs[i]));
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.begin(), map.end());
}

TEST(AddressMap, MoveLeavesAnEmptyUsableMap) {
  AddressMap<Value> a;
  a.try_emplace(0x1000, {7, 7});
  a.try_emplace(~uint64_t{0}, {8, 8});
  AddressMap<Value> b = std::move(a);
  EXPECT_EQ(b.size(), 2u);
  ASSERT_NE(b.find(~uint64_t{0}), nullptr);
  EXPECT_EQ(b.find(~uint64_t{0})->second.a, 8u);
  EXPECT_EQ(b.find(0x1000)->second.a, 7u);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is specified empty
  EXPECT_EQ(a.find(0x1000), nullptr);
  EXPECT_TRUE(a.try_emplace(0x1000, {1, 1}).second);
}

}  // namespace
}  // namespace cuclimb::analysis
