// SPDX-License-Identifier: Apache-2.0
// The staging drop queue of cubecl's CUDA server: staging buffers stay alive until a fence
// passes, and every 64 entries (or 64 MiB) the host waits on the previous fence.
#pragma once

#include <cstddef>
#include <vector>

#include "workloads/allocators/cubecl/slice.h"
#include "workloads/allocators/device_allocator.h"
#include "workloads/allocators/memory_backend.h"

namespace cuclimb::workloads::cubecl {

class DropQueue {
 public:
  static constexpr std::size_t kMaxEntries = 64;  // drop_queue/policy.rs L16-22
  static constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

  DropQueue(MemoryBackend* backend, StreamHandle stream, AllocatorStats* stats,
            std::size_t max_entries = kMaxEntries, std::size_t max_bytes = kMaxBytes);
  // Waits for all queued work, so no staging buffer is released while a copy may read it.
  ~DropQueue();
  DropQueue(const DropQueue&) = delete;
  DropQueue& operator=(const DropQueue&) = delete;

  // Keeps `handle` alive until the GPU has passed a fence recorded after it. When the queue
  // reaches its limit: cuEventSynchronize(previous fence), cuEventDestroy, release what that
  // fence protected, then cuEventCreate + cuEventRecord a fence for the current entries. The
  // synchronize is where the host blocks until the GPU catches up, about every 64 launches.
  void Push(SliceHandle handle, std::size_t size_bytes);

  std::size_t pending() const { return pending_.size(); }
  std::size_t fenced() const { return fenced_.size(); }

 private:
  MemoryBackend* backend_;
  StreamHandle stream_;
  AllocatorStats* stats_;
  std::size_t max_entries_;
  std::size_t max_bytes_;
  std::vector<SliceHandle> pending_;
  std::size_t pending_bytes_ = 0;
  std::vector<SliceHandle> fenced_;
  EventHandle fence_ = nullptr;
};

}  // namespace cuclimb::workloads::cubecl
