// SPDX-License-Identifier: Apache-2.0
// NVTX memory-extension calls for --nvtx-mem (heaps and regions in virtual-address form).
#include "workloads/allocators/nvtx_mem.h"

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

namespace cuclimb::workloads {
namespace {

nvtxDomainHandle_t Domain(void* domain) {
  return static_cast<nvtxDomainHandle_t>(domain);
}

}  // namespace

NvtxMemTracker::NvtxMemTracker(const std::string& domain_name)
    : domain_(nvtxDomainCreateA(domain_name.c_str())) {}

NvtxMemTracker::~NvtxMemTracker() {
  for (const auto& [base, heap] : heaps_) {
    nvtxMemHeapUnregister(Domain(domain_), static_cast<nvtxMemHeapHandle_t>(heap));
  }
  nvtxDomainDestroy(Domain(domain_));
}

void NvtxMemTracker::RegisterHeap(uint64_t base, uint64_t size_bytes) {
  nvtxMemVirtualRangeDesc_t range{};
  range.ptr = reinterpret_cast<const void*>(base);
  range.size = size_bytes;
  nvtxMemHeapDesc_t desc{};
  desc.extCompatID = NVTX_EXT_COMPATID_MEM;
  desc.structSize = sizeof(desc);
  desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
  desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  desc.typeSpecificDescSize = sizeof(range);
  desc.typeSpecificDesc = &range;
  heaps_[base] = nvtxMemHeapRegister(Domain(domain_), &desc);
}

void NvtxMemTracker::UnregisterHeap(uint64_t base) {
  const auto it = heaps_.find(base);
  if (it == heaps_.end())
    return;
  nvtxMemHeapUnregister(Domain(domain_), static_cast<nvtxMemHeapHandle_t>(it->second));
  heaps_.erase(it);
}

void NvtxMemTracker::RegisterRegion(uint64_t heap_base, uint64_t address, uint64_t size_bytes) {
  const auto it = heaps_.find(heap_base);
  if (it == heaps_.end())
    return;
  nvtxMemVirtualRangeDesc_t range{};
  range.ptr = reinterpret_cast<const void*>(address);
  range.size = size_bytes;
  nvtxMemRegionsRegisterBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof(batch);
  batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  batch.heap = static_cast<nvtxMemHeapHandle_t>(it->second);
  batch.regionCount = 1;
  batch.regionDescElementSize = sizeof(range);
  batch.regionDescElements = &range;
  nvtxMemRegionsRegister(Domain(domain_), &batch);
  ++regions_;
}

void NvtxMemTracker::UnregisterRegion(uint64_t address) {
  nvtxMemRegionRef_t ref{};
  ref.pointer = reinterpret_cast<const void*>(address);
  nvtxMemRegionsUnregisterBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof(batch);
  batch.refType = NVTX_MEM_REGION_REF_TYPE_POINTER;
  batch.refCount = 1;
  batch.refElementSize = sizeof(ref);
  batch.refElements = &ref;
  nvtxMemRegionsUnregister(Domain(domain_), &batch);
  if (regions_ > 0)
    --regions_;
}

}  // namespace cuclimb::workloads
