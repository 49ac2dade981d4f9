// SPDX-License-Identifier: Apache-2.0
// The few driver functions cuclimb calls itself, resolved with dlopen("libcuda.so.1",
// RTLD_NOLOAD) + dlsym: libcuclimb.so never links libcuda, so it also loads (NVTX only) in
// processes and on machines without a driver. Only the writer thread calls them, only while no
// stream is capturing (capture_state.h), with its capture mode set to RELAXED.
#pragma once

#include <cuda.h>

namespace cuclimb::interposer {

struct DriverApi {
  decltype(&::cuDriverGetVersion) DriverGetVersion = nullptr;
  decltype(&::cuDeviceGetName) DeviceGetName = nullptr;
  decltype(&::cuDeviceTotalMem_v2) DeviceTotalMem = nullptr;
  decltype(&::cuDeviceGetUuid_v2) DeviceGetUuid = nullptr;
  decltype(&::cuDeviceGetAttribute) DeviceGetAttribute = nullptr;
  decltype(&::cuCtxSetCurrent) CtxSetCurrent = nullptr;
  decltype(&::cuMemGetInfo_v2) MemGetInfo = nullptr;
  decltype(&::cuMemPoolGetAttribute) MemPoolGetAttribute = nullptr;
  decltype(&::cuDeviceGetDefaultMemPool) DeviceGetDefaultMemPool = nullptr;
  decltype(&::cuDeviceGetMemPool) DeviceGetMemPool = nullptr;
  decltype(&::cuDeviceGetGraphMemAttribute) DeviceGetGraphMemAttribute = nullptr;
  decltype(&::cuThreadExchangeStreamCaptureMode) ThreadExchangeStreamCaptureMode = nullptr;

  bool loaded = false;  // libcuda.so.1 was mapped and the queries resolved
};

// Resolves the functions (cold; idempotent). Returns the table, loaded=false when libcuda is
// not mapped in this process yet.
const DriverApi& Driver() noexcept;

// Logs "cuclimb: <what> failed: CUresult <n>" once per call site and returns r.
#define CUCLIMB_CU_TRY(expr)                                                                  \
  ([&]() noexcept -> CUresult {                                                               \
    const CUresult cuclimb_r = (expr);                                                        \
    if (cuclimb_r != CUDA_SUCCESS) {                                                          \
      CUCLIMB_LOG_ONCE(cuclimb_cu_once, "%s failed: CUresult %d (sampling continues)", #expr, \
                       static_cast<int>(cuclimb_r));                                          \
    }                                                                                         \
    return cuclimb_r;                                                                         \
  }())

}  // namespace cuclimb::interposer
