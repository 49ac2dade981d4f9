// SPDX-License-Identifier: Apache-2.0
// AllocatorFactory: maps Options to an allocator and its backend.
#include "workloads/allocators/registry.h"

#include "workloads/allocators/async_allocator.h"
#include "workloads/allocators/caching_allocator.h"
#include "workloads/allocators/cubecl/cubecl_allocator.h"
#include "workloads/allocators/cuda_backends.h"
#include "workloads/allocators/direct_allocator.h"

namespace cuclimb::workloads {

AllocatorFactory::AllocatorFactory(const AllocatorConfig& config) : config_(config) {
  switch (config.kind) {
    case AllocatorKind::kCubecl:
      backend_ = std::make_unique<DriverBackend>();
      break;
    case AllocatorKind::kDirect:
    case AllocatorKind::kCaching:
      backend_ = std::make_unique<RuntimeBackend>();
      break;
    case AllocatorKind::kAsync:
      break;  // the runtime's stream-ordered allocator needs no backend
  }
}

AllocatorFactory::~AllocatorFactory() = default;

std::unique_ptr<DeviceAllocator> AllocatorFactory::Create(StreamHandle stream,
                                                          const std::string& label) {
  switch (config_.kind) {
    case AllocatorKind::kDirect:
      return std::make_unique<DirectAllocator>(backend_.get(), stream);
    case AllocatorKind::kAsync:
      return std::make_unique<AsyncAllocator>(stream, config_.release_threshold_bytes);
    case AllocatorKind::kCaching:
      return std::make_unique<CachingAllocator>(backend_.get(), stream, config_.nvtx_mem);
    case AllocatorKind::kCubecl: {
      cubecl::CubeclOptions cubecl = config_.cubecl;
      cubecl.label = "cubecl/" + label;
      return std::make_unique<cubecl::CubeclAllocator>(backend_.get(), stream, cubecl);
    }
  }
  return nullptr;
}

std::unique_ptr<DeviceAllocator> AllocatorFactory::CreatePrivate(StreamHandle stream,
                                                                 const std::string& label) {
  if (config_.kind == AllocatorKind::kAsync) {
    return std::make_unique<AsyncAllocator>(stream, config_.release_threshold_bytes,
                                            /*private_pool=*/true);
  }
  return Create(stream, label);
}

}  // namespace cuclimb::workloads
