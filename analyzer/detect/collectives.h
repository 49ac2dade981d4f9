// SPDX-License-Identifier: Apache-2.0
// Collective-communication kernels, recognised by name. NCCL (and RCCL) names its device kernels
// ncclDevKernel_* (NCCL 2.19 and later) and ncclKernel_* (earlier), e.g.
// ncclDevKernel_AllReduce_Sum_f32_RING_LL; they run on NCCL's own streams and, once launched, spin
// on the GPU until every rank's kernel of the same collective has arrived. Their GPU time
// therefore grows on the ranks that wait for a slower one.
#pragma once

#include <string_view>

namespace cuclimb::analysis {

// `name` as the report shows it (demangled: "ncclDevKernel_AllReduce_...(ncclDevKernelArgs...)").
inline bool IsCollectiveKernel(std::string_view name) {
  return name.find("ncclDevKernel_") != std::string_view::npos ||
         name.find("ncclKernel_") != std::string_view::npos;
}

}  // namespace cuclimb::analysis
