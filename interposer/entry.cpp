// SPDX-License-Identifier: Apache-2.0
// The exported entry points of libcuclimb.so: CUDA injection, NVTX injection (core and memory
// extension), the LD_PRELOAD constructor and the C API of include/cuclimb/cuclimb.h. Everything
// else is hidden (-fvisibility=hidden and libcuclimb.map). Each entry point only forwards to
// lifecycle.cpp / nvtx_tool.cpp and never throws.
#include "interposer/include/cuclimb/cuclimb.h"
#include "interposer/lifecycle.h"
#include "interposer/nvtx_tool.h"
#include "interposer/state.h"

#define CUCLIMB_EXPORT extern "C" __attribute__((visibility("default")))

// The injection entry points, with the signatures the driver and NVTX look up by name.
CUCLIMB_EXPORT int InitializeInjection(void);
CUCLIMB_EXPORT int InitializeInjectionNvtx2(const void* (*get_export_table)(uint32_t));
CUCLIMB_EXPORT int InitializeInjectionNvtxExtension(void* module_info);

// CUDA_INJECTION64_PATH: the driver calls this inside the first cuInit.
CUCLIMB_EXPORT int InitializeInjection(void) {
  cuclimb::interposer::InitializeCupti();
  return 1;  // the program always runs on, traced or not
}

// NVTX_INJECTION64_PATH: each NVTX instance (app, libtorch, NCCL, ...) calls this once, on its
// first NVTX call. libcupti exports a function of the same name; NVTX looks it up in this library
// first, so ours is the one that attaches. 0 turns that instance into no-ops (recording off).
CUCLIMB_EXPORT int InitializeInjectionNvtx2(const void* (*get_export_table)(uint32_t)) {
  if (!cuclimb::interposer::EnsureRecorder())
    return 0;
  return cuclimb::interposer::NvtxInitializeCore(get_export_table);
}

// NVTX extensions: the memory API (heaps and regions); others are declined.
CUCLIMB_EXPORT int InitializeInjectionNvtxExtension(void* module_info) {
  if (!cuclimb::interposer::EnsureRecorder())
    return 0;
  return cuclimb::interposer::NvtxInitializeExtension(module_info);
}

namespace {
__attribute__((constructor)) void PreloadConstructor() {
  cuclimb::interposer::OnPreloadConstructor();
}
}  // namespace

CUCLIMB_EXPORT void cuclimb_mark_iteration(unsigned long long iteration) {
  cuclimb::interposer::MarkIteration(iteration);
}

CUCLIMB_EXPORT void cuclimb_pause(void) {
  cuclimb::interposer::PauseRecording();
}

CUCLIMB_EXPORT void cuclimb_resume(void) {
  cuclimb::interposer::ResumeRecording();
}

CUCLIMB_EXPORT int cuclimb_is_recording(void) {
  return cuclimb::interposer::g_capture_on.load(std::memory_order_relaxed) ? 1 : 0;
}

CUCLIMB_EXPORT void cuclimb_flush(void) {
  cuclimb::interposer::FlushNow();
}
