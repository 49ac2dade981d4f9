// SPDX-License-Identifier: Apache-2.0
// Which allocator to build and its settings: plain data shared by the flag parser and the
// factory, free of CUDA so option parsing is tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace cuclimb::workloads {

enum class AllocatorKind { kDirect, kAsync, kCaching, kCubecl };

const char* AllocatorName(AllocatorKind kind);

namespace cubecl {

// The cubecl model's knobs; defaults are cubecl 0.10 on CUDA (docs/workload.md maps each to a
// cuclimb-adam flag).
struct CubeclOptions {
  uint64_t alignment = 512;             // client rounding and pool alignment (wgpu-like: 64)
  uint64_t pinned_alignment = 16;       // stream.rs L65-74
  bool persistent_pool = true;          // --no-persistent
  bool persistent_window = true;        // --no-window
  bool size_match = true;               // --no-size-match
  bool separate_meta_pool = false;      // --meta-pool=separate (wgpu-like uniform buffers)
  bool round_metadata = false;          // --rounded-meta: metadata rounded like tensors
  bool nvtx_mem = false;                // --nvtx-mem
  std::size_t drop_queue_entries = 64;  // drop_queue/policy.rs L16-22
  std::string label = "cubecl";         // names the NVTX domain: "cuclimb-adam/<label>"
};

}  // namespace cubecl

struct AllocatorConfig {
  AllocatorKind kind = AllocatorKind::kCubecl;
  uint64_t release_threshold_bytes = 0;  // async
  bool nvtx_mem = false;                 // caching (cubecl reads cubecl.nvtx_mem)
  cubecl::CubeclOptions cubecl;
};

}  // namespace cuclimb::workloads
