// SPDX-License-Identifier: Apache-2.0
// The one interface behind which cuclimb-adam's tensors get device memory (direct, async,
// caching, cubecl), plus the counters every allocator reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cuclimb::workloads {

// An opaque stream (a cudaStream_t) so the bookkeeping builds and is tested without CUDA.
using StreamHandle = void*;

// A tensor's memory. `handle` is allocator-specific: the cubecl model stores its ref-counted
// slice handle there (freeing = dropping the reference, as with an Arc), the others leave it
// empty or keep a block id in `tag`.
struct Allocation {
  uint64_t address = 0;        // device address; 0 means "none"
  std::size_t size_bytes = 0;  // the size the tensor asked for
  std::shared_ptr<void> handle;
  uint64_t tag = 0;
  explicit operator bool() const { return address != 0; }
};

// Cumulative counters; `--stats` prints their per-iteration deltas (gauges are printed as is).
// Not every allocator fills every field.
struct AllocatorStats {
  // Driver/runtime traffic issued by the allocator.
  uint64_t device_allocs = 0;
  uint64_t device_frees = 0;
  uint64_t host_allocs = 0;
  uint64_t host_frees = 0;
  uint64_t event_waits = 0;
  // Work done by the bookkeeping (the cubecl model's cost signals).
  uint64_t reserves = 0;
  uint64_t slots_scanned = 0;
  uint64_t slices_scanned = 0;
  uint64_t coalesce_touched = 0;
  uint64_t pages_visited = 0;
  uint64_t metadata_launches = 0;
  // Gauges.
  uint64_t persistent_slots = 0;
  uint64_t largest_bucket_slots = 0;
  uint64_t pages = 0;
  uint64_t slices = 0;
  uint64_t dead_bytes = 0;
  uint64_t reserved_bytes = 0;
  uint64_t live_handles = 0;
};

class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;

  // Returns memory for `size_bytes` (> 0) usable by work queued on the allocator's stream.
  // Exits the program on a CUDA error (allocators serve programs).
  virtual Allocation Allocate(std::size_t size_bytes) = 0;

  // Gives the tensor's memory back. Work already queued on the stream may still use it: each
  // allocator stays stream-ordered (or synchronises, as cudaFree does).
  virtual void Free(Allocation allocation) = 0;

  // Called before every kernel launch with the launch's metadata (shapes and strides). Only the
  // cubecl model acts on it, staging and copying the bytes the way cubecl's CUDA server does.
  virtual void OnLaunch(const void* /*metadata*/, std::size_t /*size_bytes*/) {}

  // Brackets a parameter's initialisation (Burn's memory_persistent_allocations window).
  virtual void BeginPersistent() {}
  virtual void EndPersistent() {}

  // Explicit cleanup (Burn's memory_cleanup, PyTorch's empty_cache): returns what the allocator
  // is willing to return.
  virtual void Cleanup() {}

  virtual AllocatorStats Stats() const = 0;
  virtual std::string Name() const = 0;
};

}  // namespace cuclimb::workloads
