// SPDX-License-Identifier: Apache-2.0
// Which streams are capturing a CUDA graph right now. Every CUDA query cuclimb makes asks here
// first.
//
// Queries wait for capture to end: on CUDA 13.0 a cuMemPoolGetAttribute made while another thread
// captured in global mode returned 900 (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) and invalidated the
// application's graph (shared/notes/cupti-cuda13.md §7). The counts come from the EXIT callbacks
// of cuStreamBeginCapture* (on success) and cuStreamEndCapture* (always: a capture sequence ends
// even when it was invalidated). Allocations on a capturing stream become graph allocations.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cuclimb::interposer {

class CaptureState {
 public:
  static constexpr size_t kSlots = 64;

  // Hot path (capture EXIT callbacks). Lock-free.
  void Begin(uint64_t stream) noexcept;
  void End(uint64_t stream) noexcept;

  // Number of captures under way (0 almost always: one relaxed load).
  int Active() const noexcept { return active_.load(std::memory_order_acquire); }
  // True when stream is capturing. Scans only while a capture is under way.
  bool IsCapturing(uint64_t stream) const noexcept;
  // Ever seen a capture (for reports).
  uint64_t total() const noexcept { return total_.load(std::memory_order_relaxed); }

  void ResetForTesting() noexcept;

 private:
  std::atomic<int> active_{0};
  std::atomic<uint64_t> total_{0};
  std::atomic<int64_t> overflow_{0};
  std::atomic<uint64_t> streams_[kSlots] = {};
};

CaptureState& Captures() noexcept;

}  // namespace cuclimb::interposer
