// SPDX-License-Identifier: Apache-2.0
// SlicedPool and PersistentPool against the fake backend: page walks, exact-size slots, cleanup.
#include <gtest/gtest.h>

#include "tests/workloads/fake_backend.h"
#include "workloads/allocators/cubecl/persistent_pool.h"
#include "workloads/allocators/cubecl/sliced_pool.h"
#include "workloads/allocators/cubecl/storage.h"

namespace cuclimb::workloads::cubecl {
namespace {

using testing::FakeBackend;

constexpr uint64_t kPage = 1 << 20;
constexpr uint64_t kMaxSlice = 1 << 16;

class PoolsTest : public ::testing::Test {
 protected:
  FakeBackend backend_;
  AllocatorStats stats_;
  GpuStorage storage_{&backend_, nullptr, &stats_, nullptr};
};

TEST_F(PoolsTest, SlicedPoolAcceptsUpToMaxSliceOrNearThePageSize) {
  SlicedPool pool(kPage, kMaxSlice, 512);
  EXPECT_TRUE(pool.Accepts(1));
  EXPECT_TRUE(pool.Accepts(kMaxSlice));
  EXPECT_FALSE(pool.Accepts(kMaxSlice + 1));
  EXPECT_TRUE(pool.Accepts(kPage - kPage / 5));
  EXPECT_FALSE(pool.Accepts(kPage - kPage / 5 - 512));
  EXPECT_TRUE(pool.Accepts(kPage));
  EXPECT_FALSE(pool.Accepts(kPage + 1));
  SlicedPool zero(512, 0, 512, /*zero_only=*/true);
  EXPECT_TRUE(zero.Accepts(0));
  EXPECT_FALSE(zero.Accepts(1));
  EXPECT_FALSE(zero.Accepts(500));
}

TEST_F(PoolsTest, SlicedPoolAllocatesWholePagesAndWalksThemInOrder) {
  SlicedPool pool(kPage, kMaxSlice, 512);
  EXPECT_FALSE(pool.TryReserve(4096, storage_, &stats_).has_value());
  Reservation first = pool.Alloc(kPage - 4096, storage_, &stats_);
  ASSERT_EQ(backend_.device_alloc_sizes.size(), 1u);
  EXPECT_EQ(backend_.device_alloc_sizes[0], kPage);
  auto hit = pool.TryReserve(4096, storage_, &stats_);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->storage, first.storage);
  EXPECT_EQ(hit->address, first.address + (kPage - 4096));
  // The page is full now: the next request needs a second page.
  EXPECT_FALSE(pool.TryReserve(512, storage_, &stats_).has_value());
  Reservation second = pool.Alloc(512, storage_, &stats_);
  EXPECT_NE(second.storage, first.storage);
  EXPECT_EQ(pool.pages().size(), 2u);
  // Freeing on page one makes the walk stop there.
  hit.reset();
  const uint64_t visited = stats_.pages_visited;
  auto again = pool.TryReserve(4096, storage_, &stats_);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->storage, first.storage);
  EXPECT_EQ(stats_.pages_visited, visited + 1);
}

TEST_F(PoolsTest, SlicedPoolCleanupKeepsPagesWithDeadBytes) {
  // A page with a dead-byte split: a 2000-byte slice freed, then split by a 512 request.
  SlicedPool dead_pool(kPage, kMaxSlice, 512);
  Reservation padded = dead_pool.Alloc(2000, storage_, &stats_);
  auto guard = dead_pool.TryReserve(512, storage_, &stats_);
  padded.handle.reset();
  padded = Reservation{};
  auto split = dead_pool.TryReserve(512, storage_, &stats_);  // coalesce can't merge: guard
  ASSERT_TRUE(split && guard);
  split.reset();
  guard.reset();
  // Everything in dead_pool is free now, but its page lost 48 bytes to the padding bug.
  ASSERT_EQ(dead_pool.pages().size(), 1u);
  EXPECT_GT(dead_pool.pages()[0].DeadBytes(), 0u);
  const std::size_t frees_before = backend_.device_frees;
  dead_pool.Cleanup(storage_);
  storage_.Flush();
  EXPECT_EQ(dead_pool.pages().size(), 1u);
  EXPECT_EQ(backend_.device_frees, frees_before);

  SlicedPool clean_pool(kPage, kMaxSlice, 512);
  { Reservation r = clean_pool.Alloc(4096, storage_, &stats_); }
  clean_pool.Cleanup(storage_);
  storage_.Flush();
  EXPECT_TRUE(clean_pool.pages().empty());
  EXPECT_EQ(backend_.device_frees, frees_before + 1);
}

TEST_F(PoolsTest, PersistentPoolAllocatesExactEffectiveSizesAndScansInCreationOrder) {
  PersistentPool pool(512);
  EXPECT_FALSE(pool.HasSize(100));
  EXPECT_FALSE(pool.TryReserve(100, &stats_).has_value());
  Reservation a = pool.Alloc(100, storage_, &stats_);
  EXPECT_EQ(backend_.device_alloc_sizes.back(), 512u);
  EXPECT_TRUE(pool.HasSize(1));
  EXPECT_TRUE(pool.HasSize(512));
  EXPECT_FALSE(pool.HasSize(513));
  Reservation b = pool.Alloc(512, storage_, &stats_);
  Reservation c = pool.Alloc(300, storage_, &stats_);
  EXPECT_EQ(pool.BucketSize(512), 3u);
  // All three in use: a scan visits every slot and finds nothing.
  uint64_t scanned = stats_.slots_scanned;
  EXPECT_FALSE(pool.TryReserve(40, &stats_).has_value());
  EXPECT_EQ(stats_.slots_scanned, scanned + 3);
  // Freeing the last one: the scan walks past the two live slots to reach it.
  const uint64_t c_address = c.address;
  c = Reservation{};
  scanned = stats_.slots_scanned;
  auto hit = pool.TryReserve(40, &stats_);
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(stats_.slots_scanned, scanned + 3);
  EXPECT_EQ(storage_.Address(hit->storage), c_address);
  // Freeing the first one: found at once.
  hit.reset();
  a = Reservation{};
  scanned = stats_.slots_scanned;
  ASSERT_TRUE(pool.TryReserve(512, &stats_).has_value());
  EXPECT_EQ(stats_.slots_scanned, scanned + 1);
}

TEST_F(PoolsTest, PersistentCleanupFreesOnlyFreeSlotsAndKeepsTheBucket) {
  PersistentPool pool(512);
  Reservation a = pool.Alloc(4096, storage_, &stats_);
  Reservation b = pool.Alloc(4096, storage_, &stats_);
  a = Reservation{};
  pool.Cleanup(storage_);
  EXPECT_EQ(backend_.device_frees, 1u);
  EXPECT_EQ(pool.slot_count(), 1u);
  b = Reservation{};
  pool.Cleanup(storage_);
  EXPECT_EQ(backend_.device_frees, 2u);
  EXPECT_EQ(pool.slot_count(), 0u);
  // As in Rust, the emptied bucket's key stays: has_size still routes this size here.
  EXPECT_TRUE(pool.HasSize(4096));
}

}  // namespace
}  // namespace cuclimb::workloads::cubecl
