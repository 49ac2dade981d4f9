// SPDX-License-Identifier: Apache-2.0
// CubeclAllocator on the fake backend: the metadata path, persistent windows, and the report's
// pattern replayed on the CPU (retention climbs, separate pools stay flat, cleanup doesn't cure).
#include "workloads/allocators/cubecl/cubecl_allocator.h"

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "tests/workloads/fake_backend.h"

namespace cuclimb::workloads::cubecl {
namespace {

using testing::FakeBackend;

void Launch(DeviceAllocator& allocator, std::size_t metadata_bytes) {
  const uint8_t metadata[256] = {};
  allocator.OnLaunch(metadata, metadata_bytes);
}

TEST(CubeclAllocatorTest, MetadataPathStagesCopiesAndDropsTheGpuBuffer) {
  FakeBackend backend;
  CubeclAllocator allocator(&backend, nullptr, CubeclOptions{});
  Launch(allocator, 88);
  // One pinned page (the smallest ladder page) and one GPU page for the unaligned 88 bytes.
  ASSERT_EQ(backend.host_alloc_sizes.size(), 1u);
  ASSERT_EQ(backend.copies.size(), 1u);
  EXPECT_EQ(backend.copies[0].size_bytes, 88u);
  ASSERT_EQ(backend.device_alloc_sizes.size(), 1u);
  // The GPU handle was dropped at once: the next launch reuses the same bytes.
  Launch(allocator, 88);
  ASSERT_EQ(backend.copies.size(), 2u);
  EXPECT_EQ(backend.copies[1].dst, backend.copies[0].dst);
  EXPECT_EQ(backend.device_alloc_sizes.size(), 1u);
  EXPECT_EQ(allocator.Stats().metadata_launches, 2u);
}

TEST(CubeclAllocatorTest, MetadataGoesToThe512BucketOnceItExists) {
  FakeBackend backend;
  CubeclAllocator allocator(&backend, nullptr, CubeclOptions{});
  allocator.BeginPersistent();
  Allocation bias = allocator.Allocate(32);  // rounded to 512: creates the 512 bucket
  Launch(allocator, 40);                     // inside the window: another 512 slot
  allocator.EndPersistent();
  EXPECT_EQ(allocator.gpu().persistent().BucketSize(512), 2u);
  const std::size_t allocs = backend.device_alloc_sizes.size();
  Launch(allocator, 120);  // outside: has_size(120 -> 512) finds the freed metadata slot
  EXPECT_EQ(backend.device_alloc_sizes.size(), allocs);
  EXPECT_EQ(allocator.gpu().persistent().BucketSize(512), 2u);
  allocator.Free(std::move(bias));
}

TEST(CubeclAllocatorTest, FreeIsOnlyAReferenceDrop) {
  FakeBackend backend;
  CubeclAllocator allocator(&backend, nullptr, CubeclOptions{});
  Allocation a = allocator.Allocate(1 << 20);
  const uint64_t address = a.address;
  allocator.Free(std::move(a));
  EXPECT_EQ(backend.device_frees, 0u);
  EXPECT_EQ(allocator.Stats().live_handles, 0u);
  Allocation b = allocator.Allocate(1 << 20);
  EXPECT_EQ(b.address, address);
  allocator.Free(std::move(b));
}

TEST(CubeclAllocatorTest, DestructionReturnsEveryBuffer) {
  FakeBackend backend;
  {
    CubeclAllocator allocator(&backend, nullptr, CubeclOptions{});
    allocator.BeginPersistent();
    Allocation a = allocator.Allocate(4096);
    allocator.EndPersistent();
    for (int i = 0; i < 100; ++i) Launch(allocator, 64);
    allocator.Free(std::move(a));
  }
  EXPECT_TRUE(backend.device_live.empty());
  EXPECT_EQ(backend.host_frees, backend.host_alloc_sizes.size());
  EXPECT_EQ(backend.bad_frees, 0u);
  EXPECT_EQ(backend.events_created, backend.events_destroyed);
}

// A CPU replay of cuclimb-adam's allocation trace for dims 64,256,256,8, batch 64: parameters in
// windows, activations and gradients per step, Burn-style out-of-place Adam, a metadata launch
// per kernel, and the ephemeral network built and dropped per cycle.
class ReplayNet {
 public:
  ReplayNet(DeviceAllocator* allocator, bool window) : allocator_(allocator) {
    for (const std::size_t size : ParamSizes()) {
      if (window)
        allocator_->BeginPersistent();
      params_.push_back(allocator_->Allocate(size));
      Launch(*allocator_, 40);
      if (window)
        allocator_->EndPersistent();
    }
  }
  ~ReplayNet() { Drop(); }

