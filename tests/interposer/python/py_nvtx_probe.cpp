// SPDX-License-Identifier: Apache-2.0
// A native library that Python test programs call through ctypes: each call registers one NVTX
// memory region, which libcuclimb.so (the NVTX injection) records with a stack, as it would
// record a CUDA allocation made by an extension. No GPU involved.
#include <cstddef>
#include <cstdint>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

extern "C" {
__attribute__((visibility("default"))) void py_probe_region(uint64_t size);
__attribute__((visibility("default"))) void py_probe_call(void (*callback)());
}

namespace {

char g_arena[1 << 20];

nvtxDomainHandle_t Domain() {
  static nvtxDomainHandle_t domain = nvtxDomainCreateA("py-probe");
  return domain;
}

nvtxMemHeapHandle_t Heap() {
  static nvtxMemHeapHandle_t heap = [] {
    nvtxMemVirtualRangeDesc_t range{sizeof(g_arena), g_arena};
    nvtxMemHeapDesc_t desc{};
    desc.extCompatID = NVTX_EXT_COMPATID_MEM;
    desc.structSize = sizeof(desc);
    desc.usage = NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR;
    desc.type = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
    desc.typeSpecificDescSize = sizeof(range);
    desc.typeSpecificDesc = &range;
    desc.messageType = NVTX_MESSAGE_TYPE_ASCII;
    desc.message.ascii = "py-probe";
    return nvtxMemHeapRegister(Domain(), &desc);
  }();
  return heap;
}

__attribute__((noinline)) void Register(uint64_t size) {
  nvtxMemVirtualRangeDesc_t region{size, g_arena + (size % 4096) * 64};
  nvtxMemRegionHandle_t handle{};
  nvtxMemRegionsRegisterBatch_t batch{};
  batch.extCompatID = NVTX_EXT_COMPATID_MEM;
  batch.structSize = sizeof(batch);
  batch.regionType = NVTX_MEM_TYPE_VIRTUAL_ADDRESS;
  batch.heap = Heap();
  batch.regionCount = 1;
  batch.regionDescElementSize = sizeof(region);
  batch.regionDescElements = &region;
  batch.regionHandleElementsOut = &handle;
  nvtxMemRegionsRegister(Domain(), &batch);
  asm volatile("" ::: "memory");
}

}  // namespace

// Registers a region of `size` bytes (the size tells the test which call it was).
void py_probe_region(uint64_t size) {
  Register(size);
  asm volatile("" ::: "memory");
}

// Calls back into Python (a ctypes callback), as an extension running a hook would.
void py_probe_call(void (*callback)()) {
  callback();
  asm volatile("" ::: "memory");
}
