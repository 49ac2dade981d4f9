// SPDX-License-Identifier: Apache-2.0
// Names of the allocator kinds, as the --allocator flag spells them.
#include "workloads/allocators/allocator_config.h"

namespace cuclimb::workloads {

const char* AllocatorName(AllocatorKind kind) {
  switch (kind) {
    case AllocatorKind::kDirect:
      return "direct";
    case AllocatorKind::kAsync:
      return "async";
    case AllocatorKind::kCaching:
      return "caching";
    case AllocatorKind::kCubecl:
      return "cubecl";
  }
  return "?";
}

}  // namespace cuclimb::workloads
