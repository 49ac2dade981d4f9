// SPDX-License-Identifier: Apache-2.0
// --allocator=async: cudaMallocAsync/cudaFreeAsync on the device's default memory pool.
#pragma once

#include <cstddef>
#include <cstdint>

#include "workloads/allocators/device_allocator.h"

namespace cuclimb::workloads {

// The driver's stream-ordered pool does the caching. The release threshold says how many unused
// bytes the pool keeps across synchronisations (0, the driver default, returns them at every
// synchronisation; UINT64_MAX keeps everything).
class AsyncAllocator final : public DeviceAllocator {
 public:
  // Sets the release threshold of the current device's default pool, or with private_pool of a
  // pool created for this instance alone (cudaMallocFromPoolAsync). Needs a GPU.
  AsyncAllocator(StreamHandle stream, uint64_t release_threshold_bytes, bool private_pool = false);
  ~AsyncAllocator() override;

  Allocation Allocate(std::size_t size_bytes) override;
  void Free(Allocation allocation) override;
  // cudaMemPoolTrimTo(pool, 0) after a stream synchronisation.
  void Cleanup() override;
  AllocatorStats Stats() const override;
  std::string Name() const override { return "async"; }

 private:
  StreamHandle stream_;
  void* pool_ = nullptr;  // cudaMemPool_t
  bool owns_pool_ = false;
  AllocatorStats stats_;
};

}  // namespace cuclimb::workloads
