// SPDX-License-Identifier: Apache-2.0
// Device tensors owned through a DeviceAllocator, and the launch helper that hands each kernel's
// metadata to the allocator first (the cubecl model's per-launch path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include <cuda_runtime_api.h>

#include "workloads/allocators/device_allocator.h"

namespace cuclimb::workloads {

// Where a network's work goes: its allocator and the stream every kernel is queued on.
struct Device {
  DeviceAllocator* allocator = nullptr;
  cudaStream_t stream = nullptr;
};

enum class DType { kF32, kI32 };

// A rows x cols matrix (a scalar is 1 x 1) whose memory comes from an allocator and goes back
// when the tensor dies, as Burn tensors do. Move-only.
class Tensor {
 public:
  Tensor() = default;
  static Tensor Empty(const Device& device, int rows, int cols, DType dtype = DType::kF32);
  ~Tensor() { Reset(); }
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  void Reset();
  explicit operator bool() const { return static_cast<bool>(allocation_); }

  float* f32() const { return reinterpret_cast<float*>(allocation_.address); }
  int32_t* i32() const { return reinterpret_cast<int32_t*>(allocation_.address); }
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  std::size_t numel() const { return static_cast<std::size_t>(rows_) * cols_; }
  std::size_t bytes() const { return numel() * 4; }

 private:
  DeviceAllocator* allocator_ = nullptr;
  Allocation allocation_;
  int rows_ = 0;
  int cols_ = 0;
};

// Identifies the kernel in its metadata (as a kernel id would in cubecl).
enum KernelId : uint32_t {
  kKernelGemm = 1,
  kKernelAddBias,
  kKernelActivation,
  kKernelActivationBackward,
  kKernelColumnSum,
  kKernelMseLoss,
  kKernelCrossEntropy,
  kKernelArgmax,
  kKernelAdam,
  kKernelFill,
  kKernelFillUniform,
};

// Calls `launch` after giving the allocator the launch's metadata: a 16-byte header and, per
// tensor argument, rank, shape, strides and offset (24 bytes), i.e. 40 to 208 bytes like
// cubecl's dynamic metadata.
template <typename Launch>
void LaunchKernel(const Device& device, uint32_t kernel_id,
                  std::initializer_list<const Tensor*> tensors, Launch&& launch);

namespace internal {
std::size_t BuildMetadata(uint32_t kernel_id, std::initializer_list<const Tensor*> tensors,
                          uint32_t* out, std::size_t capacity_words);
}  // namespace internal

template <typename Launch>
void LaunchKernel(const Device& device, uint32_t kernel_id,
                  std::initializer_list<const Tensor*> tensors, Launch&& launch) {
  uint32_t words[64];
  const std::size_t count = internal::BuildMetadata(kernel_id, tensors, words, 64);
  device.allocator->OnLaunch(words, count * sizeof(uint32_t));
  launch();
}

}  // namespace cuclimb::workloads
