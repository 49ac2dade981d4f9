// SPDX-License-Identifier: Apache-2.0
// DropQueue: a fence every 64 staging buffers (or 64 MiB), a host wait on the previous fence.
#include "workloads/allocators/cubecl/drop_queue.h"

#include <gtest/gtest.h>

#include "tests/workloads/fake_backend.h"

namespace cuclimb::workloads::cubecl {
namespace {

using testing::FakeBackend;

TEST(DropQueueTest, FencesEvery64EntriesAndWaitsOnThePreviousFence) {
  FakeBackend backend;
  AllocatorStats stats;
  DropQueue queue(&backend, nullptr, &stats);
  std::vector<SliceHandle> watched;
  for (int i = 0; i < 63; ++i) {
    SliceHandle handle = NewSliceHandle();
    watched.push_back(handle);
    queue.Push(handle, 64);
  }
  EXPECT_EQ(backend.events_created, 0u);
  queue.Push(NewSliceHandle(), 64);  // 64th: first fence, nothing to wait for yet
  EXPECT_EQ(backend.events_created, 1u);
  EXPECT_EQ(backend.events_recorded, 1u);
  EXPECT_EQ(backend.events_synchronized, 0u);
  EXPECT_EQ(watched[0].use_count(), 2);  // still held: its copy is behind the fence
  for (int i = 0; i < 64; ++i) queue.Push(NewSliceHandle(), 64);
  EXPECT_EQ(backend.events_created, 2u);
  EXPECT_EQ(backend.events_synchronized, 1u);
  EXPECT_EQ(backend.events_destroyed, 1u);
  EXPECT_EQ(stats.event_waits, 1u);
  EXPECT_EQ(watched[0].use_count(), 1);  // released once the fence passed
  EXPECT_EQ(queue.pending(), 0u);
  EXPECT_EQ(queue.fenced(), 64u);
}

TEST(DropQueueTest, FencesAt64MiB) {
  FakeBackend backend;
  AllocatorStats stats;
  DropQueue queue(&backend, nullptr, &stats);
  queue.Push(NewSliceHandle(), 40 << 20);
  EXPECT_EQ(backend.events_created, 0u);
  queue.Push(NewSliceHandle(), 40 << 20);
  EXPECT_EQ(backend.events_created, 1u);
}

TEST(DropQueueTest, DestructorWaitsForEverything) {
  FakeBackend backend;
  AllocatorStats stats;
  {
    DropQueue queue(&backend, nullptr, &stats);
    for (int i = 0; i < 70; ++i) queue.Push(NewSliceHandle(), 64);
  }
  EXPECT_EQ(backend.events_created, backend.events_destroyed);
  EXPECT_GE(backend.events_synchronized, 1u);
}

}  // namespace
}  // namespace cuclimb::workloads::cubecl
