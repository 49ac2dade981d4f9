// SPDX-License-Identifier: Apache-2.0
// The per-slot store: reads, growth, sparse pages, exact sums against a dense vector.
#include "series/slot_vec.h"

#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "series/fold.h"

namespace cuclimb::analysis {
namespace {

constexpr uint32_t kPage = SlotVec::kPageSlots;

// Equal as bit patterns (EXPECT_EQ would take −0 for +0).
bool SameBits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

TEST(SlotVec, EmptyUntilWrittenAndZeroEverywhereElse) {
  SlotVec v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[123456], 0.0);
  EXPECT_EQ(v.bytes(), 0u);
  v.Add(7, 0.0);  // a write, even of 0
  EXPECT_FALSE(v.empty());
  EXPECT_GE(v.size(), 8u);
  for (uint32_t s = 0; s < 4 * kPage; ++s) EXPECT_EQ(v[s], 0.0) << s;
}

TEST(SlotVec, GrowsWithoutMovingWhatItHolds) {
  SlotVec v;
  for (uint32_t s = 0; s < 20 * kPage; s += 3) v.Add(s, s + 0.5);
  ASSERT_GE(v.size(), 20u * kPage);
  for (uint32_t s = 0; s < 20 * kPage; ++s) ASSERT_EQ(v[s], s % 3 == 0 ? s + 0.5 : 0.0) << s;
  // Both parities written: every page of the 20 pages' worth of slots is there, no more.
  EXPECT_EQ(v.pages(), 20u);
}

TEST(SlotVec, IterationSlotsAloneAllocateNoGapPages) {
  SlotVec v;
  const uint32_t iterations = 10 * kPage;
  for (uint32_t i = 0; i < iterations; ++i) v.Add(2 * i + 1, 1);  // slot 2i+1: iteration i
  EXPECT_EQ(v.pages(), 10u);
  // Half of a dense array of the same slots, plus the page table.
  EXPECT_LE(v.bytes(), iterations * sizeof(double) + 1024);
  for (uint32_t i = 0; i < iterations; ++i) {
    ASSERT_EQ(v[2 * i + 1], 1.0);
    ASSERT_EQ(v[2 * i + 2], 0.0);
  }
}

TEST(SlotVec, SparseKeysCostAPageNotEverySlotBeforeThem) {
  SlotVec v;
  v.Add(1'000'001, 42);
  v.Add(1'000'003, 1);
  EXPECT_EQ(v.pages(), 1u);
  // One page plus a table of one entry (16 bytes) per page of slots before it: ~35 KiB, where
  // a dense vector would hold 8 MB.
  EXPECT_LT(v.bytes(), 40u * 1024);
  EXPECT_EQ(v[1'000'001], 42.0);
  EXPECT_EQ(v[1'000'002], 0.0);
  EXPECT_EQ(v[1'000'003], 1.0);
  EXPECT_EQ(v[999'999], 0.0);
}

// A million kernel names seen once each: every series must stay a few dozen bytes.
TEST(SlotVec, FewValuesStaySmall) {
  SlotVec v;
  v.Add(1, 1);
  EXPECT_LE(v.bytes(), SlotVec::kFirstPageSlots * sizeof(double) + 16);
  v.Add(3, 1);
  v.Add(2, 1);
  EXPECT_LE(v.bytes(), 2 * (SlotVec::kFirstPageSlots * sizeof(double) + 16));
  // Pages grow by doubling as later slots of theirs are written, keeping what they hold.
  for (uint32_t s = 5; s < 2 * SlotVec::kPageSlots; s += 2) {
    v.Add(s, 1);
    ASSERT_EQ(v[1], 1.0);
    ASSERT_EQ(v[s], 1.0);
  }
  EXPECT_EQ(v[2], 1.0);
  EXPECT_EQ(v[3], 1.0);
  EXPECT_EQ(v.pages(), 2u);
}

TEST(SlotVec, HugeSlotNumbers) {
  SlotVec v;
  const uint32_t top = UINT32_MAX;
  v.Add(top, 3);
  v.Add(top - 1, 4);
  v.Max(top - 2, 5);
  EXPECT_EQ(v[top], 3.0);
  EXPECT_EQ(v[top - 1], 4.0);
  EXPECT_EQ(v[top - 2], 5.0);
  EXPECT_EQ(v[top - 3], 0.0);
  EXPECT_EQ(v.pages(), 2u);  // an odd and an even page
  EXPECT_EQ(v.size(), size_t{top} + 1);
  std::vector<uint32_t> visited;
  v.ForEach([&](uint32_t s, double x) {
    if (x != 0)
      visited.push_back(s);
  });
  EXPECT_EQ(visited, (std::vector<uint32_t>{top - 2, top - 1, top}));
}

// HotCell: the cell of a slot on the page last written, and nothing else; it writes nothing.
TEST(SlotVec, HotCellIsTheLastWrittenPageOnly) {
  SlotVec v;
  double* cell = nullptr;
  EXPECT_FALSE(v.HotCell(0, &cell));  // nothing written
  EXPECT_FALSE(v.HotCell(1, &cell));
  EXPECT_TRUE(v.empty());
  v.Add(3, 1);  // odd slots 1, 3, 5, 7 on the first page (kFirstPageSlots values)
  ASSERT_TRUE(v.HotCell(3, &cell));
  *cell += 2;
  EXPECT_EQ(v[3], 3);
  ASSERT_TRUE(v.HotCell(7, &cell));  // same page, not written yet
  EXPECT_EQ(*cell, 0);
  EXPECT_FALSE(v.HotCell(9, &cell));                            // beyond the page's capacity
  EXPECT_FALSE(v.HotCell(2, &cell));                            // the other parity: another page
  EXPECT_FALSE(v.HotCell(2 * SlotVec::kPageSlots + 3, &cell));  // the next group's page
  v.Add(2, 5);                                                  // now the even page is the hot one
  EXPECT_FALSE(v.HotCell(3, &cell));
  ASSERT_TRUE(v.HotCell(2, &cell));
  EXPECT_EQ(*cell, 5);
  EXPECT_EQ(v[3], 3);
  EXPECT_EQ(v[9], 0);
}

TEST(SlotVec, MaxKeepsTheLargest) {
  SlotVec v;
  v.Max(5, 3);
  v.Max(5, 2);
  v.Max(5, 7);
  v.Max(6, -1);  // below the initial 0: stays 0, as std::max over a zeroed vector did
  EXPECT_EQ(v[5], 7.0);
  EXPECT_EQ(v[6], 0.0);
}

TEST(SlotVec, ForEachVisitsSlotsInOrderAndSkipsOnlyZeros) {
  SlotVec v;
  std::mt19937 rng(7);
  std::vector<double> dense(64 * kPage, 0.0);
  for (int n = 0; n < 2000; ++n) {
    // Clustered slots: some pages stay empty, gap pages mostly.
    const uint32_t s = (rng() % 3 == 0 ? 2 : 1) + 2 * (rng() % 6000) + (rng() % 2) * 20000;
    v.Add(s, 1.0);
    dense[s] += 1.0;
  }
  int64_t last = -1;
  std::vector<double> seen(dense.size(), 0.0);
  v.ForEach([&](uint32_t s, double x) {
    ASSERT_GT(static_cast<int64_t>(s), last);
    last = s;
    ASSERT_LT(s, dense.size());
    seen[s] = x;
  });
  EXPECT_EQ(seen, dense);  // every nonzero slot visited with its value
  EXPECT_LT(v.pages(), 2 * dense.size() / kPage);
}

TEST(SlotVec, CopiesAreDeep) {
  SlotVec a{1, 2, 3};
  SlotVec b = a;
  b.Add(1, 10);
  EXPECT_EQ(a[1], 2.0);
  EXPECT_EQ(b[1], 12.0);
  SlotVec c;
  c = b;
  EXPECT_EQ(c[1], 12.0);
  EXPECT_EQ(c[2], 3.0);
  SlotVec d = std::move(c);
  EXPECT_EQ(d[0], 1.0);
  // A moved-from store is empty and usable; it must not write into the pages it gave away.
  c.Add(1, 5);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(c[1], 5.0);
  EXPECT_EQ(d[1], 12.0);
  d = std::move(b);
  b.Add(1, 1);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b[1], 1.0);
  EXPECT_EQ(d[1], 12.0);
}

// The reference: the dense, doubling vector this store replaced, folded the way Folder did.
struct DenseFold {
  std::vector<double> v;
  void Add(uint32_t s, double x) {
    if (s >= v.size())
      v.resize(std::max<size_t>(s + 1, 2 * v.size() + 16), 0.0);
    v[s] += x;
  }
};

TEST(SlotVec, SumsAndFoldsAreBitIdenticalToADenseVector) {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> frac(-1e3, 1e6);
  SlotVec v;
  DenseFold ref;
  const uint32_t iterations = 3000, slots = 2 * iterations + 50;  // and an epilogue
  for (int n = 0; n < 200000; ++n) {
    uint32_t s = static_cast<uint32_t>(rng() % slots);
    if (rng() % 8 != 0)
      s |= 1;  // mostly iteration slots
    // Fractional, negative, huge and tiny values: any reordering of a sum would show.
    double x = frac(rng);
    if (n % 7 == 0)
      x *= 1e-9;
    if (n % 11 == 0)
      x = static_cast<double>(rng() >> 11);
    v.Add(s, x);
    ref.Add(s, x);
  }
  for (uint32_t s = 0; s < slots; ++s) ASSERT_TRUE(SameBits(v[s], ref.v[s])) << s;

  const Folder fold(iterations, [&](uint32_t slot) -> int64_t {
    if (slot == 0)
      return -1;
    const int64_t i = (static_cast<int64_t>(slot) - 1) / 2;
    return i < iterations ? i : -2;
  });
  double pro = 0, epi = 0;
  const Series got = fold.Sum(v, &pro, &epi);
  Series want(iterations, 0.0);
  double want_pro = 0, want_epi = 0;
  for (size_t s = 0; s < ref.v.size(); ++s) {
    const int64_t i = fold.IterationOf(static_cast<uint32_t>(s));
    if (i >= 0)
      want[static_cast<size_t>(i)] += ref.v[s];
    else if (i == -1)
      want_pro += ref.v[s];
    else
      want_epi += ref.v[s];
  }
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(SameBits(got[i], want[i])) << i;
  EXPECT_TRUE(SameBits(pro, want_pro));
  EXPECT_TRUE(SameBits(epi, want_epi));

  const Series max = fold.Max(v);
  for (size_t i = 0; i < max.size(); ++i) {
    double m = 0;
    for (uint32_t s : {2 * static_cast<uint32_t>(i) + 1, 2 * static_cast<uint32_t>(i) + 2})
      m = std::max(m, ref.v[s]);
    ASSERT_TRUE(SameBits(max[i], m)) << i;
  }
}

}  // namespace
}  // namespace cuclimb::analysis
