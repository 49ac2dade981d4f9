// SPDX-License-Identifier: Apache-2.0
// NVTX core, core2 and memory-extension hooks (see nvtx_tool.h).
#include "interposer/nvtx_tool.h"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <cwchar>

#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtMem.h>

#include "interposer/clock.h"
#include "interposer/config.h"
#include "interposer/reentry_guard.h"
#include "interposer/stack.h"
#include "interposer/state.h"
#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

using format::Event;
using format::EventType;

// ---- Handle pools: static storage, bump-allocated, never freed. ----

// Text of registered strings and domain names (copied: the caller's buffer may not live on).
constexpr size_t kTextArenaBytes = 1 << 20;
char g_text_arena[kTextArenaBytes];
std::atomic<size_t> g_text_used{0};

struct Named {
  const char* text;          // in g_text_arena, NUL-terminated
  std::atomic<uint32_t> id;  // interned lazily: the recorder may start after registration
  bool iteration;            // the name marks an iteration (CUCLIMB_ITERATION)
};

constexpr size_t kMaxStrings = 1 << 16;
constexpr size_t kMaxDomains = 4096;
Named g_strings[kMaxStrings];
std::atomic<size_t> g_string_count{0};
Named g_domains[kMaxDomains];
std::atomic<size_t> g_domain_count{0};

std::atomic<uint64_t> g_next_range_id{1};
std::atomic<uint64_t> g_next_fake_handle{1};
std::atomic<uint64_t> g_lost_handles{0};  // pools exhausted (reported in drops via InternString)

__attribute__((tls_model("initial-exec"))) thread_local int t_depth = 0;

const char* CopyText(const char* s) {
  if (s == nullptr)
    s = "";
  size_t len = std::strlen(s);
  if (len > 1023)
    len = 1023;
  const size_t at = g_text_used.fetch_add(len + 1, std::memory_order_relaxed);
  if (at + len + 1 > kTextArenaBytes)
    return nullptr;
  std::memcpy(g_text_arena + at, s, len);
  g_text_arena[at + len] = '\0';
  return g_text_arena + at;
}

// Wide strings are rare in NVTX users on Linux: keep ASCII, replace the rest.
void Narrow(const wchar_t* w, char* out, size_t size) {
  size_t n = 0;
  if (w != nullptr) {
    for (; w[n] != 0 && n + 1 < size; ++n) {
      out[n] = (w[n] > 0 && w[n] < 128) ? static_cast<char>(w[n]) : '?';
    }
  }
  out[n] = '\0';
}

