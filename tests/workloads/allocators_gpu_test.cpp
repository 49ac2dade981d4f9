// SPDX-License-Identifier: Apache-2.0
// Every allocator for real on the GPU: tensors filled by kernels through the launch path, read
// back intact, live allocations disjoint, memory reused, everything returned at the end.
#include <algorithm>
#include <memory>
#include <vector>

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include "kernels/kernels.h"
#include "workloads/adam/options.h"
#include "workloads/adam/tensor.h"
#include "workloads/allocators/async_allocator.h"
#include "workloads/allocators/cubecl/cubecl_allocator.h"
#include "workloads/allocators/cuda_backends.h"
#include "workloads/allocators/registry.h"

namespace cuclimb::workloads {
namespace {

struct Case {
  const char* name;
  AllocatorKind kind;
  bool nvtx_mem;
};

class AllocatorsGpuTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    CUCLIMB_CUDA_CHECK(cudaSetDevice(0));
    CUCLIMB_CUDA_CHECK(cudaFree(nullptr));
    CUCLIMB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  void TearDown() override { CUCLIMB_CUDA_CHECK(cudaStreamDestroy(stream_)); }
  cudaStream_t stream_ = nullptr;
};

std::vector<float> Download(const Tensor& t, cudaStream_t stream) {
  std::vector<float> host(t.numel());
  CUCLIMB_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), t.f32(), t.bytes(), cudaMemcpyDeviceToHost, stream));
  CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

TEST_P(AllocatorsGpuTest, TensorsHoldTheirDataAndDoNotOverlap) {
  AllocatorConfig config;
  config.kind = GetParam().kind;
  config.nvtx_mem = GetParam().nvtx_mem;
  config.cubecl.nvtx_mem = GetParam().nvtx_mem;
  AllocatorFactory factory(config);
  std::unique_ptr<DeviceAllocator> allocator = factory.Create(stream_, "test");
  const Device device{allocator.get(), stream_};
  const std::vector<std::pair<int, int>> shapes = {{1, 1},    {1, 8},      {64, 256}, {256, 256},
                                                   {1, 1000}, {1024, 768}, {3, 5}};
  for (int round = 0; round < 3; ++round) {
    std::vector<Tensor> tensors;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      if (round == 0)
        allocator->BeginPersistent();
      tensors.push_back(Tensor::Empty(device, shapes[i].first, shapes[i].second));
      if (round == 0)
        allocator->EndPersistent();
      Tensor& t = tensors.back();
      const float value = static_cast<float>(round * 100 + i);
      LaunchKernel(device, kKernelFill, {&t},
                   [&] { kernels::Fill(t.f32(), t.numel(), value, stream_); });
    }
    // Many more launches than the drop queue's 64, so the cubecl model fences and waits.
    for (int k = 0; k < 200; ++k) {
      Tensor& t = tensors[k % tensors.size()];
      LaunchKernel(device, kKernelActivation, {&t, &t}, [&] {
        kernels::ActivationForward(kernels::Activation::kRelu, t.f32(), t.f32(), t.numel(),
                                   stream_);
      });
    }
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const float value = static_cast<float>(round * 100 + i);
      const auto host = Download(tensors[i], stream_);
      ASSERT_TRUE(std::all_of(host.begin(), host.end(), [&](float x) { return x == value; }))
          << GetParam().name << " tensor " << i << " round " << round;
    }
    std::vector<std::pair<uint64_t, uint64_t>> ranges;
    for (const Tensor& t : tensors) {
      ranges.push_back({reinterpret_cast<uint64_t>(t.f32()), t.bytes()});
    }
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 1; i < ranges.size(); ++i) {
      EXPECT_LE(ranges[i - 1].first + ranges[i - 1].second, ranges[i].first) << GetParam().name;
    }
  }
  CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  const AllocatorStats stats = allocator->Stats();
  EXPECT_EQ(stats.live_handles, 0u) << GetParam().name;
  if (GetParam().kind == AllocatorKind::kCubecl) {
    EXPECT_GE(stats.event_waits, 1u);
    EXPECT_GT(stats.metadata_launches, 600u);
    EXPECT_GT(stats.persistent_slots, 0u);
  }
  if (GetParam().kind == AllocatorKind::kCaching) {
    // Rounds 2 and 3 reuse round 1's blocks.
    EXPECT_EQ(stats.device_allocs, shapes.size());
  }
  allocator->Cleanup();
}

