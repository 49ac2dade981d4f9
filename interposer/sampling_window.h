// SPDX-License-Identifier: Apache-2.0
// When the costly CUPTI activity kinds are on: the sampling window of --kernels=sampled
// (CONCURRENT_KERNEL) and --memory-activity=sampled (MEMORY2 + MEMORY_POOL).
//
// Kernel records cost ~1.5 us per launch and memory records ~1 us per allocation and per free
// (measured on the H200): always on, they would distort the step time cuclimb is there to
// explain. A window opens at a sampled iteration boundary (iterations 1, 2, 4, ... below N, then
// every Nth; without iteration marks one writer tick in N, after the first 2 s) and closes at the
// next boundary the writer sees (or after 2 s); then it stays closed for (N-1) times its length,
// so it is open for at most ~1/N of the run. No window opens or closes while a stream captures:
// switching a kind allocates CUPTI device buffers.
//
// Pure logic, no CUDA: the writer's tick feeds it the time and the iteration count and applies
// the decision (sampling_window_test.cpp).
#pragma once

#include <cstdint>

namespace cuclimb::interposer {

// True when an iteration in (after, upto] is sampled with period `every`: a multiple of
// `every`, or a power of two below it.
bool SampledIterationIn(uint64_t after, uint64_t upto, uint32_t every) noexcept;

class SamplingWindow {
 public:
  enum class Action : uint8_t { kNone, kOpen, kClose };

  // A window that has never opened: the run started at trace time start_ns; `every` >= 1.
  constexpr SamplingWindow(uint32_t every, int64_t start_ns) noexcept
      : every_(every < 1 ? 1 : every), start_ns_(start_ns) {}

  // One writer tick at trace time now_ns, with `marks` iteration boundaries seen so far and
  // `capturing` true while any stream captures a graph. Returns what to do with the kinds.
  Action Tick(int64_t now_ns, uint64_t marks, bool capturing) noexcept;

  bool open() const noexcept { return open_; }

  // Longest a window stays open without a boundary (a program that stopped marking).
  static constexpr int64_t kMaxOpenNs = 2'000'000'000;
  // Without iteration marks, no window in the first seconds (start-up is not a steady state).
  static constexpr int64_t kUnmarkedDelayNs = 2'000'000'000;

 private:
  uint32_t every_;
  int64_t start_ns_;
  bool open_ = false;
  int64_t opened_ns_ = 0;
  int64_t closed_ns_ = 0;
  int64_t min_closed_ns_ = 0;  // (every - 1) times the last window's length
  uint64_t marks_at_open_ = 0;
  uint64_t marks_seen_ = 0;
  uint64_t ticks_ = 0;
};

}  // namespace cuclimb::interposer