Named* NewNamed(Named* pool, std::atomic<size_t>* count, size_t capacity, const char* text) {
  const size_t i = count->fetch_add(1, std::memory_order_relaxed);
  if (i >= capacity) {
    g_lost_handles.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  Named* n = &pool[i];
  n->text = CopyText(text);
  n->iteration = n->text != nullptr && IsIterationName(g_config, n->text);
  n->id.store(0, std::memory_order_relaxed);
  return n;
}

bool InPool(const void* p, const Named* pool, size_t capacity) {
  const auto* n = static_cast<const Named*>(p);
  return n >= pool && n < pool + capacity &&
         (reinterpret_cast<uintptr_t>(n) - reinterpret_cast<uintptr_t>(pool)) % sizeof(Named) == 0;
}

Named* FromHandle(const void* handle) {
  return static_cast<Named*>(const_cast<void*>(handle));
}

uint32_t IdOf(Named* n) {
  if (n == nullptr || n->text == nullptr)
    return format::kNoString;
  uint32_t id = n->id.load(std::memory_order_acquire);
  if (id == 0) {
    id = InternString(n->text);
    n->id.store(id, std::memory_order_release);
  }
  return id;
}

uint32_t DomainId(nvtxDomainHandle_t domain) {
  if (domain == nullptr || !InPool(domain, g_domains, kMaxDomains))
    return format::kNoString;
  return IdOf(FromHandle(domain));
}

struct Message {
  uint32_t id = format::kNoString;
  bool iteration = false;
};

Message FromAscii(const char* s) {
  Message m;
  if (s == nullptr)
    return m;
  m.id = InternString(s);
  m.iteration = IsIterationName(g_config, s);
  return m;
}

Message FromWide(const wchar_t* w) {
  char buf[256];
  Narrow(w, buf, sizeof(buf));
  return FromAscii(buf);
}

Message FromAttributes(const nvtxEventAttributes_t* a) {
  Message m;
  if (a == nullptr)
    return m;
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return FromAscii(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE:
      return FromWide(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED:
      if (InPool(a->message.registered, g_strings, kMaxStrings)) {
        Named* n = FromHandle(a->message.registered);
        m.id = IdOf(n);
        m.iteration = n->iteration;
      }
      return m;
    default:
      return m;
  }
}

bool PayloadOf(const nvtxEventAttributes_t* a, int64_t* value) {
  if (a == nullptr)
    return false;
  switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
      *value = static_cast<int64_t>(a->payload.ullValue);
      return true;
    case NVTX_PAYLOAD_TYPE_INT64:
      *value = a->payload.llValue;
      return true;
    case NVTX_PAYLOAD_TYPE_DOUBLE:
      *value = static_cast<int64_t>(a->payload.dValue);
      return true;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
      *value = a->payload.uiValue;
      return true;
    case NVTX_PAYLOAD_TYPE_INT32:
      *value = a->payload.iValue;
      return true;
    case NVTX_PAYLOAD_TYPE_FLOAT:
      *value = static_cast<int64_t>(a->payload.fValue);
      return true;
    default:
      return false;
  }
}

// Every recording hook starts with this: gate, re-entrancy guard, start of our own time.
class Hook {
 public:
  Hook() noexcept
      : active_(g_capture_on.load(std::memory_order_relaxed) && !guard_.nested()),
        t0_(active_ ? TraceClockNow() : 0) {}
  ~Hook() {
    if (active_)
      AddSelfTime(TraceClockNow() - t0_);
  }
  bool active() const { return active_; }
  int64_t now() const { return t0_; }

 private:
  ReentryGuard guard_;
  bool active_;
  int64_t t0_;
};

Event Base(EventType type, const Hook& h) {
  Event ev = format::MakeEvent(type);
  ev.ts = h.now();
  ev.tid = CurrentTid();
  return ev;
}

void EmitNamed(EventType type, const Hook& h, uint32_t domain, const Message& m, bool has_payload,
               int64_t payload, uint64_t range_id) {
  Event ev = Base(type, h);
  ev.name = m.id;
  ev.domain = domain;
  ev.addr = range_id;
  if (has_payload)
    ev.value = payload;
  Record(ev);
  if (m.iteration && type != EventType::kRangeEnd) {
    NoteIterationBoundary(has_payload, static_cast<uint64_t>(payload));
  }
}

// ---- Core ----

void NVTX_API MarkEx(const nvtxEventAttributes_t* a) noexcept {
  Hook h;
  if (!h.active())
    return;
  int64_t payload = 0;
  const bool has = PayloadOf(a, &payload);
  EmitNamed(EventType::kMark, h, 0, FromAttributes(a), has, payload, 0);
}

void NVTX_API MarkA(const char* message) noexcept {
  Hook h;
  if (!h.active())
    return;
  EmitNamed(EventType::kMark, h, 0, FromAscii(message), false, 0, 0);
}

void NVTX_API MarkW(const wchar_t* message) noexcept {
  Hook h;
  if (!h.active())
    return;
  EmitNamed(EventType::kMark, h, 0, FromWide(message), false, 0, 0);
}

nvtxRangeId_t StartRange(nvtxDomainHandle_t domain, const Message& m, bool has, int64_t payload) {
  const uint64_t id = g_next_range_id.fetch_add(1, std::memory_order_relaxed);
  Hook h;
  if (h.active())
    EmitNamed(EventType::kRangeStart, h, DomainId(domain), m, has, payload, id);
  return id;
}

nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) noexcept {
  int64_t payload = 0;
  const bool has = PayloadOf(a, &payload);
  if (!g_capture_on.load(std::memory_order_relaxed))
    return g_next_range_id.fetch_add(1);
  return StartRange(nullptr, FromAttributes(a), has, payload);
}

