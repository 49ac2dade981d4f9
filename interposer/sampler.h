// SPDX-License-Identifier: Apache-2.0
// Gauges: reserved and used bytes of every memory pool seen, graph memory, device free/total,
// and the device descriptions, sampled by the writer thread.
//
// Writer thread only (never an application thread). Queries run only while no stream is
// capturing (capture_state.h), with the writer's capture mode set to RELAXED, and only on pools
// and contexts that are alive (tables.h handshakes). A sample that must be skipped because of a
// capture is counted and reported as a `drops` event ("gauge_skipped_capture").
#pragma once

#include <cstdint>

namespace cuclimb::interposer {

// One writer tick: describes new devices, then samples gauges if an iteration boundary passed
// or the period (CUCLIMB_GAUGE_MS) elapsed.
void SampleGaugesTick(int64_t now_ns) noexcept;

// Unconditional sample (the writer's first tick), still subject to the capture rule.
void SampleGaugesNow(int64_t now_ns) noexcept;

// CUCLIMB_DEBUG_CAPTURE_QUERIES=1 (GPU tests only): also query during captures and record the
// CUresult as a mark, to check that the writer's RELAXED capture mode prevents error 900.
void SetDebugCaptureQueries(bool on) noexcept;

}  // namespace cuclimb::interposer
