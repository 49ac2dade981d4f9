// SPDX-License-Identifier: Apache-2.0
// Writer-thread gauges (see sampler.h).
#include "interposer/sampler.h"

#include <cstring>

#include "interposer/capture_state.h"
#include "interposer/clock.h"
#include "interposer/driver_api.h"
#include "interposer/log.h"
#include "interposer/reentry_guard.h"
#include "interposer/state.h"
#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

using format::Event;
using format::EventType;

constexpr int kMaxDevices = 64;
bool g_described[kMaxDevices] = {};
bool g_default_pools_known[kMaxDevices] = {};
int64_t g_last_sample_ns = 0;
uint64_t g_last_marks = 0;
size_t g_last_contexts = 0;
uint64_t g_skipped = 0;
uint64_t g_skipped_reported = 0;
bool g_relaxed = false;
bool g_debug_capture_queries = false;  // CUCLIMB_DEBUG_CAPTURE_QUERIES

uint32_t Str(const char* s) {
  return InternString(s);
}

void Gauge(int64_t ts, int32_t device, const char* name, int64_t value, uint64_t pool) {
  Event ev = format::MakeEvent(EventType::kGauge);
  ev.ts = ts;
  ev.device = device;
  ev.name = Str(name);
  ev.value = value;
  ev.handle = pool;
  Record(ev);
}

// The writer's own capture mode: RELAXED, so a query is not refused (and does not invalidate the
// application's graph) just because another thread captures in GLOBAL mode. Together with the
// "no capture under way" check this closes the race between checking and calling.
void EnsureRelaxed(const DriverApi& d) {
  if (g_relaxed || d.ThreadExchangeStreamCaptureMode == nullptr)
    return;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  g_relaxed = CUCLIMB_CU_TRY(d.ThreadExchangeStreamCaptureMode(&mode)) == CUDA_SUCCESS;
}

void DescribeDevice(const DriverApi& d, int32_t device, int64_t ts) {
  Event ev = format::MakeEvent(EventType::kDevice);
  ev.ts = ts;
  ev.device = device;
  char name[256] = {};
  if (d.DeviceGetName != nullptr &&
      d.DeviceGetName(name, sizeof(name) - 1, device) == CUDA_SUCCESS) {
    ev.name = Str(name);
  }
  size_t total = 0;
  if (d.DeviceTotalMem != nullptr && d.DeviceTotalMem(&total, device) == CUDA_SUCCESS) {
    ev.size = total;
  }
  CUuuid uuid{};
  if (d.DeviceGetUuid != nullptr && d.DeviceGetUuid(&uuid, device) == CUDA_SUCCESS) {
    char text[48];
    char* p = text;
    static const char kHex[] = "0123456789abcdef";
    for (int i = 0; i < 16; ++i) {
      if (i == 4 || i == 6 || i == 8 || i == 10)
        *p++ = '-';
      const auto b = static_cast<unsigned char>(uuid.bytes[i]);
      *p++ = kHex[b >> 4];
      *p++ = kHex[b & 15];
    }
    *p = '\0';
    char full[56];
    std::memcpy(full, "GPU-", 4);
    std::memcpy(full + 4, text, static_cast<size_t>(p - text) + 1);
    ev.text = Str(full);
  }
  int major = 0;
  int minor = 0;
  if (d.DeviceGetAttribute != nullptr &&
      d.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) ==
          CUDA_SUCCESS &&
      d.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device) ==
          CUDA_SUCCESS) {
    ev.value = major * 10 + minor;
  }
  Record(ev);
}

void ReportSkips(int64_t ts) {
  if (g_skipped == g_skipped_reported)
    return;
  Event ev = format::MakeEvent(EventType::kDrops);
  ev.ts = ts;
  ev.value = static_cast<int64_t>(g_skipped - g_skipped_reported);
  ev.text = Str("gauge_skipped_capture");
  if (Record(ev))
    g_skipped_reported = g_skipped;
}