nvtxRangeId_t NVTX_API RangeStartA(const char* message) noexcept {
  if (!g_capture_on.load(std::memory_order_relaxed))
    return g_next_range_id.fetch_add(1);
  return StartRange(nullptr, FromAscii(message), false, 0);
}

nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* message) noexcept {
  if (!g_capture_on.load(std::memory_order_relaxed))
    return g_next_range_id.fetch_add(1);
  return StartRange(nullptr, FromWide(message), false, 0);
}

void EndRange(nvtxDomainHandle_t domain, nvtxRangeId_t id) {
  Hook h;
  if (!h.active())
    return;
  Event ev = Base(EventType::kRangeEnd, h);
  ev.addr = id;
  ev.domain = DomainId(domain);
  Record(ev);
}

void NVTX_API RangeEnd(nvtxRangeId_t id) noexcept {
  EndRange(nullptr, id);
}

int PushRange(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a, const char* ascii,
              const wchar_t* wide) {
  const int level = t_depth++;
  Hook h;
  if (!h.active())
    return level;
  int64_t payload = 0;
  const bool has = PayloadOf(a, &payload);
  const Message m = a != nullptr       ? FromAttributes(a)
                    : ascii != nullptr ? FromAscii(ascii)
                                       : FromWide(wide);
  Event ev = Base(EventType::kPush, h);
  ev.name = m.id;
  ev.domain = DomainId(domain);
  if (has)
    ev.value = payload;
  Record(ev);
  if (m.iteration)
    NoteIterationBoundary(has, static_cast<uint64_t>(payload));
  return level;
}

int PopRange(nvtxDomainHandle_t domain) {
  if (t_depth == 0)
    return -1;  // unbalanced pop: NVTX's documented error value
  const int level = --t_depth;
  Hook h;
  if (!h.active())
    return level;
  Event ev = Base(EventType::kPop, h);
  ev.domain = DomainId(domain);
  Record(ev);
  return level;
}

int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) noexcept {
  return PushRange(nullptr, a, nullptr, nullptr);
}
int NVTX_API RangePushA(const char* message) noexcept {
  return PushRange(nullptr, nullptr, message != nullptr ? message : "", nullptr);
}
int NVTX_API RangePushW(const wchar_t* message) noexcept {
  return PushRange(nullptr, nullptr, nullptr, message != nullptr ? message : L"");
}
int NVTX_API RangePop() noexcept {
  return PopRange(nullptr);
}

void NameThread(uint32_t tid, const char* name) {
  Hook h;
  if (!h.active())
    return;
  Event ev = Base(EventType::kThread, h);
  ev.tid = tid;
  ev.name = name != nullptr ? InternString(name) : format::kNoString;
  Record(ev);
}

void NVTX_API NameOsThreadA(uint32_t tid, const char* name) noexcept {
  NameThread(tid, name);
}
void NVTX_API NameOsThreadW(uint32_t tid, const wchar_t* name) noexcept {
  char buf[256];
  Narrow(name, buf, sizeof(buf));
  NameThread(tid, buf);
}
void NVTX_API NameCategoryA(uint32_t, const char*) noexcept {}
void NVTX_API NameCategoryW(uint32_t, const wchar_t*) noexcept {}

// ---- Core2 (domains) ----

void NVTX_API DomainMarkEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) noexcept {
  Hook h;
  if (!h.active())
    return;
  int64_t payload = 0;
  const bool has = PayloadOf(a, &payload);
  EmitNamed(EventType::kMark, h, DomainId(domain), FromAttributes(a), has, payload, 0);
}

nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t domain,
                                          const nvtxEventAttributes_t* a) noexcept {
  if (!g_capture_on.load(std::memory_order_relaxed))
    return g_next_range_id.fetch_add(1);
  int64_t payload = 0;
  const bool has = PayloadOf(a, &payload);
  return StartRange(domain, FromAttributes(a), has, payload);
}

void NVTX_API DomainRangeEnd(nvtxDomainHandle_t domain, nvtxRangeId_t id) noexcept {
  EndRange(domain, id);
}

int NVTX_API DomainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) noexcept {
  return PushRange(domain, a, nullptr, nullptr);
}

int NVTX_API DomainRangePop(nvtxDomainHandle_t domain) noexcept {
  return PopRange(domain);
}

void NVTX_API DomainNameCategoryA(nvtxDomainHandle_t, uint32_t, const char*) noexcept {}
void NVTX_API DomainNameCategoryW(nvtxDomainHandle_t, uint32_t, const wchar_t*) noexcept {}

// Registration works while paused: the handles outlive any pause.
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* s) noexcept {
  ReentryGuard guard;
  Named* n = NewNamed(g_strings, &g_string_count, kMaxStrings, s);
  return reinterpret_cast<nvtxStringHandle_t>(n);
}

nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t domain,
                                                  const wchar_t* s) noexcept {
  char buf[1024];
  Narrow(s, buf, sizeof(buf));
  return DomainRegisterStringA(domain, buf);
}

nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) noexcept {
  ReentryGuard guard;
  Named* n = NewNamed(g_domains, &g_domain_count, kMaxDomains, name);
  return reinterpret_cast<nvtxDomainHandle_t>(n);
}

nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* name) noexcept {
  char buf[1024];
  Narrow(name, buf, sizeof(buf));
  return DomainCreateA(buf);
}

void NVTX_API DomainDestroy(nvtxDomainHandle_t) noexcept {}  // handles stay valid: never freed

void NVTX_API Initialize(const void*) noexcept {}

// ---- Memory extension ----

uint64_t FakeHandle() {
  // Non-null, never a valid address of ours, unique per process.
  return (uint64_t{1} << 62) | (g_next_fake_handle.fetch_add(1, std::memory_order_relaxed) << 4);
}

uint32_t HeapName(const nvtxMemHeapDesc_t* desc) {
  if (desc == nullptr)
    return format::kNoString;
  if (desc->messageType == NVTX_MESSAGE_TYPE_ASCII)
    return FromAscii(desc->message.ascii).id;
  if (desc->messageType == NVTX_MESSAGE_TYPE_UNICODE)
    return FromWide(desc->message.unicode).id;
  if (desc->messageType == NVTX_MESSAGE_TYPE_REGISTERED &&
      InPool(desc->message.registered, g_strings, kMaxStrings)) {
    return IdOf(FromHandle(desc->message.registered));
  }
  return format::kNoString;
}

nvtxMemHeapHandle_t NVTX_API MemHeapRegister(nvtxDomainHandle_t domain,
                                             const nvtxMemHeapDesc_t* desc) noexcept {
  uint64_t addr = 0;
  uint64_t size = 0;
  if (desc != nullptr && desc->type == NVTX_MEM_TYPE_VIRTUAL_ADDRESS &&
      desc->typeSpecificDesc != nullptr &&
      desc->typeSpecificDescSize >= sizeof(nvtxMemVirtualRangeDesc_t)) {
    const auto* range = static_cast<const nvtxMemVirtualRangeDesc_t*>(desc->typeSpecificDesc);
    addr = reinterpret_cast<uint64_t>(range->ptr);
    size = range->size;
  }
  // "Where the heap is virtual memory accessible, the address of the heap's memory itself is its
  // handle" (nvToolsExtMem.h); otherwise the tool makes one up.
  const uint64_t handle = addr != 0 ? addr : FakeHandle();
  Hook h;
  if (h.active()) {
    Event ev = Base(EventType::kHeap, h);
    ev.handle = handle;
    ev.addr = addr;
    ev.size = size;
    ev.domain = DomainId(domain);
    ev.name = HeapName(desc);
    Record(ev);
  }
  return reinterpret_cast<nvtxMemHeapHandle_t>(handle);
}

