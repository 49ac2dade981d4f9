// SPDX-License-Identifier: Apache-2.0
// A stand-in for libcupti.so.13 with the 15 functions libcuclimb.so imports, so its CUPTI setup,
// pause/resume and sampling windows run on machines without a GPU. It keeps the enabled
// callbacks and activity kinds, hands the subscriber callback to the test program, and logs every
// call that changes state to $FAKE_CUPTI_LOG ("<call> <args> pid=<pid>", one line each).
//
// Knobs: FAKE_CUPTI_VERSION (cuptiGetVersion, default 130001), FAKE_CUPTI_OTHER_SUBSCRIBER (name of
// another tool: cuptiSubscribe_v2 fails with error 39), FAKE_CUPTI_FAIL (comma-separated function
// names, optionally NAME:ARG with an activity kind or callback id, that return
// CUPTI_ERROR_NOT_INITIALIZED).
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fcntl.h>
#include <unistd.h>

#include <cupti.h>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr size_t kDomains = 8;
constexpr size_t kCbids = 1024;
constexpr size_t kKinds = 128;

std::mutex g_mutex;
bool g_callback_on[kDomains][kCbids] = {};
bool g_domain_on[kDomains] = {};
bool g_activity_on[kKinds] = {};
CUpti_CallbackFunc g_callback = nullptr;
void* g_userdata = nullptr;
int g_subscriber_token = 0;

void Log(const char* format, ...) {
  const char* path = std::getenv("FAKE_CUPTI_LOG");
  if (path == nullptr || path[0] == '\0')
    return;
  char line[256];
  va_list args;
  va_start(args, format);
  int n = std::vsnprintf(line, sizeof(line) - 32, format, args);
  va_end(args);
  if (n < 0)
    return;
  n = n > static_cast<int>(sizeof(line)) - 32 ? static_cast<int>(sizeof(line)) - 32 : n;
  n += std::snprintf(line + n, sizeof(line) - static_cast<size_t>(n), " pid=%d\n",
                     static_cast<int>(getpid()));
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0)
    return;
  if (write(fd, line, static_cast<size_t>(n)) < 0) {
    // nothing to do: the test sees the line missing
  }
  close(fd);
}

// True when FAKE_CUPTI_FAIL names `function` (any argument) or `function:arg`.
bool Fails(const char* function, long arg) {
  const char* list = std::getenv("FAKE_CUPTI_FAIL");
  if (list == nullptr)
    return false;
  const size_t len = std::strlen(function);
  for (const char* p = list; p != nullptr && *p != '\0';) {
    const char* end = std::strchr(p, ',');
    const size_t item = end != nullptr ? static_cast<size_t>(end - p) : std::strlen(p);
    if (item >= len && std::strncmp(p, function, len) == 0) {
      if (item == len)
        return true;
      if (p[len] == ':' && std::strtol(p + len + 1, nullptr, 10) == arg)
        return true;
    }
    p = end != nullptr ? end + 1 : nullptr;
  }
  return false;
}

}  // namespace

