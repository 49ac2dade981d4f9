// SPDX-License-Identifier: Apache-2.0
// The one clock of libcuclimb.so: CLOCK_MONOTONIC in nanoseconds, which CUPTI is told to use for
// activity records too (cuptiActivityRegisterTimestampCallback), so host and GPU events share a
// time line. Trace timestamps are ClockNs() minus the recorder's base (RecorderOptions).
#pragma once

#include <cstdint>
#include <ctime>

namespace cuclimb::interposer {

// vDSO clock_gettime: about 20 ns, no system call, async-signal-safe.
inline int64_t ClockNs() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Set once by the lifecycle before recording starts; ClockNs() - BaseNs() is the trace `ts`.
int64_t BaseNs() noexcept;
void SetBaseNs(int64_t base) noexcept;

inline int64_t ToTraceNs(int64_t clock_ns) noexcept {
  return clock_ns - BaseNs();
}
inline int64_t TraceClockNow() noexcept {
  return ToTraceNs(ClockNs());
}

}  // namespace cuclimb::interposer