void HeapOnly(EventType type, nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap) {
  Hook h;
  if (!h.active())
    return;
  Event ev = Base(type, h);
  ev.handle = reinterpret_cast<uint64_t>(heap);
  ev.domain = DomainId(domain);
  Record(ev);
}

void NVTX_API MemHeapUnregister(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap) noexcept {
  HeapOnly(EventType::kHeapDestroy, domain, heap);
}

void NVTX_API MemHeapReset(nvtxDomainHandle_t domain, nvtxMemHeapHandle_t heap) noexcept {
  HeapOnly(EventType::kHeapReset, domain, heap);
}

// Walks a batch of virtual ranges (element size from the caller, for forward compatibility).
template <typename Fn>
void ForEachRange(uint32_t type, const void* elements, size_t count, size_t element_size, Fn fn) {
  if (type != NVTX_MEM_TYPE_VIRTUAL_ADDRESS || elements == nullptr ||
      element_size < sizeof(nvtxMemVirtualRangeDesc_t)) {
    return;
  }
  const auto* bytes = static_cast<const unsigned char*>(elements);
  for (size_t i = 0; i < count; ++i) {
    nvtxMemVirtualRangeDesc_t range;
    std::memcpy(&range, bytes + i * element_size, sizeof(range));
    fn(i, range);
  }
}

void NVTX_API MemRegionsRegister(nvtxDomainHandle_t domain,
                                 const nvtxMemRegionsRegisterBatch_t* desc) noexcept {
  if (desc == nullptr)
    return;
  Hook h;
  const uint32_t domain_id = h.active() ? DomainId(domain) : 0;
  const uint32_t stack =
      h.active() ? CaptureStack(g_config.stacks, g_config.stack_depth, g_config.python_stacks) : 0;
  ForEachRange(desc->regionType, desc->regionDescElements, desc->regionCount,
               desc->regionDescElementSize, [&](size_t i, const nvtxMemVirtualRangeDesc_t& r) {
                 const uint64_t addr = reinterpret_cast<uint64_t>(r.ptr);
                 const uint64_t handle = addr != 0 ? addr : FakeHandle();
                 if (desc->regionHandleElementsOut != nullptr) {
                   desc->regionHandleElementsOut[i] =
                       reinterpret_cast<nvtxMemRegionHandle_t>(handle);
                 }
                 if (!h.active())
                   return;
                 Event ev = Base(EventType::kRegion, h);
                 ev.aux = reinterpret_cast<uint64_t>(desc->heap);
                 ev.addr = addr;
                 ev.size = r.size;
                 ev.handle = handle;
                 ev.domain = domain_id;
                 ev.stack = stack;
                 Record(ev);
               });
}

void NVTX_API MemRegionsResize(nvtxDomainHandle_t domain,
                               const nvtxMemRegionsResizeBatch_t* desc) noexcept {
  if (desc == nullptr)
    return;
  Hook h;
  if (!h.active())
    return;
  const uint32_t domain_id = DomainId(domain);
  // A resize is a region event for an address that is already live, with the new size.
  ForEachRange(desc->regionType, desc->regionDescElements, desc->regionDescCount,
               desc->regionDescElementSize, [&](size_t, const nvtxMemVirtualRangeDesc_t& r) {
                 Event ev = Base(EventType::kRegion, h);
                 ev.addr = reinterpret_cast<uint64_t>(r.ptr);
                 ev.size = r.size;
                 ev.handle = ev.addr;
                 ev.domain = domain_id;
                 Record(ev);
               });
}

