// SPDX-License-Identifier: Apache-2.0
// Describes a pool's buffers and sub-allocations with the NVTX memory API (--nvtx-mem), the way
// RMM makes its pool visible: a heap per backing buffer, a region per live tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace cuclimb::workloads {

// Header-only NVTX3: without a tool attached (NVTX_INJECTION64_PATH unset) every call returns at
// once, so the tracker costs only its own map updates. Not thread-safe: one tracker per
// allocator, used from the allocator's thread.
class NvtxMemTracker {
 public:
  // `domain_name` groups the heaps in the tool's view ("cuclimb-adam/cubecl").
  explicit NvtxMemTracker(const std::string& domain_name);
  ~NvtxMemTracker();
  NvtxMemTracker(const NvtxMemTracker&) = delete;
  NvtxMemTracker& operator=(const NvtxMemTracker&) = delete;

  // A backing buffer (page, persistent slot, cached segment) became / stopped being a heap.
  // Unregistering a heap drops its regions too (NVTX semantics).
  void RegisterHeap(uint64_t base, uint64_t size_bytes);
  void UnregisterHeap(uint64_t base);

  // A tensor's sub-allocation inside the heap based at `heap_base`.
  void RegisterRegion(uint64_t heap_base, uint64_t address, uint64_t size_bytes);
  void UnregisterRegion(uint64_t address);

  std::size_t heaps() const { return heaps_.size(); }
  std::size_t regions() const { return regions_; }

 private:
  void* domain_ = nullptr;                     // nvtxDomainHandle_t
  std::unordered_map<uint64_t, void*> heaps_;  // base -> nvtxMemHeapHandle_t
  std::size_t regions_ = 0;
};

}  // namespace cuclimb::workloads
