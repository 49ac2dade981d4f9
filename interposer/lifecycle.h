// SPDX-License-Identifier: Apache-2.0
// What libcuclimb.so's entry points (entry.cpp) ask of the process's one recording session
// (session.h): start it, attach CUPTI, pause, resume, flush. lifecycle.cpp wires the session to
// the recorder and CUPTI and holds the fork, exit and environment policy.
//
// Every function here is a cold path, callable from any entry point in any order (NVTX may load
// cuclimb before cuInit does; LD_PRELOAD and CUDA_INJECTION64_PATH may both point here). None
// throws, none fails the program: a failure switches off the affected part, with one warning.
#pragma once

#include <cstdint>

namespace cuclimb::interposer {

// Reads the configuration and starts the recorder once (first caller wins, racing callers
// wait). Returns true while recording is possible (the trace file is open).
bool EnsureRecorder() noexcept;

// CUDA_INJECTION64_PATH entry (inside the first cuInit): EnsureRecorder, version gate,
// subscribe, enable callbacks and activity. Once per process; a second call does nothing.
void InitializeCupti() noexcept;

// The LD_PRELOAD constructor: points CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH at this
// library when unset, and does nothing else (no CUDA, no CUPTI) unless CUCLIMB_PRELOAD_INIT=1.
void OnPreloadConstructor() noexcept;

// C API (include/cuclimb/cuclimb.h).
void PauseRecording() noexcept;
void ResumeRecording() noexcept;
void FlushNow() noexcept;

}  // namespace cuclimb::interposer
