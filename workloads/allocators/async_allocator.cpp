// SPDX-License-Identifier: Apache-2.0
// AsyncAllocator over the runtime's stream-ordered allocator.
#include "workloads/allocators/async_allocator.h"

#include <cuda_runtime_api.h>

#include "kernels/cuda_check.h"

namespace cuclimb::workloads {
namespace {

cudaStream_t AsStream(StreamHandle stream) {
  return static_cast<cudaStream_t>(stream);
}

}  // namespace

AsyncAllocator::AsyncAllocator(StreamHandle stream, uint64_t release_threshold_bytes,
                               bool private_pool)
    : stream_(stream), owns_pool_(private_pool) {
  int device = 0;
  CUCLIMB_CUDA_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool = nullptr;
  if (private_pool) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    CUCLIMB_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
  } else {
    CUCLIMB_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  }
  uint64_t threshold = release_threshold_bytes;
  CUCLIMB_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  pool_ = pool;
}

AsyncAllocator::~AsyncAllocator() {
  if (owns_pool_) {
    // Frees are stream-ordered: the pool may go only once they have run.
    cudaStreamSynchronize(AsStream(stream_));
    cudaMemPoolDestroy(static_cast<cudaMemPool_t>(pool_));
  }
}

Allocation AsyncAllocator::Allocate(std::size_t size_bytes) {
  void* pointer = nullptr;
  if (owns_pool_) {
    CUCLIMB_CUDA_CHECK(cudaMallocFromPoolAsync(
        &pointer, size_bytes, static_cast<cudaMemPool_t>(pool_), AsStream(stream_)));
  } else {
    CUCLIMB_CUDA_CHECK(cudaMallocAsync(&pointer, size_bytes, AsStream(stream_)));
  }
  ++stats_.reserves;
  ++stats_.device_allocs;
  ++stats_.live_handles;
  Allocation allocation;
  allocation.address = reinterpret_cast<uint64_t>(pointer);
  allocation.size_bytes = size_bytes;
  return allocation;
}

void AsyncAllocator::Free(Allocation allocation) {
  if (!allocation)
    return;
  CUCLIMB_CUDA_CHECK(cudaFreeAsync(reinterpret_cast<void*>(allocation.address), AsStream(stream_)));
  ++stats_.device_frees;
  --stats_.live_handles;
}

void AsyncAllocator::Cleanup() {
  CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(AsStream(stream_)));
  CUCLIMB_CUDA_CHECK(cudaMemPoolTrimTo(static_cast<cudaMemPool_t>(pool_), 0));
}

AllocatorStats AsyncAllocator::Stats() const {
  AllocatorStats stats = stats_;
  uint64_t reserved = 0;
  if (cudaMemPoolGetAttribute(static_cast<cudaMemPool_t>(pool_), cudaMemPoolAttrReservedMemCurrent,
                              &reserved) == cudaSuccess) {
    stats.reserved_bytes = reserved;
  }
  return stats;
}

}  // namespace cuclimb::workloads
