// SPDX-License-Identifier: Apache-2.0
// MemoryPage: first fit, splitting, coalescing and the padding bug of cubecl 0.10.
#include "workloads/allocators/cubecl/memory_page.h"

#include <gtest/gtest.h>

namespace cuclimb::workloads::cubecl {
namespace {

constexpr uint64_t kPage = 64 * 1024;
constexpr uint64_t kAlign = 512;

TEST(MemoryPageTest, FreshPageSplitsOnFirstReserve) {
  AllocatorStats stats;
  MemoryPage page(1, kPage, kAlign);
  ASSERT_EQ(page.slices().size(), 1u);
  auto a = page.TryReserve(1000, &stats);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->offset, 0u);
  ASSERT_EQ(page.slices().size(), 2u);
  EXPECT_EQ(page.slices()[0].size, 1000u);
  EXPECT_EQ(page.slices()[0].padding, 24u);
  EXPECT_EQ(page.slices()[1].offset, 1024u);
  EXPECT_EQ(page.slices()[1].size, kPage - 1024);
  EXPECT_EQ(page.DeadBytes(), 0u);
  EXPECT_FALSE(IsFree(page.slices()[0].handle));  // `a` holds a reference
  EXPECT_TRUE(IsFree(page.slices()[1].handle));
}

TEST(MemoryPageTest, FreedSliceOfSameSizeIsReusedFirstFit) {
  AllocatorStats stats;
  MemoryPage page(1, kPage, kAlign);
  auto a = page.TryReserve(512, &stats);
  auto b = page.TryReserve(512, &stats);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->offset, 512u);
  a.reset();  // the free: a reference-count decrement, nothing else
  auto c = page.TryReserve(512, &stats);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->offset, 0u);
}

TEST(MemoryPageTest, PaddingBugMakesAFreedPaddedSliceUnusable) {
  AllocatorStats stats;
  MemoryPage page(1, kPage, kAlign);
  auto a = page.TryReserve(100, &stats);  // size 100, padding 412: effective 512
  auto b = page.TryReserve(512, &stats);  // keeps `a` from having a free neighbour on the left
  ASSERT_TRUE(a && b);
  a.reset();
  // The fit test reads the stored size (100), not the effective size (512): neither a 512-byte
  // nor even another 100-byte request fits the freed slot.
  auto c = page.TryReserve(512, &stats);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->offset, 1024u);
  auto d = page.TryReserve(100, &stats);
  ASSERT_TRUE(d);
  EXPECT_NE(d->offset, 0u);
  EXPECT_TRUE(IsFree(page.slices()[0].handle));
}

TEST(MemoryPageTest, SplittingAPaddedSliceLosesItsPadding) {
  AllocatorStats stats;
  MemoryPage page(1, kPage, kAlign);
  auto a = page.TryReserve(2000, &stats);  // effective 2048
  auto guard = page.TryReserve(512, &stats);
  ASSERT_TRUE(a && guard);
  a.reset();
  auto b = page.TryReserve(512, &stats);  // splits the 2000-byte slice: rest = 2000 - 512
  ASSERT_TRUE(b);
  EXPECT_EQ(b->offset, 0u);
  EXPECT_EQ(page.DeadBytes(), 48u);
  EXPECT_EQ(page.slices()[1].offset, 512u);
  EXPECT_EQ(page.slices()[1].size, 1488u);
}

TEST(MemoryPageTest, CoalesceMergesRunsOfFreeSlicesAndRecoversPadding) {
  AllocatorStats stats;
  MemoryPage page(1, kPage, kAlign);
  auto a = page.TryReserve(100, &stats);
  auto b = page.TryReserve(512, &stats);
  auto c = page.TryReserve(512, &stats);
  ASSERT_TRUE(a && b && c);
  a.reset();
  b.reset();
  const uint64_t touched_before = stats.coalesce_touched;
  page.Coalesce(&stats);
  EXPECT_GT(stats.coalesce_touched, touched_before);
  ASSERT_EQ(page.slices().size(), 3u);  // [a+b merged][c][rest]
  EXPECT_EQ(page.slices()[0].offset, 0u);
  EXPECT_EQ(page.slices()[0].size, 1024u);
  EXPECT_EQ(page.slices()[0].padding, 0u);
  // Every descriptor points at its new index.
  for (std::size_t i = 0; i < page.slices().size(); ++i) {
    EXPECT_EQ(page.IndexOf(page.slices()[i].handle->id), i);
  }
  auto d = page.TryReserve(1024, &stats);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->offset, 0u);
}

TEST(MemoryPageTest, CoalesceLeavesASingleFreeSliceAlone) {
  AllocatorStats stats;
  MemoryPage page(1, kPage, kAlign);
  auto a = page.TryReserve(512, &stats);
  auto b = page.TryReserve(512, &stats);
  auto c = page.TryReserve(kPage - 1024, &stats);  // fills the page: no free tail
  ASSERT_TRUE(a && b && c);
  b.reset();  // [used][free][used]
  const uint64_t id_before = page.slices()[1].handle->id;
  const uint64_t touched_before = stats.coalesce_touched;
  page.Coalesce(&stats);
  EXPECT_EQ(stats.coalesce_touched, touched_before);
  EXPECT_EQ(page.slices().size(), 3u);
  EXPECT_EQ(page.slices()[1].handle->id, id_before);
}

TEST(MemoryPageTest, FullPageRefusesAndCountsScans) {
  AllocatorStats stats;
  MemoryPage page(1, 2048, kAlign);
  auto a = page.TryReserve(2048, &stats);
  ASSERT_TRUE(a);
  EXPECT_EQ(page.slices().size(), 1u);
  const uint64_t scanned = stats.slices_scanned;
  EXPECT_FALSE(page.TryReserve(512, &stats).has_value());
  EXPECT_EQ(stats.slices_scanned, scanned + 1);
}

}  // namespace
}  // namespace cuclimb::workloads::cubecl
