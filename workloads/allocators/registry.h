// SPDX-License-Identifier: Apache-2.0
// Builds the allocator chosen on the command line, with the backend it needs.
#pragma once

#include <memory>
#include <string>

#include "workloads/allocators/allocator_config.h"
#include "workloads/allocators/device_allocator.h"
#include "workloads/allocators/memory_backend.h"

namespace cuclimb::workloads {

// Owns the backend shared by every allocator instance it creates; must outlive them. Needs a
// current CUDA device.
class AllocatorFactory {
 public:
  explicit AllocatorFactory(const AllocatorConfig& config);
  ~AllocatorFactory();

  // A new, independent instance (its own pools). `label` names its NVTX memory domain.
  std::unique_ptr<DeviceAllocator> Create(StreamHandle stream, const std::string& label);
  // The same, but sharing no memory pool with any other instance: async gets a pool of its own
  // instead of the device's default one (the other kinds never share).
  std::unique_ptr<DeviceAllocator> CreatePrivate(StreamHandle stream, const std::string& label);

 private:
  AllocatorConfig config_;
  std::unique_ptr<MemoryBackend> backend_;
};

}  // namespace cuclimb::workloads
