// SPDX-License-Identifier: Apache-2.0
// Tensor lifetime and kernel metadata encoding.
#include "workloads/adam/tensor.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace cuclimb::workloads {

Tensor Tensor::Empty(const Device& device, int rows, int cols, DType /*dtype*/) {
  Tensor tensor;
  tensor.allocator_ = device.allocator;
  tensor.rows_ = rows;
  tensor.cols_ = cols;
  // Both dtypes are 4 bytes wide.
  tensor.allocation_ = device.allocator->Allocate(tensor.bytes());
  return tensor;
}

Tensor::Tensor(Tensor&& other) noexcept
    : allocator_(other.allocator_),
      allocation_(std::move(other.allocation_)),
      rows_(other.rows_),
      cols_(other.cols_) {
  other.allocation_ = Allocation{};
  other.allocator_ = nullptr;
}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    Reset();
    allocator_ = other.allocator_;
    allocation_ = std::move(other.allocation_);
    rows_ = other.rows_;
    cols_ = other.cols_;
    other.allocation_ = Allocation{};
    other.allocator_ = nullptr;
  }
  return *this;
}

void Tensor::Reset() {
  if (allocation_ && allocator_ != nullptr)
    allocator_->Free(std::move(allocation_));
  allocation_ = Allocation{};
  allocator_ = nullptr;
}

namespace internal {

std::size_t BuildMetadata(uint32_t kernel_id, std::initializer_list<const Tensor*> tensors,
                          uint32_t* out, std::size_t capacity_words) {
  constexpr std::size_t kHeaderWords = 4;
  constexpr std::size_t kWordsPerTensor = 6;
  const std::size_t needed = kHeaderWords + kWordsPerTensor * tensors.size();
  if (needed > capacity_words) {
    std::fprintf(stderr, "kernel %u has too many tensor arguments for its metadata\n", kernel_id);
    std::abort();
  }
  std::size_t w = 0;
  out[w++] = kernel_id;
  out[w++] = static_cast<uint32_t>(tensors.size());
  out[w++] = 0;
  out[w++] = 0;
  for (const Tensor* tensor : tensors) {
    out[w++] = 2;  // rank
    out[w++] = static_cast<uint32_t>(tensor->rows());
    out[w++] = static_cast<uint32_t>(tensor->cols());
    out[w++] = static_cast<uint32_t>(tensor->cols());  // row stride
    out[w++] = 1;                                      // column stride
    out[w++] = 0;                                      // offset
  }
  return w;
}

}  // namespace internal
}  // namespace cuclimb::workloads