FAKE_EXPORT CUptiResult cuptiGetVersion(uint32_t* version) {
  const char* v = std::getenv("FAKE_CUPTI_VERSION");
  *version = v != nullptr ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : 130001;
  return Fails("cuptiGetVersion", 0) ? CUPTI_ERROR_NOT_INITIALIZED : CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
  *str = result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
             ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS"
         : result == CUPTI_ERROR_NOT_INITIALIZED ? "CUPTI_ERROR_NOT_INITIALIZED"
                                                 : "CUPTI_ERROR_UNKNOWN";
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber,
                                          CUpti_CallbackFunc callback, void* userdata,
                                          CUpti_SubscriberParams* params) {
  std::lock_guard<std::mutex> lock(g_mutex);
  const char* other = std::getenv("FAKE_CUPTI_OTHER_SUBSCRIBER");
  if (other != nullptr) {
    if (params != nullptr && params->oldSubscriberName != nullptr && params->oldSubscriberSize > 0)
      std::snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s", other);
    Log("subscribe refused");
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  if (g_callback != nullptr)
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  g_callback = callback;
  g_userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&g_subscriber_token);
  Log("subscribe %s",
      params != nullptr && params->subscriberName != nullptr ? params->subscriberName : "?");
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle,
                                            CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (Fails("cuptiEnableCallback", static_cast<long>(cbid)))
    return CUPTI_ERROR_NOT_INITIALIZED;
  if (static_cast<size_t>(domain) >= kDomains || cbid >= kCbids)
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_callback_on[domain][cbid] = enable != 0;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle,
                                          CUpti_CallbackDomain domain) {
  if (Fails("cuptiEnableDomain", static_cast<long>(domain)))
    return CUPTI_ERROR_NOT_INITIALIZED;
  if (static_cast<size_t>(domain) >= kDomains)
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_domain_on[domain] = enable != 0;
  Log("enable_domain %d %u", static_cast<int>(domain), enable);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain, uint32_t, const char** name) {
  *name = "fake";
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t* device) {
  *device = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(context) & 0x7);
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (Fails("cuptiActivityEnable", static_cast<long>(kind)))
    return CUPTI_ERROR_NOT_INITIALIZED;
  if (static_cast<size_t>(kind) >= kKinds)
    return CUPTI_ERROR_INVALID_KIND;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_activity_on[kind] = true;
  Log("activity_enable %d", static_cast<int>(kind));
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  if (Fails("cuptiActivityDisable", static_cast<long>(kind)))
    return CUPTI_ERROR_NOT_INITIALIZED;
  if (static_cast<size_t>(kind) >= kKinds)
    return CUPTI_ERROR_INVALID_KIND;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_activity_on[kind] = false;
  Log("activity_disable %d", static_cast<int>(kind));
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  Log("flush_all %u", flag);
  return Fails("cuptiActivityFlushAll", 0) ? CUPTI_ERROR_NOT_INITIALIZED : CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t*, size_t, CUpti_Activity**) {
  return CUPTI_ERROR_MAX_LIMIT_REACHED;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = 0;
  return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc,
                                                       CUpti_BuffersCallbackCompleteFunc) {
  Log("register_buffers");
  return Fails("cuptiActivityRegisterCallbacks", 0) ? CUPTI_ERROR_NOT_INITIALIZED : CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc) {
  return Fails("cuptiActivityRegisterTimestampCallback", 0) ? CUPTI_ERROR_NOT_INITIALIZED
                                                            : CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t*, void*) {
  return Fails("cuptiActivitySetAttribute", static_cast<long>(attr)) ? CUPTI_ERROR_NOT_INITIALIZED
                                                                     : CUPTI_SUCCESS;
}

// ---- For the test program (looked up with dlopen("libcupti.so.13", RTLD_NOLOAD)) ----

FAKE_EXPORT int fake_cupti_deliver(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const void* data);
FAKE_EXPORT int fake_cupti_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
FAKE_EXPORT int fake_cupti_activity_on(CUpti_ActivityKind kind);

// Delivers a callback the way CUPTI does: only when its id (or its whole domain) is enabled.
// Returns 1 when delivered.
FAKE_EXPORT int fake_cupti_deliver(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const void* data) {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (static_cast<size_t>(domain) >= kDomains || cbid >= kCbids)
      return 0;
    if (!g_domain_on[domain] && !g_callback_on[domain][cbid])
      return 0;
    callback = g_callback;
    userdata = g_userdata;
  }
  if (callback == nullptr)
    return 0;
  callback(userdata, domain, cbid, data);
  return 1;
}

// Whether CUPTI would deliver this callback id now.
FAKE_EXPORT int fake_cupti_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (static_cast<size_t>(domain) >= kDomains || cbid >= kCbids)
    return 0;
  return g_domain_on[domain] || g_callback_on[domain][cbid] ? 1 : 0;
}

// Whether an activity kind is enabled now.
FAKE_EXPORT int fake_cupti_activity_on(CUpti_ActivityKind kind) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return static_cast<size_t>(kind) < kKinds && g_activity_on[kind] ? 1 : 0;
}
