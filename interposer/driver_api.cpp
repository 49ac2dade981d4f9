// SPDX-License-Identifier: Apache-2.0
// dlsym'd driver functions (see driver_api.h).
#include "interposer/driver_api.h"

#include <atomic>
#include <mutex>

#include <dlfcn.h>

namespace cuclimb::interposer {
namespace {

DriverApi g_driver;
std::mutex g_driver_mutex;  // cold: resolution only

template <typename F>
void Resolve(void* handle, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
}

}  // namespace

const DriverApi& Driver() noexcept {
  std::lock_guard<std::mutex> lock(g_driver_mutex);
  if (g_driver.loaded)
    return g_driver;
  // RTLD_NOLOAD: we only ever run inside a process that already has the driver (or none).
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr)
    return g_driver;
  Resolve(handle, "cuDriverGetVersion", &g_driver.DriverGetVersion);
  Resolve(handle, "cuDeviceGetName", &g_driver.DeviceGetName);
  Resolve(handle, "cuDeviceTotalMem_v2", &g_driver.DeviceTotalMem);
  Resolve(handle, "cuDeviceGetUuid_v2", &g_driver.DeviceGetUuid);
  Resolve(handle, "cuDeviceGetAttribute", &g_driver.DeviceGetAttribute);
  Resolve(handle, "cuCtxSetCurrent", &g_driver.CtxSetCurrent);
  Resolve(handle, "cuMemGetInfo_v2", &g_driver.MemGetInfo);
  Resolve(handle, "cuMemPoolGetAttribute", &g_driver.MemPoolGetAttribute);
  Resolve(handle, "cuDeviceGetDefaultMemPool", &g_driver.DeviceGetDefaultMemPool);
  Resolve(handle, "cuDeviceGetMemPool", &g_driver.DeviceGetMemPool);
  Resolve(handle, "cuDeviceGetGraphMemAttribute", &g_driver.DeviceGetGraphMemAttribute);
  Resolve(handle, "cuThreadExchangeStreamCaptureMode", &g_driver.ThreadExchangeStreamCaptureMode);
  g_driver.loaded = g_driver.DriverGetVersion != nullptr && g_driver.CtxSetCurrent != nullptr &&
                    g_driver.MemGetInfo != nullptr && g_driver.MemPoolGetAttribute != nullptr &&
                    g_driver.ThreadExchangeStreamCaptureMode != nullptr;
  // The handle stays open: libcuda is never unloaded before exit anyway.
  return g_driver;
}

}  // namespace cuclimb::interposer
