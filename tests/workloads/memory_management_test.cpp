// SPDX-License-Identifier: Apache-2.0
// MemoryManagement: the H200 ladder and the reserve order between persistent and sliced pools.
#include "workloads/allocators/cubecl/memory_management.h"

#include <gtest/gtest.h>

#include "tests/workloads/fake_backend.h"

namespace cuclimb::workloads::cubecl {
namespace {

using testing::FakeBackend;

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

// The table of docs (cubecl-pool-model.md section 2) for the H200's 143,771 MiB.
TEST(LadderTest, MatchesTheH200Table) {
  const uint64_t max_page = RoundUp(FakeBackend::kH200Bytes / 4, 512);
  const std::vector<PoolShape> ladder = Ladder(max_page, 512);
  ASSERT_EQ(ladder.size(), 7u);
  const double pages[] = {8.78 * kMiB, 35.1 * kMiB, 140.4 * kMiB, 562 * kMiB,
                          2.19 * kGiB, 8.78 * kGiB, 35.1 * kGiB};
  const double slices[] = {140.4 * kKiB, 1.1 * kMiB,  8.78 * kMiB, 70.2 * kMiB,
                           562 * kMiB,   4.39 * kGiB, 35.1 * kGiB};
  for (std::size_t i = 0; i < ladder.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(ladder[i].page_size), pages[i], pages[i] * 0.01) << i;
    EXPECT_NEAR(static_cast<double>(ladder[i].max_slice), slices[i], slices[i] * 0.02) << i;
    EXPECT_EQ(ladder[i].page_size % 512, 0u) << i;
  }
  EXPECT_EQ(ladder.back().page_size, max_page);
  EXPECT_EQ(ladder.back().max_slice, max_page);
}

TEST(LadderTest, SmallDeviceHasOnlyTheTail) {
  const std::vector<PoolShape> ladder = Ladder(16 << 20, 512);
  ASSERT_EQ(ladder.size(), 1u);
  EXPECT_EQ(ladder[0].page_size, 16u << 20);
}

class MemoryManagementTest : public ::testing::Test {
 protected:
  MemoryConfig Config(bool size_match = true, bool persistent = true) {
    MemoryConfig config;
    config.max_page = RoundUp(FakeBackend::kH200Bytes / 4, 512);
    config.alignment = 512;
    config.size_match = size_match;
    config.persistent_pool = persistent;
    return config;
  }
  FakeBackend backend_;
  AllocatorStats stats_;
  GpuStorage storage_{&backend_, nullptr, &stats_, nullptr};
};

TEST_F(MemoryManagementTest, PersistentWindowCreatesExactSlotsAndSizeMatchRoutesLaterTensors) {
  MemoryManagement memory(&storage_, Config(), &stats_);
  memory.SetMode(AllocationMode::kPersistent);
  Reservation param = memory.Reserve(65536);
  memory.SetMode(AllocationMode::kAuto);
  ASSERT_EQ(backend_.device_alloc_sizes.size(), 1u);
  EXPECT_EQ(backend_.device_alloc_sizes[0], 65536u);
  // Same size outside the window: no free slot, but has_size -> another exact slot.
  Reservation activation = memory.Reserve(65536);
  ASSERT_EQ(backend_.device_alloc_sizes.size(), 2u);
  EXPECT_EQ(backend_.device_alloc_sizes[1], 65536u);
  EXPECT_EQ(memory.persistent().BucketSize(65536), 2u);
  // A size never seen in a window goes to the smallest sliced page (8.78 MiB on the H200).
  Reservation other = memory.Reserve(16384);
  ASSERT_EQ(backend_.device_alloc_sizes.size(), 3u);
  EXPECT_NEAR(static_cast<double>(backend_.device_alloc_sizes[2]), 8.78 * kMiB, 0.1 * kMiB);
  // Freed slots are reused: no further driver allocation.
  activation = Reservation{};
  Reservation again = memory.Reserve(65536);
  EXPECT_EQ(backend_.device_alloc_sizes.size(), 3u);
  (void)param;
  (void)other;
  (void)again;
}

TEST_F(MemoryManagementTest, WithoutSizeMatchOnlyWindowsCreateSlots) {
  MemoryManagement memory(&storage_, Config(/*size_match=*/false), &stats_);
  memory.SetMode(AllocationMode::kPersistent);
  Reservation param = memory.Reserve(65536);
  memory.SetMode(AllocationMode::kAuto);
  Reservation activation = memory.Reserve(65536);
  EXPECT_EQ(memory.persistent().BucketSize(65536), 1u);
  EXPECT_EQ(backend_.device_alloc_sizes.size(), 2u);  // the slot, then one sliced page
  EXPECT_GT(backend_.device_alloc_sizes[1], 65536u);
  (void)param;
  (void)activation;
}

TEST_F(MemoryManagementTest, DisabledPersistentPoolIgnoresWindows) {
  MemoryManagement memory(&storage_, Config(true, /*persistent=*/false), &stats_);
  memory.SetMode(AllocationMode::kPersistent);
  Reservation a = memory.Reserve(512);
  Reservation b = memory.Reserve(512);
  EXPECT_EQ(memory.persistent().slot_count(), 0u);
  EXPECT_EQ(backend_.device_alloc_sizes.size(), 1u);  // both slices of one page
  (void)a;
  (void)b;
}

TEST_F(MemoryManagementTest, ZeroSizedRequestsUseTheExclusivePool) {
  MemoryManagement memory(&storage_, Config(), &stats_);
  Reservation empty = memory.Reserve(0);
  ASSERT_EQ(backend_.device_alloc_sizes.size(), 1u);
  EXPECT_EQ(backend_.device_alloc_sizes[0], 512u);
  EXPECT_EQ(memory.pools()[0].pages().size(), 1u);
  (void)empty;
}

TEST_F(MemoryManagementTest, CleanupReturnsFreeSlotsAndFreePages) {
  MemoryManagement memory(&storage_, Config(), &stats_);
  memory.SetMode(AllocationMode::kPersistent);
  Reservation slot = memory.Reserve(4096);
  memory.SetMode(AllocationMode::kAuto);
  Reservation sliced = memory.Reserve(2048);
  slot = Reservation{};
  sliced = Reservation{};
  memory.Cleanup();
  EXPECT_EQ(backend_.device_frees, 2u);
  EXPECT_TRUE(backend_.device_live.empty());
  AllocatorStats gauges;
  memory.AddGauges(&gauges);
  EXPECT_EQ(gauges.persistent_slots, 0u);
  EXPECT_EQ(gauges.pages, 0u);
}

}  // namespace
}  // namespace cuclimb::workloads::cubecl