void NVTX_API MemRegionsUnregister(nvtxDomainHandle_t domain,
                                   const nvtxMemRegionsUnregisterBatch_t* desc) noexcept {
  if (desc == nullptr || desc->refElements == nullptr)
    return;
  Hook h;
  if (!h.active())
    return;
  const uint32_t domain_id = DomainId(domain);
  const size_t element_size = desc->refElementSize >= sizeof(nvtxMemRegionRef_t)
                                  ? desc->refElementSize
                                  : sizeof(nvtxMemRegionRef_t);
  const auto* bytes = reinterpret_cast<const unsigned char*>(desc->refElements);
  for (size_t i = 0; i < desc->refCount; ++i) {
    nvtxMemRegionRef_t ref;
    std::memcpy(&ref, bytes + i * element_size, sizeof(ref));
    Event ev = Base(EventType::kRegionFree, h);
    ev.domain = domain_id;
    if (desc->refType == NVTX_MEM_REGION_REF_TYPE_HANDLE) {
      ev.handle = reinterpret_cast<uint64_t>(ref.handle);
      ev.addr = ev.handle;  // our region handles are the region addresses
    } else {
      ev.addr = reinterpret_cast<uint64_t>(ref.pointer);
    }
    Record(ev);
  }
}

void NVTX_API MemRegionsName(nvtxDomainHandle_t, const nvtxMemRegionsNameBatch_t*) noexcept {}

// ---- Attaching ----

using NvtxFn = NvtxFunctionPointer;

template <typename F>
NvtxFn Fn(F f) {
  return reinterpret_cast<NvtxFn>(f);
}

void Fill(const NvtxExportTableCallbacks* callbacks, NvtxCallbackModule module,
          const std::pair<unsigned, NvtxFn>* entries, size_t count) {
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;
  if (callbacks->GetModuleFunctionTable == nullptr ||
      callbacks->GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) {
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const unsigned slot = entries[i].first;
    if (slot < size && table[slot] != nullptr)
      *table[slot] = entries[i].second;
  }
}

}  // namespace

int NvtxInitializeCore(const void* (*get_export_table)(uint32_t)) noexcept {
  if (get_export_table == nullptr)
    return 0;
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks))
    return 0;
  const std::pair<unsigned, NvtxFn> core[] = {
      {NVTX_CBID_CORE_MarkEx, Fn(&MarkEx)},
      {NVTX_CBID_CORE_MarkA, Fn(&MarkA)},
      {NVTX_CBID_CORE_MarkW, Fn(&MarkW)},
      {NVTX_CBID_CORE_RangeStartEx, Fn(&RangeStartEx)},
      {NVTX_CBID_CORE_RangeStartA, Fn(&RangeStartA)},
      {NVTX_CBID_CORE_RangeStartW, Fn(&RangeStartW)},
      {NVTX_CBID_CORE_RangeEnd, Fn(&RangeEnd)},
      {NVTX_CBID_CORE_RangePushEx, Fn(&RangePushEx)},
      {NVTX_CBID_CORE_RangePushA, Fn(&RangePushA)},
      {NVTX_CBID_CORE_RangePushW, Fn(&RangePushW)},
      {NVTX_CBID_CORE_RangePop, Fn(&RangePop)},
      {NVTX_CBID_CORE_NameCategoryA, Fn(&NameCategoryA)},
      {NVTX_CBID_CORE_NameCategoryW, Fn(&NameCategoryW)},
      {NVTX_CBID_CORE_NameOsThreadA, Fn(&NameOsThreadA)},
      {NVTX_CBID_CORE_NameOsThreadW, Fn(&NameOsThreadW)},
  };
  const std::pair<unsigned, NvtxFn> core2[] = {
      {NVTX_CBID_CORE2_DomainMarkEx, Fn(&DomainMarkEx)},
      {NVTX_CBID_CORE2_DomainRangeStartEx, Fn(&DomainRangeStartEx)},
      {NVTX_CBID_CORE2_DomainRangeEnd, Fn(&DomainRangeEnd)},
      {NVTX_CBID_CORE2_DomainRangePushEx, Fn(&DomainRangePushEx)},
      {NVTX_CBID_CORE2_DomainRangePop, Fn(&DomainRangePop)},
      {NVTX_CBID_CORE2_DomainNameCategoryA, Fn(&DomainNameCategoryA)},
      {NVTX_CBID_CORE2_DomainNameCategoryW, Fn(&DomainNameCategoryW)},
      {NVTX_CBID_CORE2_DomainRegisterStringA, Fn(&DomainRegisterStringA)},
      {NVTX_CBID_CORE2_DomainRegisterStringW, Fn(&DomainRegisterStringW)},
      {NVTX_CBID_CORE2_DomainCreateA, Fn(&DomainCreateA)},
      {NVTX_CBID_CORE2_DomainCreateW, Fn(&DomainCreateW)},
      {NVTX_CBID_CORE2_DomainDestroy, Fn(&DomainDestroy)},
      {NVTX_CBID_CORE2_Initialize, Fn(&Initialize)},
  };
  Fill(callbacks, NVTX_CB_MODULE_CORE, core, sizeof(core) / sizeof(core[0]));
  Fill(callbacks, NVTX_CB_MODULE_CORE2, core2, sizeof(core2) / sizeof(core2[0]));
  const auto* version =
      static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
  if (version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
      version->SetInjectionNvtxVersion != nullptr) {
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  }
  return 1;
}

