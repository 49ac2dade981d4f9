// SPDX-License-Identifier: Apache-2.0
// cuclimb as the NVTX injection library: fills the core, core2 and memory-extension function
// tables of every NVTX instance (the application, libtorch, NCCL ... each carry their own) with
// functions that record push/pop, start/end, marks, domains, registered strings, and heaps and
// regions of the NVTX memory API.
//
// The hooks run on the annotating thread: no lock, no malloc, no system call. Domain and
// registered-string handles point into static pools owned here and are never freed (the NVTX
// contract lets a tool keep them for the life of the process). CUDA-free.
#pragma once

#include <cstdint>

namespace cuclimb::interposer {

// The NVTX entry points; entry.cpp exports them under the names NVTX looks up. Each returns 1
// (attached) or 0 (NVTX turns that instance or module into no-ops).
int NvtxInitializeCore(const void* (*get_export_table)(uint32_t export_table_id)) noexcept;
int NvtxInitializeExtension(void* module_info) noexcept;

// Records an iteration boundary as an NVTX-like mark (the C API's cuclimb_mark_iteration).
void MarkIteration(uint64_t iteration) noexcept;

}  // namespace cuclimb::interposer