void Sample(const DriverApi& d, int64_t ts) {
  // Devices with a live context: describe them once and learn their default and current pools.
  for (size_t i = 0; i < g_contexts.size(); ++i) {
    const int32_t device = g_contexts.DeviceAt(i);
    if (device < 0 || device >= kMaxDevices)
      continue;
    // Device attributes need no context: describe a device even when its context is already
    // gone (a short program that destroys its context before the first tick).
    if (!g_described[device]) {
      g_described[device] = true;
      DescribeDevice(d, device, ts);
    }
    if (!g_contexts.AliveAt(i))
      continue;
    CUmemoryPool pool = nullptr;
    if (!g_default_pools_known[device] && d.DeviceGetDefaultMemPool != nullptr &&
        d.DeviceGetDefaultMemPool(&pool, device) == CUDA_SUCCESS) {
      g_default_pools_known[device] = true;
      g_pools.Add(reinterpret_cast<uint64_t>(pool), device);
    }
    if (d.DeviceGetMemPool != nullptr && d.DeviceGetMemPool(&pool, device) == CUDA_SUCCESS) {
      g_pools.Add(reinterpret_cast<uint64_t>(pool), device);
    }
  }
  // Per device: make one of its live contexts current (pool attributes and cuMemGetInfo may need
  // one), query device memory, graph memory and the device's pools, then leave no context current.
  bool device_done[kMaxDevices] = {};
  bool pool_done[PoolSet::kSlots] = {};
  for (size_t i = 0; i < g_contexts.size(); ++i) {
    const int32_t device = g_contexts.DeviceAt(i);
    if (device < 0 || device >= kMaxDevices || device_done[device])
      continue;
    if (!g_contexts.BeginQuery(i))
      continue;
    const auto context = reinterpret_cast<CUcontext>(g_contexts.ContextAt(i));
    if (d.CtxSetCurrent(context) != CUDA_SUCCESS) {
      g_contexts.EndQuery();
      continue;
    }
    device_done[device] = true;
    size_t free_bytes = 0;
    size_t total_bytes = 0;
    if (d.MemGetInfo(&free_bytes, &total_bytes) == CUDA_SUCCESS) {
      Gauge(ts, device, "device.free", static_cast<int64_t>(free_bytes), 0);
      Gauge(ts, device, "device.total", static_cast<int64_t>(total_bytes), 0);
    }
    if (d.DeviceGetGraphMemAttribute != nullptr) {
      cuuint64_t graph_reserved = 0;
      cuuint64_t graph_used = 0;
      if (d.DeviceGetGraphMemAttribute(device, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT,
                                       &graph_reserved) == CUDA_SUCCESS &&
          d.DeviceGetGraphMemAttribute(device, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &graph_used) ==
              CUDA_SUCCESS) {
        Gauge(ts, device, "graph.reserved", static_cast<int64_t>(graph_reserved), 0);
        Gauge(ts, device, "graph.used", static_cast<int64_t>(graph_used), 0);
      }
    }
    for (size_t p = 0; p < g_pools.size() && p < PoolSet::kSlots; ++p) {
      const int32_t pool_device = g_pools.DeviceAt(p);
      if (pool_done[p] || (pool_device >= 0 && pool_device != device))
        continue;
      if (!g_pools.BeginQuery(p))
        continue;
      const uint64_t handle = g_pools.PoolAt(p);
      auto* pool = reinterpret_cast<CUmemoryPool>(handle);
      cuuint64_t reserved = 0;
      cuuint64_t used = 0;
      const bool ok =
          d.MemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved) ==
              CUDA_SUCCESS &&
          d.MemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used) == CUDA_SUCCESS;
      g_pools.EndQuery();
      if (ok) {
        pool_done[p] = true;
        Gauge(ts, pool_device >= 0 ? pool_device : device, "pool.reserved",
              static_cast<int64_t>(reserved), handle);
        Gauge(ts, pool_device >= 0 ? pool_device : device, "pool.used", static_cast<int64_t>(used),
              handle);
      }
    }
    d.CtxSetCurrent(nullptr);  // never keep an application context current on our thread
    g_contexts.EndQuery();
  }
}

// Test hook for shared/notes/cupti-cuda13.md §10 item 3: with CUCLIMB_DEBUG_CAPTURE_QUERIES=1
// the writer also queries while a capture is under way and records each result as a mark
// "capture_query" (payload = CUresult), so a GPU test can check that RELAXED mode prevents 900.
void DebugQueryDuringCapture(const DriverApi& d, int64_t ts) {
  if (g_contexts.size() == 0 || !g_contexts.BeginQuery(0))
    return;
  const bool current =
      d.CtxSetCurrent(reinterpret_cast<CUcontext>(g_contexts.ContextAt(0))) == CUDA_SUCCESS;
  for (size_t i = 0; current && i < g_pools.size(); ++i) {
    if (!g_pools.BeginQuery(i))
      continue;
    cuuint64_t reserved = 0;
    const CUresult r = d.MemPoolGetAttribute(reinterpret_cast<CUmemoryPool>(g_pools.PoolAt(i)),
                                             CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &reserved);
    g_pools.EndQuery();
    Event ev = format::MakeEvent(EventType::kMark);
    ev.ts = ts;
    ev.name = Str("capture_query");
    ev.domain = Str("cuclimb");
    ev.value = static_cast<int64_t>(r);
    Record(ev);
    break;  // one query per tick is enough
  }
  if (current)
    d.CtxSetCurrent(nullptr);
  g_contexts.EndQuery();
}

void MaybeSample(int64_t now_ns, bool force) {
  const DriverApi& d = Driver();
  if (!d.loaded)
    return;
  EnsureRelaxed(d);
  const uint64_t marks = g_iteration_marks.load(std::memory_order_relaxed);
  // A new context (a device starts being used) is described and sampled at once: a short
  // program without iteration marks would otherwise end before the first period.
  const bool boundary = marks != g_last_marks || g_contexts.size() != g_last_contexts;
  const bool period_due =
      g_config.gauge_ms > 0 && now_ns - g_last_sample_ns >= int64_t{g_config.gauge_ms} * 1'000'000;
  // Iteration boundaries trigger a sample at most every 50 ms: fast loops pass many per tick,
  // and each sample is a handful of driver calls.
  const bool boundary_due = boundary && now_ns - g_last_sample_ns >= 50'000'000;
  if (!force && !boundary_due && !period_due)
    return;
  if (Captures().Active() > 0) {
    if (g_debug_capture_queries)
      DebugQueryDuringCapture(d, now_ns);
    ++g_skipped;
    ReportSkips(now_ns);
    return;  // the next tick retries; boundary stays pending
  }
  g_last_marks = marks;
  g_last_contexts = g_contexts.size();
  g_last_sample_ns = now_ns;
  Sample(d, now_ns);
  ReportSkips(now_ns);
}

}  // namespace

void SampleGaugesTick(int64_t now_ns) noexcept {
  MaybeSample(now_ns, false);
}

void SampleGaugesNow(int64_t now_ns) noexcept {
  MaybeSample(now_ns, true);
}

void SetDebugCaptureQueries(bool on) noexcept {
  g_debug_capture_queries = on;
}

}  // namespace cuclimb::interposer