int NvtxInitializeExtension(void* info) noexcept {
  auto* module = static_cast<nvtxExtModuleInfo_t*>(info);
  if (module == nullptr || module->moduleId != NVTX_EXT_MODULEID_MEM ||
      module->compatId != NVTX_EXT_COMPATID_MEM || module->segmentsCount < 1 ||
      module->segments == nullptr || module->segments[0].functionSlots == nullptr) {
    return 0;  // other extensions (payload, counters, CUDA-RT memory): NVTX makes them no-ops
  }
  nvtxExtModuleSegment_t& segment = module->segments[0];
  const std::pair<unsigned, intptr_t> slots[] = {
      {NVTX3EXT_CBID_nvtxMemHeapRegister, reinterpret_cast<intptr_t>(&MemHeapRegister)},
      {NVTX3EXT_CBID_nvtxMemHeapUnregister, reinterpret_cast<intptr_t>(&MemHeapUnregister)},
      {NVTX3EXT_CBID_nvtxMemHeapReset, reinterpret_cast<intptr_t>(&MemHeapReset)},
      {NVTX3EXT_CBID_nvtxMemRegionsRegister, reinterpret_cast<intptr_t>(&MemRegionsRegister)},
      {NVTX3EXT_CBID_nvtxMemRegionsResize, reinterpret_cast<intptr_t>(&MemRegionsResize)},
      {NVTX3EXT_CBID_nvtxMemRegionsUnregister, reinterpret_cast<intptr_t>(&MemRegionsUnregister)},
      {NVTX3EXT_CBID_nvtxMemRegionsName, reinterpret_cast<intptr_t>(&MemRegionsName)},
  };
  for (const auto& [slot, fn] : slots) {
    if (slot < segment.slotCount)
      segment.functionSlots[slot] = fn;
  }
  return 1;
}

void MarkIteration(uint64_t iteration) noexcept {
  Hook h;
  NoteIterationBoundary(true, iteration);
  if (!h.active())
    return;
  Event ev = Base(EventType::kMark, h);
  ev.name = InternString("iteration");
  ev.domain = InternString("cuclimb");
  ev.value = static_cast<int64_t>(iteration);
  Record(ev);
}

}  // namespace cuclimb::interposer
