// SPDX-License-Identifier: Apache-2.0
// Capture bookkeeping of capture_state.h.
#include "interposer/capture_state.h"

namespace cuclimb::interposer {

// A stream handle of 0 (the legacy default stream cannot capture, but a 0 from a broken call
// must not match an empty slot) is stored as this sentinel.
constexpr uint64_t kNullStreamKey = ~uint64_t{0};

void CaptureState::Begin(uint64_t stream) noexcept {
  const uint64_t key = stream != 0 ? stream : kNullStreamKey;
  active_.fetch_add(1, std::memory_order_acq_rel);
  total_.fetch_add(1, std::memory_order_relaxed);
  for (auto& slot : streams_) {
    uint64_t expected = 0;
    if (slot.compare_exchange_strong(expected, key, std::memory_order_acq_rel))
      return;
  }
  // More than kSlots concurrent captures: counted, but IsCapturing misses the extra streams.
  overflow_.fetch_add(1, std::memory_order_relaxed);
}

void CaptureState::End(uint64_t stream) noexcept {
  const uint64_t key = stream != 0 ? stream : kNullStreamKey;
  bool found = false;
  for (auto& slot : streams_) {
    uint64_t expected = key;
    if (slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) {
      found = true;
      break;
    }
  }
  if (!found) {
    // An overflowed Begin, or an End without a Begin we saw (capture begun before cuclimb
    // attached, or while paused): only the former counts.
    int64_t o = overflow_.load(std::memory_order_relaxed);
    bool took = false;
    while (o > 0 && !(took = overflow_.compare_exchange_weak(o, o - 1))) {
    }
    if (!took)
      return;
  }
  int n = active_.load(std::memory_order_relaxed);
  while (n > 0 && !active_.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) {
  }
}

bool CaptureState::IsCapturing(uint64_t stream) const noexcept {
  if (active_.load(std::memory_order_acquire) == 0)
    return false;
  const uint64_t key = stream != 0 ? stream : kNullStreamKey;
  for (const auto& slot : streams_) {
    if (slot.load(std::memory_order_acquire) == key)
      return true;
  }
  return false;
}

void CaptureState::ResetForTesting() noexcept {
  active_.store(0);
  total_.store(0);
  overflow_.store(0);
  for (auto& slot : streams_) slot.store(0);
}

namespace {
constinit CaptureState g_captures;
}  // namespace

CaptureState& Captures() noexcept {
  return g_captures;
}

}  // namespace cuclimb::interposer
