// SPDX-License-Identifier: Apache-2.0
// Classes of trace events that several analyses ask about.
#pragma once

#include "interposer/format/trace_format.h"

namespace cuclimb::trace {

// Host-side calls into CUDA (what makes a thread a "CUDA thread"): allocations, frees, VMM,
// handle creation and destruction, launches, synchronizations, copies and other API calls.
constexpr bool IsCudaCall(format::EventType t) {
  switch (t) {
    case format::EventType::kApi:
    case format::EventType::kLaunch:
    case format::EventType::kAlloc:
    case format::EventType::kFree:
    case format::EventType::kSync:
    case format::EventType::kCopy:
    case format::EventType::kCreate:
    case format::EventType::kDestroy:
    case format::EventType::kVmm:
      return true;
    default:
      return false;
  }
}

}  // namespace cuclimb::trace
