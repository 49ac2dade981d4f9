// SPDX-License-Identifier: Apache-2.0
// --allocator=caching: size-binned, stream-aware free lists that keep every block, the way
// framework caching allocators (PyTorch's CUDACachingAllocator) avoid cudaMalloc after warm-up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "workloads/allocators/device_allocator.h"
#include "workloads/allocators/memory_backend.h"
#include "workloads/allocators/nvtx_mem.h"

namespace cuclimb::workloads {

class CachingAllocator final : public DeviceAllocator {
 public:
  // Requests up to 1 MiB are binned by 512 bytes, larger ones by 2 MiB (PyTorch's small/large
  // split and rounding, without block splitting: one backend allocation per block).
  static constexpr std::size_t kSmallLimit = std::size_t{1} << 20;
  static constexpr std::size_t kSmallRound = 512;
  static constexpr std::size_t kLargeRound = std::size_t{2} << 20;

  // `backend` (cudaMalloc/cudaFree on the GPU) must outlive the allocator.
  CachingAllocator(MemoryBackend* backend, StreamHandle stream, bool nvtx_mem);
  // Returns every block to the backend.
  ~CachingAllocator() override;

  // Pops a cached block of the same bin and stream, else allocates one.
  Allocation Allocate(std::size_t size_bytes) override;
  // Pushes the block onto its (stream, bin) free list; never returns memory. Reuse is safe
  // without events because a block is only reused on the stream that freed it.
  void Free(Allocation allocation) override;
  // empty_cache(): releases every cached (free) block.
  void Cleanup() override;
  AllocatorStats Stats() const override;
  std::string Name() const override { return "caching"; }

  static std::size_t BinSize(std::size_t size_bytes);
  std::size_t cached_blocks() const;

 private:
  using BinKey = std::pair<StreamHandle, std::size_t>;
  MemoryBackend* backend_;
  StreamHandle stream_;
  std::unique_ptr<NvtxMemTracker> nvtx_;
  std::map<BinKey, std::vector<uint64_t>> free_lists_;
  std::unordered_map<uint64_t, std::size_t> block_sizes_;  // every block we own -> bin size
  AllocatorStats stats_;
};

}  // namespace cuclimb::workloads