  // Forward and backward: returns the loss scalar; gradients stay for Optimize().
  Allocation ForwardBackward() {
    std::vector<Allocation> live;
    live.push_back(Alloc(64 * 64 * 4, 40));  // x
    live.push_back(Alloc(64 * 8 * 4, 88));   // teacher logits
    for (const std::size_t size :
         {64 * 256 * 4, 64 * 256 * 4, 64 * 256 * 4, 64 * 256 * 4, 64 * 8 * 4}) {
      live.push_back(Alloc(size, 88));
    }
    live.push_back(Alloc(64 * 8 * 4, 64));  // target
    Allocation loss = Alloc(4, 112);
    live.push_back(Alloc(64 * 8 * 4, 0));  // dout (written by the loss launch)
    for (const std::size_t size : ParamSizes()) grads_.push_back(Alloc(size, 88));
    for (Allocation& a : live) allocator_->Free(std::move(a));
    return loss;
  }

  void Optimize() {
    if (m_.empty()) {
      for (const std::size_t size : ParamSizes()) {
        m_.push_back(Alloc(size, 40));
        v_.push_back(Alloc(size, 40));
      }
    }
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const std::size_t size = ParamSizes()[i];
      Allocation m = allocator_->Allocate(size);
      Allocation v = allocator_->Allocate(size);
      Allocation update = allocator_->Allocate(size);
      Allocation param = allocator_->Allocate(size);
      Launch(*allocator_, 208);
      allocator_->Free(std::move(m_[i]));
      allocator_->Free(std::move(v_[i]));
      allocator_->Free(std::move(params_[i]));
      allocator_->Free(std::move(update));
      allocator_->Free(std::move(grads_[i]));
      m_[i] = std::move(m);
      v_[i] = std::move(v);
      params_[i] = std::move(param);
    }
    grads_.clear();
  }

  void Drop() {
    for (auto* list : {&params_, &m_, &v_, &grads_}) {
      for (Allocation& a : *list) {
        if (a)
          allocator_->Free(std::move(a));
      }
      list->clear();
    }
  }

