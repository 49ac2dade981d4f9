// SPDX-License-Identifier: Apache-2.0
// Version gate, subscription and callback enabling (see cupti_setup.h).
#include "interposer/cupti_setup.h"

#include <atomic>
#include <cstdio>

#include <fcntl.h>
#include <unistd.h>

#include <cupti.h>

#include "interposer/activity_buffers.h"
#include "interposer/callbacks.h"
#include "interposer/cupti_try.h"
#include "interposer/log.h"
#include "interposer/state.h"

namespace cuclimb::interposer {
namespace {

CUpti_SubscriberHandle g_subscriber = nullptr;
std::atomic<uint32_t> g_version{0};
std::atomic<bool> g_tracking_complete{true};

int32_t DeviceOfContext(uint64_t context) {
  uint32_t id = 0;
  return cuptiGetDeviceId(reinterpret_cast<CUcontext>(context), &id) == CUPTI_SUCCESS
             ? static_cast<int32_t>(id)
             : -1;
}

void ContextDestroying(uint64_t) {
  FlushActivity(true);
}

void LoseCaptureTracking(const char* what) {
  g_tracking_complete.store(false, std::memory_order_relaxed);
  CUCLIMB_LOG_ONCE(tracking_once,
                   "CUPTI refused %s: cuclimb cannot tell when CUDA queries are safe, so it "
                   "takes no pool or device gauges and no sampled kernel or memory records",
                   what);
}

void EnableAlwaysOnCallbacks(Session& session, bool count_all_callbacks) {
  size_t count = 0;
  const CUpti_CallbackId* resources = ResourceCbids(&count);
  size_t refused = 0;
  for (size_t i = 0; i < count; ++i) {
    const CUpti_CallbackId id = resources[i];
    if (CUCLIMB_CUPTI_TRY(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, id),
                          "handles of that kind are not recorded") == CUPTI_SUCCESS) {
      continue;
    }
    ++refused;
    if (id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED ||
        id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      LoseCaptureTracking("the context callbacks");
    }
  }
  if (refused > 0) {
    char status[96];
    std::snprintf(status, sizeof(status), "CUPTI refused %zu resource callbacks: handles missing",
                  refused);
    session.SetStatus(status);
  }
  CUCLIMB_CUPTI_TRY(cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_SYNCHRONIZE),
                    "pool gauges follow the writer's period only, not synchronizations");
  CUCLIMB_CUPTI_TRY(
      cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR),
      "a fatal CUPTI error would go unnoticed");
  if (count_all_callbacks) {
    // Diagnostics: count every driver and runtime callback (events only for the table's ids).
    CUCLIMB_CUPTI_TRY(cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API),
                      "CUCLIMB_DEBUG_CBIDS counts only the recorded driver calls");
    CUCLIMB_CUPTI_TRY(cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API),
                      "CUCLIMB_DEBUG_CBIDS counts no runtime calls");
  }
}

}  // namespace

CuptiState SubscribeCupti(Session& session, bool count_all_callbacks) noexcept {
  uint32_t version = 0;
  if (CUCLIMB_CUPTI_TRY(cuptiGetVersion(&version), "recording NVTX only") != CUPTI_SUCCESS) {
    session.SetStatus("cuptiGetVersion failed: NVTX only");
    return CuptiState::kPassive;
  }
  g_version.store(version, std::memory_order_relaxed);
  if (version / 10000 != 13) {
    LogWarning("CUPTI API version %u is not supported (built for %d); recording NVTX only", version,
               CUPTI_API_VERSION);
    session.SetStatus("unsupported CUPTI version: NVTX only");
    return CuptiState::kPassive;
  }
  if (!ActivityLayoutsValidated()) {
    LogWarning(
        "CUPTI API version %u: activity records (GPU kernel times, MEMORY2) are off until "
        "this version is validated; API callbacks and NVTX are recorded",
        version);
  }

  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 8] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "cuclimb";
  params.oldSubscriberName = other;
  params.oldSubscriberSize = sizeof(other);
  const CUptiResult r = cuptiSubscribe_v2(&g_subscriber, OnCuptiCallback, nullptr, &params);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    LogWarning("another CUPTI tool (%s) is attached; recording NVTX only, the program runs on",
               other[0] != '\0' ? other : "unnamed, e.g. Nsight or torch.profiler");
    char status[160];
    std::snprintf(status, sizeof(status), "CUPTI taken by %s: NVTX only",
                  other[0] != '\0' ? other : "another tool");
    session.SetStatus(status);
    return CuptiState::kPassive;
  }
  if (r != CUPTI_SUCCESS) {
    const char* why = nullptr;
    if (cuptiGetResultString(r, &why) != CUPTI_SUCCESS)
      why = nullptr;
    LogWarning("CUPTI subscription failed (%s); recording NVTX only",
               why != nullptr ? why : "unknown error");
    session.SetStatus("CUPTI subscription failed: NVTX only");
    return CuptiState::kPassive;
  }

  g_hooks.device_of_context = DeviceOfContext;
  g_hooks.context_destroying = ContextDestroying;
  InternApiNames();
  EnableAlwaysOnCallbacks(session, count_all_callbacks);
  return CuptiState::kActive;
}

void EnableDriverCallbacks(Session& session, bool full) noexcept {
  size_t count = 0;
  const CbidEntry* entries = DriverCbids(&count);
  size_t refused = 0;
  const char* first_refused = nullptr;
  for (size_t i = 0; i < count; ++i) {
    const CbidEntry& e = entries[i];
    const bool on =
        (e.group == CbidGroup::kAlways || g_config.api) && (full || e.kept_while_paused);
    if (CUCLIMB_CUPTI_TRY(
            cuptiEnableCallback(on ? 1 : 0, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, e.cbid),
            "the trace's status names the first driver call left unrecorded") == CUPTI_SUCCESS ||
        !on) {
      continue;
    }
    ++refused;
    if (first_refused == nullptr)
      first_refused = e.name;
    if (e.kept_while_paused)
      LoseCaptureTracking("a capture or teardown callback");
  }
  if (refused > 0) {
    char status[160];
    std::snprintf(status, sizeof(status),
                  "CUPTI refused the callbacks of %zu driver calls (first: %s)", refused,
                  first_refused);
    session.SetStatus(status);
  }
}

uint32_t CuptiVersion() noexcept {
  return g_version.load(std::memory_order_relaxed);
}

bool ActivityLayoutsValidated() noexcept {
  const uint32_t v = CuptiVersion();
  return v / 100 == 1300 && v >= 130001;
}

bool CaptureTrackingComplete() noexcept {
  return g_tracking_complete.load(std::memory_order_relaxed);
}

void DumpDebugCounts(const char* path) noexcept {
  if (path == nullptr || path[0] == '\0')
    return;
  const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  for (size_t domain = 0; domain < kDebugDomains; ++domain) {
    for (size_t cbid = 0; cbid < kDebugCbids; ++cbid) {
      const uint64_t n = CallbackCount(domain, cbid);
      if (n == 0)
        continue;
      const char* name = nullptr;
      if (cuptiGetCallbackName(static_cast<CUpti_CallbackDomain>(domain),
                               static_cast<uint32_t>(cbid), &name) != CUPTI_SUCCESS) {
        name = "?";
      }
      char line[256];
      const int len =
          std::snprintf(line, sizeof(line), "%zu %zu %s %llu\n", domain, cbid,
                        name != nullptr ? name : "?", static_cast<unsigned long long>(n));
      if (len > 0 && write(fd, line, static_cast<size_t>(len)) < 0)
        break;
    }
  }
  close(fd);
}

}  // namespace cuclimb::interposer