INSTANTIATE_TEST_SUITE_P(All, AllocatorsGpuTest,
                         ::testing::Values(Case{"direct", AllocatorKind::kDirect, false},
                                           Case{"async", AllocatorKind::kAsync, false},
                                           Case{"caching", AllocatorKind::kCaching, false},
                                           Case{"caching_nvtx", AllocatorKind::kCaching, true},
                                           Case{"cubecl", AllocatorKind::kCubecl, false},
                                           Case{"cubecl_nvtx", AllocatorKind::kCubecl, true}),
                         [](const auto& test_info) { return std::string(test_info.param.name); });

// The reference twin's async allocator: its memory comes from a pool of its own.
TEST(AsyncAllocatorGpuTest, PrivatePoolLeavesTheDefaultPoolAlone) {
  CUCLIMB_CUDA_CHECK(cudaSetDevice(0));
  cudaStream_t stream = nullptr;
  CUCLIMB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaMemPool_t default_pool = nullptr;
  CUCLIMB_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&default_pool, 0));
  const auto default_used = [&] {
    CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(stream));
    uint64_t used = 0;
    CUCLIMB_CUDA_CHECK(cudaMemPoolGetAttribute(default_pool, cudaMemPoolAttrUsedMemCurrent, &used));
    return used;
  };
  const uint64_t before = default_used();
  {
    AsyncAllocator allocator(stream, 0, /*private_pool=*/true);
    const Allocation a = allocator.Allocate(std::size_t{4} << 20);
    ASSERT_NE(a.address, 0u);
    CUCLIMB_CUDA_CHECK(
        cudaMemsetAsync(reinterpret_cast<void*>(a.address), 0, a.size_bytes, stream));
    EXPECT_EQ(default_used(), before);
    EXPECT_GE(allocator.Stats().reserved_bytes, uint64_t{4} << 20);
    allocator.Free(a);
  }
  {
    AsyncAllocator shared(stream, 0);
    const Allocation a = shared.Allocate(std::size_t{4} << 20);
    EXPECT_GE(default_used(), before + (uint64_t{4} << 20));  // the test can tell the two apart
    shared.Free(a);
  }
  CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(stream));
  CUCLIMB_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(DriverBackendGpuTest, EntryPointsAllocateCopyAndFence) {
  CUCLIMB_CUDA_CHECK(cudaSetDevice(0));
  CUCLIMB_CUDA_CHECK(cudaFree(nullptr));
  cudaStream_t stream = nullptr;
  CUCLIMB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DriverBackend backend;
  EXPECT_TRUE(backend.uses_async_allocation());  // Hopper has memory pools
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  CUCLIMB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  EXPECT_EQ(backend.TotalDeviceMemory(), total_bytes);
  const uint64_t device = backend.DeviceAlloc(4096, stream);
  auto* host = static_cast<float*>(backend.HostAlloc(4096));
  for (int i = 0; i < 1024; ++i) host[i] = static_cast<float>(i);
  backend.CopyHostToDeviceAsync(device, host, 4096, stream);
  EventHandle fence = backend.EventCreate();
  backend.EventRecord(fence, stream);
  backend.EventSynchronize(fence);
  backend.EventDestroy(fence);
  std::vector<float> back(1024);
  CUCLIMB_CUDA_CHECK(cudaMemcpyAsync(back.data(), reinterpret_cast<void*>(device), 4096,
                                     cudaMemcpyDeviceToHost, stream));
  CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(back[i], static_cast<float>(i));
  backend.DeviceFree(device, stream);
  backend.HostFree(host);
  CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(stream));
  CUCLIMB_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace cuclimb::workloads