 private:
  static const std::vector<std::size_t>& ParamSizes() {
    static const std::vector<std::size_t> sizes = {64 * 256 * 4, 256 * 4,     256 * 256 * 4,
                                                   256 * 4,      256 * 8 * 4, 8 * 4};
    return sizes;
  }
  Allocation Alloc(std::size_t size, std::size_t metadata_bytes) {
    Allocation a = allocator_->Allocate(size);
    if (metadata_bytes > 0)
      Launch(*allocator_, metadata_bytes);
    return a;
  }
  DeviceAllocator* allocator_;
  std::vector<Allocation> params_, m_, v_, grads_;
};

struct ReplayConfig {
  int cycles = 120;
  int inner = 10;
  int ephemeral_steps = 10;
  int retain_tiny = 0;
  bool separate_pools = false;
  bool cleanup = false;
  CubeclOptions options;
};

// Allocator work (slots + slices scanned + slices touched by rebuilds) inside the persistent
// network's optimizer steps, per cycle: the quantity behind the report's `st`.
struct ReplayResult {
  std::vector<uint64_t> cost;
  std::vector<uint64_t> device_allocs;
  std::size_t bucket_512 = 0;
};

uint64_t Work(const AllocatorStats& s) {
  return s.slots_scanned + s.slices_scanned + s.coalesce_touched;
}

ReplayResult Replay(const ReplayConfig& config) {
  FakeBackend backend;
  CubeclAllocator shared(&backend, nullptr, config.options);
  std::unique_ptr<CubeclAllocator> separate;
  if (config.separate_pools) {
    separate = std::make_unique<CubeclAllocator>(&backend, nullptr, config.options);
  }
  DeviceAllocator* ephemeral_allocator = separate ? separate.get() : &shared;
  ReplayResult result;
  std::vector<Allocation> retained;
  {
    ReplayNet persistent(&shared, config.options.persistent_window);
    for (int cycle = 0; cycle < config.cycles; ++cycle) {
      uint64_t cost = 0;
      const std::size_t allocs_before = backend.device_alloc_sizes.size();
      ReplayNet ephemeral(ephemeral_allocator, config.options.persistent_window);
      for (int s = 0; s < config.inner; ++s) {
        Allocation loss = persistent.ForwardBackward();
        const uint64_t before = Work(shared.Stats());
        persistent.Optimize();
        cost += Work(shared.Stats()) - before;
        shared.Free(std::move(loss));
        if (s >= config.ephemeral_steps)
          continue;
        Allocation eloss = ephemeral.ForwardBackward();
        ephemeral.Optimize();
        if (s >= config.ephemeral_steps - config.retain_tiny) {
          retained.push_back(std::move(eloss));
        } else {
          ephemeral_allocator->Free(std::move(eloss));
        }
      }
      ephemeral.Drop();
      if (config.cleanup)
        ephemeral_allocator->Cleanup();
      result.cost.push_back(cost);
      result.device_allocs.push_back(backend.device_alloc_sizes.size() - allocs_before);
    }
    result.bucket_512 = shared.gpu().persistent().BucketSize(512);
  }
  for (Allocation& a : retained) ephemeral_allocator->Free(std::move(a));
  return result;
}

double Average(const std::vector<uint64_t>& values, std::size_t begin, std::size_t end) {
  double sum = 0;
  for (std::size_t i = begin; i < end; ++i) sum += static_cast<double>(values[i]);
  return sum / static_cast<double>(end - begin);
}

TEST(CubeclReplayTest, ClimbWithoutRetentionIsStationary) {
  const ReplayResult result = Replay(ReplayConfig{});
  const double early = Average(result.cost, 5, 15);
  const double late = Average(result.cost, 110, 120);
  EXPECT_NEAR(late, early, early * 0.05);
  // A healthy run makes no driver allocations once warmed up.
  EXPECT_EQ(Average(result.device_allocs, 60, 120), 0.0);
}

TEST(CubeclReplayTest, RetainedTinyTensorsGrowThe512BucketAndTheCost) {
  ReplayConfig config;
  config.retain_tiny = 2;
  const ReplayResult result = Replay(config);
  const double early = Average(result.cost, 5, 15);
  const double late = Average(result.cost, 110, 120);
  EXPECT_GT(late, early * 2.0);
  // Two retained slots per cycle: the bucket grows by about 2 per cycle, each slot one
  // 512-byte driver allocation, with no matching free.
  EXPECT_GE(result.bucket_512, 2u * 120u);
  EXPECT_GT(Average(result.device_allocs, 60, 120), 1.5);
  // Monotone in the long run: each decile costs more than the one before.
  for (int d = 1; d < 12; ++d) {
    EXPECT_GT(Average(result.cost, d * 10, d * 10 + 10), Average(result.cost, d * 10 - 10, d * 10))
        << "decile " << d;
  }
}

TEST(CubeclReplayTest, SeparatePoolsKeepThePersistentNetworkFlat) {
  ReplayConfig config;
  config.retain_tiny = 2;
  config.separate_pools = true;
  const ReplayResult result = Replay(config);
  const double early = Average(result.cost, 5, 15);
  const double late = Average(result.cost, 110, 120);
  EXPECT_NEAR(late, early, early * 0.05);
}

TEST(CubeclReplayTest, CleanupEachCycleDoesNotCureRetention) {
  ReplayConfig config;
  config.retain_tiny = 2;
  config.cleanup = true;
  const ReplayResult result = Replay(config);
  EXPECT_GT(Average(result.cost, 110, 120), Average(result.cost, 5, 15) * 2.0);
  // And it costs driver traffic every cycle: the freed slots are allocated again.
  EXPECT_GT(Average(result.device_allocs, 60, 120), 10.0);
}

TEST(CubeclReplayTest, FewerEphemeralStepsDoNotShrinkTheAbsoluteGrowth) {
  ReplayConfig full;
  full.retain_tiny = 2;
  const ReplayResult a = Replay(full);
  // The retention is per cycle, not per step: the late-minus-early growth is about the same.
  ReplayConfig half = full;
  half.ephemeral_steps = 5;
  const ReplayResult b = Replay(half);
  const double growth_a = Average(a.cost, 110, 120) - Average(a.cost, 5, 15);
  const double growth_b = Average(b.cost, 110, 120) - Average(b.cost, 5, 15);
  EXPECT_NEAR(growth_b, growth_a, growth_a * 0.2);
}

}  // namespace
}  // namespace cuclimb::workloads::cubecl
