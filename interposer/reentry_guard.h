// SPDX-License-Identifier: Apache-2.0
// Thread-local re-entrancy guard of every entry point into libcuclimb.so.
//
// Our own CUDA calls (writer-thread queries) raise CUPTI callbacks, and a signal may interrupt a
// callback on the same thread: either would corrupt the thread's single-producer ring. Every
// callback, NVTX hook and signal handler therefore takes the guard first and returns at once when
// it is already held. The writer thread holds it for life. initial-exec TLS: a dlopen'ed library
// must not allocate TLS lazily (that calls malloc) inside a callback or a signal handler.
#pragma once

#include <cstdint>

namespace cuclimb::interposer {

extern __attribute__((tls_model("initial-exec"))) thread_local uint32_t t_reentry_depth;

class ReentryGuard {
 public:
  ReentryGuard() noexcept : nested_(t_reentry_depth++ != 0) {}
  ~ReentryGuard() { --t_reentry_depth; }
  ReentryGuard(const ReentryGuard&) = delete;
  ReentryGuard& operator=(const ReentryGuard&) = delete;

  // True when this thread was already inside libcuclimb.so: do nothing.
  bool nested() const noexcept { return nested_; }

 private:
  bool nested_;
};

// For the writer thread and other cuclimb-owned threads: never record from here.
inline void HoldReentryGuardForever() noexcept {
  t_reentry_depth = 1u << 30;
}

inline bool InsideCuclimb() noexcept {
  return t_reentry_depth != 0;
}

}  // namespace cuclimb::interposer
