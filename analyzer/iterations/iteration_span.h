// SPDX-License-Identifier: Apache-2.0
// One iteration's time span on the boundary thread.
#pragma once

#include <cstdint>

namespace cuclimb::analysis {

struct IterationSpan {
  int64_t start_ns = 0, end_ns = 0;
  int64_t payload = 0;  // NVTX payload of the boundary range or mark, when it had one
};

}  // namespace cuclimb::analysis
