// SPDX-License-Identifier: Apache-2.0
// CachingAllocator on the fake backend: bins, reuse without driver calls, empty_cache.
#include "workloads/allocators/caching_allocator.h"

#include <gtest/gtest.h>

#include "tests/workloads/fake_backend.h"

namespace cuclimb::workloads {
namespace {

using testing::FakeBackend;

TEST(CachingAllocatorTest, BinsRoundSmallTo512AndLargeTo2MiB) {
  EXPECT_EQ(CachingAllocator::BinSize(1), 512u);
  EXPECT_EQ(CachingAllocator::BinSize(512), 512u);
  EXPECT_EQ(CachingAllocator::BinSize(513), 1024u);
  EXPECT_EQ(CachingAllocator::BinSize(1 << 20), 1u << 20);
  EXPECT_EQ(CachingAllocator::BinSize((1 << 20) + 1), 2u << 20);
  EXPECT_EQ(CachingAllocator::BinSize(3 << 20), 4u << 20);
}

TEST(CachingAllocatorTest, ReusesBlocksOfTheSameBinAndNeverFreesOnItsOwn) {
  FakeBackend backend;
  CachingAllocator allocator(&backend, nullptr, /*nvtx_mem=*/false);
  Allocation a = allocator.Allocate(1000);
  const uint64_t address = a.address;
  allocator.Free(std::move(a));
  EXPECT_EQ(backend.device_frees, 0u);
  Allocation b = allocator.Allocate(900);  // same 1024 bin
  EXPECT_EQ(b.address, address);
  EXPECT_EQ(backend.device_alloc_sizes.size(), 1u);
  Allocation c = allocator.Allocate(2000);  // another bin
  EXPECT_EQ(backend.device_alloc_sizes.size(), 2u);
  EXPECT_EQ(backend.device_alloc_sizes[1], 2048u);
  allocator.Free(std::move(b));
  allocator.Free(std::move(c));
  EXPECT_EQ(allocator.cached_blocks(), 2u);
  EXPECT_EQ(backend.device_frees, 0u);
}

TEST(CachingAllocatorTest, SteadyTrainingLoopStopsCallingTheDriver) {
  FakeBackend backend;
  CachingAllocator allocator(&backend, nullptr, false);
  for (int step = 0; step < 50; ++step) {
    std::vector<Allocation> live;
    for (const std::size_t size : {65536u, 1024u, 262144u, 32u, 16384u}) {
      live.push_back(allocator.Allocate(size));
    }
    for (Allocation& a : live) allocator.Free(std::move(a));
  }
  EXPECT_EQ(backend.device_alloc_sizes.size(), 5u);
}

TEST(CachingAllocatorTest, CleanupReleasesCachedBlocksOnlyAndDestructionTheRest) {
  FakeBackend backend;
  {
    CachingAllocator allocator(&backend, nullptr, /*nvtx_mem=*/true);
    Allocation live = allocator.Allocate(4096);
    Allocation cached = allocator.Allocate(8192);
    allocator.Free(std::move(cached));
    allocator.Cleanup();
    EXPECT_EQ(backend.device_frees, 1u);
    EXPECT_EQ(backend.device_live.size(), 1u);
    allocator.Free(std::move(live));
  }
  EXPECT_TRUE(backend.device_live.empty());
  EXPECT_EQ(backend.bad_frees, 0u);
}

}  // namespace
}  // namespace cuclimb::workloads
