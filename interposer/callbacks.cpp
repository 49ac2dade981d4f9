// SPDX-License-Identifier: Apache-2.0
// CUPTI switchboard and per-group decoders (see callbacks.h and cbid_table.h).
#include "interposer/callbacks.h"

#include <atomic>
#include <cstring>
#include <type_traits>

#include <cupti.h>

#include "interposer/capture_state.h"
#include "interposer/cbid_table.h"
#include "interposer/clock.h"
#include "interposer/reentry_guard.h"
#include "interposer/stack.h"
#include "interposer/state.h"
#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

using format::Event;
using format::EventType;
using format::MemoryKind;

// String ids of API names, by driver cbid (filled by InternApiNames).
constexpr size_t kMaxDriverCbid = CUPTI_DRIVER_TRACE_CBID_SIZE;
std::atomic<uint32_t> g_api_names[kMaxDriverCbid] = {};
// Names that are not API names.
std::atomic<uint32_t> g_str_resource{0};
std::atomic<uint64_t>* g_debug_counts = nullptr;

// Per-call facts shared by every decoder.
struct Call {
  CUpti_CallbackId cbid;
  const CUpti_CallbackData* cb;
  int64_t t0;  // trace ns at ENTER
  int64_t t1;  // trace ns at EXIT
  uint32_t tid;
  int32_t device;
  CUresult result;
};

constexpr auto kKnown = [] {
  struct Table {
    bool known[kMaxDriverCbid] = {};
  } t;
#define CUCLIMB_KNOWN(name, group, decoder, keeper) t.known[CUPTI_DRIVER_TRACE_CBID_##name] = true;
  CUCLIMB_DRIVER_CBIDS(CUCLIMB_KNOWN)
#undef CUCLIMB_KNOWN
  return t;
}();

bool IsKnown(CUpti_CallbackId cbid) {
  return cbid < kMaxDriverCbid && kKnown.known[cbid];
}

uint32_t ApiName(CUpti_CallbackId cbid) {
  return cbid < kMaxDriverCbid ? g_api_names[cbid].load(std::memory_order_relaxed) : 0;
}

Event Base(EventType type, const Call& c) {
  Event ev = format::MakeEvent(type);
  ev.ts = c.t0;
  ev.dur = c.t1 - c.t0;
  ev.tid = c.tid;
  ev.api = ApiName(c.cbid);
  ev.corr = c.cb->correlationId;
  ev.device = c.device;
  return ev;
}

uint32_t Stack() {
  return CaptureStack(g_config.stacks, g_config.stack_depth, g_config.python_stacks);
}

void Emit(const Event& ev) {
  Record(ev);
}

// A failed call: its name, duration and CUresult.
void EmitFailure(const Call& c, uint64_t stream) {
  Event ev = Base(EventType::kApi, c);
  ev.value = static_cast<int64_t>(c.result);
  ev.stream = stream;
  Emit(ev);
}

void EmitAlloc(const Call& c, MemoryKind kind, uint64_t addr, uint64_t size, uint64_t stream,
               uint64_t pool) {
  Event ev = Base(EventType::kAlloc, c);
  ev.kind = static_cast<uint8_t>(kind);
  ev.addr = addr;
  ev.size = size;
  ev.stream = stream;
  ev.aux = pool;
  ev.stack = Stack();
  Emit(ev);
}

void EmitFree(const Call& c, MemoryKind kind, uint64_t addr, uint64_t stream) {
  Event ev = Base(EventType::kFree, c);
  ev.kind = static_cast<uint8_t>(kind);
  ev.addr = addr;
  ev.stream = stream;
  Emit(ev);
}

void EmitVmm(const Call& c, format::VmmOp op, uint64_t addr, uint64_t size, uint64_t handle,
             int32_t device, bool with_stack) {
  Event ev = Base(EventType::kVmm, c);
  ev.kind = static_cast<uint8_t>(op);
  ev.addr = addr;
  ev.size = size;
  ev.handle = handle;
  if (device >= 0)
    ev.device = device;
  if (with_stack)
    ev.stack = Stack();
  Emit(ev);
}

void EmitHandle(const Call& c, EventType type, format::HandleType handle_type, uint64_t handle,
                uint32_t name = 0) {
  Event ev = Base(type, c);
  ev.kind = static_cast<uint8_t>(handle_type);
  ev.handle = handle;
  ev.name = name;
  if (type == EventType::kCreate)
    ev.stack = Stack();
  Emit(ev);
}

void EmitSync(const Call& c, format::SyncKind kind, uint64_t stream, uint64_t handle) {
  Event ev = Base(EventType::kSync, c);
  ev.kind = static_cast<uint8_t>(kind);
  ev.stream = stream;
  ev.handle = handle;
  Emit(ev);
}

void EmitCopy(const Call& c, format::CopyKind kind, uint64_t dst, uint64_t src, uint64_t size,
              uint64_t stream) {
  Event ev = Base(EventType::kCopy, c);
  ev.kind = static_cast<uint8_t>(kind);
  ev.addr = dst;
  ev.aux = src;
  ev.size = size;
  ev.stream = stream;
  Emit(ev);
}

template <typename P>
uint64_t StreamOf(const P* p) {
  if constexpr (requires { p->hStream; }) {
    return reinterpret_cast<uint64_t>(p->hStream);
  } else {
    return 0;
  }
}

uint64_t U(const void* p) {
  return reinterpret_cast<uint64_t>(p);
}

// ---- Decoders: one overload set per cbid_table.h decoder name. Called at EXIT. ----

template <typename P>
void AllocDevice(const P* p, const Call& c) {
  EmitAlloc(c, MemoryKind::kDevice, *p->dptr, p->bytesize, 0, 0);
}

template <typename P>
void AllocPitch(const P* p, const Call& c) {
  const uint64_t pitch = p->pPitch != nullptr ? *p->pPitch : p->WidthInBytes;
  EmitAlloc(c, MemoryKind::kDevice, *p->dptr, pitch * p->Height, 0, 0);
}

template <typename P>
void AllocManaged(const P* p, const Call& c) {
  EmitAlloc(c, MemoryKind::kManaged, *p->dptr, p->bytesize, 0, 0);
}

template <typename P>
void AllocHost(const P* p, const Call& c) {
  EmitAlloc(c, MemoryKind::kPinned, U(*p->pp), p->bytesize, 0, 0);
}

template <typename P>
void HostRegister(const P* p, const Call& c) {
  EmitAlloc(c, MemoryKind::kHostRegistered, U(p->p), p->bytesize, 0, 0);
}

template <typename P>
void HostUnregister(const P* p, const Call& c) {
  EmitFree(c, MemoryKind::kHostRegistered, U(p->p), 0);
}

template <typename P>
void FreeDevice(const P* p, const Call& c) {
  if (p->dptr == 0)
    return;  // cudaFree(0) initializes the runtime
  EmitFree(c, MemoryKind::kUnknown, p->dptr, 0);
}

template <typename P>
void FreeHost(const P* p, const Call& c) {
  if (p->p == nullptr)
    return;
  EmitFree(c, MemoryKind::kPinned, U(p->p), 0);
}

template <typename P>
void AllocAsync(const P* p, const Call& c) {
  const uint64_t stream = StreamOf(p);
  uint64_t pool = 0;
  if constexpr (requires { p->pool; }) {
    pool = U(p->pool);
    g_pools.Add(pool, c.device);
  }
  // An allocation on a capturing stream becomes a node of the graph: its memory is reserved at
  // graph instantiation and mapped at launch, not now (no MEMORY2 record either).
  const MemoryKind kind = Captures().IsCapturing(stream) ? MemoryKind::kGraph : MemoryKind::kPool;
  EmitAlloc(c, kind, *p->dptr, p->bytesize, stream, pool);
}

template <typename P>
void FreeAsync(const P* p, const Call& c) {
  if (p->dptr == 0)
    return;
  const uint64_t stream = StreamOf(p);
  EmitFree(c, Captures().IsCapturing(stream) ? MemoryKind::kGraph : MemoryKind::kPool, p->dptr,
           stream);
}

template <typename P>
void IpcOpen(const P* p, const Call& c) {
  EmitAlloc(c, MemoryKind::kForeign, *p->pdptr, 0, 0, 0);
}

template <typename P>
void IpcClose(const P* p, const Call& c) {
  EmitFree(c, MemoryKind::kForeign, p->dptr, 0);
}

template <typename P>
void VmmImport(const P* p, const Call& c) {
  EmitVmm(c, format::VmmOp::kCreate, 0, 0, *p->handle, -1, true);
}

template <typename P>
void VmmReserve(const P* p, const Call& c) {
  EmitVmm(c, format::VmmOp::kReserve, *p->ptr, p->size, 0, -1, true);
}

template <typename P>
void VmmFreeVa(const P* p, const Call& c) {
  EmitVmm(c, format::VmmOp::kFreeVa, p->ptr, p->size, 0, -1, false);
}

template <typename P>
void VmmCreate(const P* p, const Call& c) {
  int32_t device = -1;
  if (p->prop != nullptr && p->prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
    device = p->prop->location.id;
  }
  EmitVmm(c, format::VmmOp::kCreate, 0, p->size, *p->handle, device, true);
}

template <typename P>
void VmmRelease(const P* p, const Call& c) {
  EmitVmm(c, format::VmmOp::kRelease, 0, 0, p->handle, -1, false);
}

template <typename P>
void VmmMap(const P* p, const Call& c) {
  EmitVmm(c, format::VmmOp::kMap, p->ptr, p->size, p->handle, -1, true);
}

template <typename P>
void VmmUnmap(const P* p, const Call& c) {
  EmitVmm(c, format::VmmOp::kUnmap, p->ptr, p->size, 0, -1, false);
}

template <typename P>
void VmmSetAccess(const P* p, const Call& c) {
  int32_t device = -1;
  if (p->desc != nullptr && p->count > 0 &&
      p->desc[0].location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
    device = p->desc[0].location.id;
  }
  EmitVmm(c, format::VmmOp::kSetAccess, p->ptr, p->size, 0, device, false);
}

template <typename P>
void PoolCreate(const P* p, const Call& c) {
  int32_t device = c.device;
  if (p->poolProps != nullptr && p->poolProps->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
    device = p->poolProps->location.id;
  }
  const uint64_t pool = U(*p->pool);
  g_pools.Add(pool, device);
  Call with_device = c;
  with_device.device = device;
  EmitHandle(with_device, EventType::kCreate, format::HandleType::kPool, pool);
}

template <typename P>
void PoolDestroy(const P* p, const Call& c) {
  EmitHandle(c, EventType::kDestroy, format::HandleType::kPool, U(p->pool));
}

template <typename P>
void PoolTrim(const P* p, const Call& c) {
  Event ev = Base(EventType::kPoolTrim, c);
  ev.handle = U(p->pool);
  ev.size = p->minBytesToKeep;
  Emit(ev);
}

const char* PoolAttributeName(CUmemPool_attribute attr) {
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      return "reuse_follow_event_dependencies";
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
      return "reuse_allow_opportunistic";
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      return "reuse_allow_internal_dependencies";
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      return "release_threshold";
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
      return "reserved_mem_current";
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      return "reserved_mem_high";
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
      return "used_mem_current";
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      return "used_mem_high";
    default:
      return "unknown";
  }
}

template <typename P>
void PoolSetAttribute(const P* p, const Call& c) {
  Event ev = Base(EventType::kPoolAttr, c);
  ev.handle = U(p->pool);
  const char* name = PoolAttributeName(p->attr);
  ev.name = InternString(name);
  if (p->value != nullptr) {
    const bool is_u64 = p->attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD ||
                        p->attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH ||
                        p->attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH ||
                        p->attr == CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT ||
                        p->attr == CU_MEMPOOL_ATTR_USED_MEM_CURRENT;
    if (is_u64) {
      uint64_t v = 0;
      std::memcpy(&v, p->value, sizeof(v));
      ev.value = static_cast<int64_t>(v);
    } else {
      int v = 0;
      std::memcpy(&v, p->value, sizeof(v));
      ev.value = v;
    }
  }
  Emit(ev);
}

void EmitDevicePool(const Call& c, uint64_t pool, int32_t device) {
  g_pools.Add(pool, device);
  Event ev = Base(EventType::kPoolAttr, c);
  ev.handle = pool;
  ev.name = InternString("device_pool");
  ev.value = device;
  Emit(ev);
}

template <typename P>
void DeviceSetMemPool(const P* p, const Call& c) {
  EmitDevicePool(c, U(p->pool), static_cast<int32_t>(p->dev));
}

template <typename P>
void MemSetMemPool(const P* p, const Call& c) {
  int32_t device = -1;
  if (p->location != nullptr && p->location->type == CU_MEM_LOCATION_TYPE_DEVICE) {
    device = p->location->id;
  }
  EmitDevicePool(c, U(p->pool), device);
}

template <typename P>
void GraphMemAllocNode(const P* p, const Call& c) {
  if (p->nodeParams == nullptr)
    return;
  EmitAlloc(c, MemoryKind::kGraph, p->nodeParams->dptr, p->nodeParams->bytesize, 0, 0);
}

template <typename P>
void GraphMemFreeNode(const P* p, const Call& c) {
  EmitFree(c, MemoryKind::kGraph, p->dptr, 0);
}

template <typename P>
void PlainApi(const P*, const Call& c) {
  Emit(Base(EventType::kApi, c));
}

template <typename P>
void StreamApi(const P* p, const Call& c) {
  Event ev = Base(EventType::kApi, c);
  ev.stream = StreamOf(p);
  Emit(ev);
}

template <typename P>
void EventCreate(const P* p, const Call& c) {
  EmitHandle(c, EventType::kCreate, format::HandleType::kEvent, U(*p->phEvent));
}

template <typename P>
void EventDestroy(const P* p, const Call& c) {
  EmitHandle(c, EventType::kDestroy, format::HandleType::kEvent, U(p->hEvent));
}

template <typename P>
void LibraryLoad(const P* p, const Call& c) {
  uint32_t name = 0;
  if constexpr (requires { p->fileName; }) {
    if (p->fileName != nullptr)
      name = InternString(p->fileName);
  }
  EmitHandle(c, EventType::kCreate, format::HandleType::kLibrary, U(*p->library), name);
}

template <typename P>
void LibraryUnload(const P* p, const Call& c) {
  EmitHandle(c, EventType::kDestroy, format::HandleType::kLibrary, U(p->library));
}

template <typename P>
void CaptureBegin(const P* p, const Call& c) {
  Event ev = Base(EventType::kApi, c);
  ev.stream = StreamOf(p);
  Emit(ev);
}

template <typename P>
void CaptureEnd(const P* p, const Call& c) {
  Event ev = Base(EventType::kApi, c);
  ev.stream = StreamOf(p);
  ev.value = static_cast<int64_t>(c.result);
  Emit(ev);
}

template <typename P>
void CtxTeardown(const P*, const Call& c) {
  Emit(Base(EventType::kApi, c));
}

void EmitLaunch(const Call& c, uint64_t function, const unsigned (&grid)[3],
                const unsigned (&block)[3], uint64_t smem, uint64_t stream) {
  Event ev = Base(EventType::kLaunch, c);
  const char* symbol = c.cb->symbolName;
  ev.name = g_functions.Get(function, symbol, [](const char* s) -> uint32_t {
    return s != nullptr ? InternString(s) : format::kNoString;
  });
  for (int i = 0; i < 3; ++i) {
    ev.grid[i] = grid[i];
    ev.block[i] = block[i];
  }
  ev.size = smem;
  ev.stream = stream;
  Emit(ev);
}

template <typename P>
void Launch(const P* p, const Call& c) {
  const unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ};
  const unsigned block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
  EmitLaunch(c, U(p->f), grid, block, p->sharedMemBytes, U(p->hStream));
}

template <typename P>
void LaunchEx(const P* p, const Call& c) {
  const CUlaunchConfig* config = p->config;
  if (config == nullptr) {
    const unsigned zero[3] = {0, 0, 0};
    EmitLaunch(c, U(p->f), zero, zero, 0, 0);
    return;
  }
  const unsigned grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
  const unsigned block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
  EmitLaunch(c, U(p->f), grid, block, config->sharedMemBytes, U(config->hStream));
}

template <typename P>
void GraphLaunch(const P* p, const Call& c) {
  Event ev = Base(EventType::kLaunch, c);
  ev.stream = U(p->hStream);
  if constexpr (requires { p->hGraphExec; }) {
    ev.handle = U(p->hGraphExec);
  } else {
    ev.handle = U(p->hGraph);
  }
  Emit(ev);
}

template <typename P>
void SyncStream(const P* p, const Call& c) {
  EmitSync(c, format::SyncKind::kStream, StreamOf(p), 0);
}

template <typename P>
void SyncEvent(const P* p, const Call& c) {
  EmitSync(c, format::SyncKind::kEvent, 0, U(p->hEvent));
}

template <typename P>
void SyncContext(const P*, const Call& c) {
  EmitSync(c, format::SyncKind::kContext, 0, 0);
}

template <typename P>
void StreamWaitEvent(const P* p, const Call& c) {
  EmitSync(c, format::SyncKind::kStreamWait, U(p->hStream), U(p->hEvent));
}

template <typename P>
void CopyAny(const P* p, const Call& c) {
  EmitCopy(c, format::CopyKind::kUnknown, p->dst, p->src, p->ByteCount, StreamOf(p));
}

template <typename P>
void CopyHtoD(const P* p, const Call& c) {
  EmitCopy(c, format::CopyKind::kHtoD, p->dstDevice, U(p->srcHost), p->ByteCount, StreamOf(p));
}

template <typename P>
void CopyDtoH(const P* p, const Call& c) {
  EmitCopy(c, format::CopyKind::kDtoH, U(p->dstHost), p->srcDevice, p->ByteCount, StreamOf(p));
}

template <typename P>
void CopyDtoD(const P* p, const Call& c) {
  EmitCopy(c, format::CopyKind::kDtoD, p->dstDevice, p->srcDevice, p->ByteCount, StreamOf(p));
}

format::CopyKind KindOf(CUmemorytype src, CUmemorytype dst) {
  const bool src_host = src == CU_MEMORYTYPE_HOST;
  const bool dst_host = dst == CU_MEMORYTYPE_HOST;
  if (src == CU_MEMORYTYPE_UNIFIED || dst == CU_MEMORYTYPE_UNIFIED)
    return format::CopyKind::kUnknown;
  if (src_host && dst_host)
    return format::CopyKind::kHtoH;
  if (src_host)
    return format::CopyKind::kHtoD;
  if (dst_host)
    return format::CopyKind::kDtoH;
  return format::CopyKind::kDtoD;
}

template <typename P>
void Copy2D(const P* p, const Call& c) {
  const CUDA_MEMCPY2D* m = p->pCopy;
  if (m == nullptr)
    return;
  const uint64_t dst = m->dstMemoryType == CU_MEMORYTYPE_HOST ? U(m->dstHost) : m->dstDevice;
  const uint64_t src = m->srcMemoryType == CU_MEMORYTYPE_HOST ? U(m->srcHost) : m->srcDevice;
  EmitCopy(c, KindOf(m->srcMemoryType, m->dstMemoryType), dst, src, m->WidthInBytes * m->Height,
           StreamOf(p));
}

template <typename P>
void CopyBatch(const P* p, const Call& c) {
  uint64_t total = 0;
  const size_t n = p->count < 4096 ? p->count : 4096;
  if (p->sizes != nullptr) {
    for (size_t i = 0; i < n; ++i) total += p->sizes[i];
  }
  const uint64_t dst = (p->dsts != nullptr && n > 0) ? p->dsts[0] : 0;
  const uint64_t src = (p->srcs != nullptr && n > 0) ? p->srcs[0] : 0;
  EmitCopy(c, format::CopyKind::kUnknown, dst, src, total, StreamOf(p));
}

template <typename P>
void Memset8(const P* p, const Call& c) {
  EmitCopy(c, format::CopyKind::kMemset, p->dstDevice, 0, p->N, StreamOf(p));
}

template <typename P>
void Memset16(const P* p, const Call& c) {
  EmitCopy(c, format::CopyKind::kMemset, p->dstDevice, 0, p->N * 2, StreamOf(p));
}

template <typename P>
void Memset32(const P* p, const Call& c) {
  EmitCopy(c, format::CopyKind::kMemset, p->dstDevice, 0, p->N * 4, StreamOf(p));
}

// cuCtxSynchronize (17) has no parameter struct.
struct NoParams {};
using cuCtxSynchronize_params = NoParams;

// ---- Keepers: cuclimb's own state, kept right whether recording or paused (cbid_table.h) ----

template <typename P>
void KeepCaptureBegin(const P* p, CUpti_ApiCallbackSite site, CUresult result) {
  if (site == CUPTI_API_EXIT && result == CUDA_SUCCESS)
    Captures().Begin(StreamOf(p));  // every begin variant has hStream first
}

template <typename P>
void KeepCaptureEnd(const P* p, CUpti_ApiCallbackSite site, CUresult) {
  // Whatever the result: the capture sequence is over even when it was invalidated.
  if (site == CUPTI_API_EXIT)
    Captures().End(StreamOf(p));
}

// Teardown handshakes run at ENTER, before the driver frees anything.
template <typename P>
void KeepCtxDestroy(const P* p, CUpti_ApiCallbackSite site, CUresult) {
  if (site == CUPTI_API_ENTER)
    g_contexts.DestroyBegin(U(p->ctx));
}

template <typename P>
void KeepPrimaryCtxGone(const P* p, CUpti_ApiCallbackSite site, CUresult) {
  // The primary context may die here (last release or reset): the writer leaves the device's
  // contexts alone until CONTEXT_CREATED brings one back.
  if (site == CUPTI_API_ENTER)
    g_contexts.DestroyDevice(static_cast<int32_t>(p->dev));
}

template <typename P>
void KeepPoolDestroy(const P* p, CUpti_ApiCallbackSite site, CUresult) {
  if (site == CUPTI_API_ENTER)
    g_pools.DestroyBegin(U(p->pool));
}

template <typename P>
void Stateless(const P*, CUpti_ApiCallbackSite, CUresult) {}

template <typename P>
constexpr bool HasKeeper(void (*keeper)(const P*, CUpti_ApiCallbackSite, CUresult)) {
  return keeper != &Stateless<P>;
}

// Runs the keeper of cbid, if it has one, at either site.
void Keep(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  const CUresult result = cb->callbackSite == CUPTI_API_EXIT && cb->functionReturnValue != nullptr
                              ? *static_cast<const CUresult*>(cb->functionReturnValue)
                              : CUDA_SUCCESS;
  switch (cbid) {
#define CUCLIMB_KEEP(name, group, decoder, keeper)                                           \
  case CUPTI_DRIVER_TRACE_CBID_##name:                                                       \
    keeper(static_cast<const name##_params*>(cb->functionParams), cb->callbackSite, result); \
    break;
    CUCLIMB_DRIVER_CBIDS(CUCLIMB_KEEP)
#undef CUCLIMB_KEEP
    default:
      break;
  }
}

void OnDriverExit(CUpti_CallbackId cbid, const CUpti_CallbackData* cb, int64_t t1) {
  if (!IsKnown(cbid))
    return;  // only with CUCLIMB_DEBUG_CBIDS, which enables the whole domain
  Call c{};
  c.cbid = cbid;
  c.cb = cb;
  c.t1 = t1;
  const int64_t enter =
      cb->correlationData != nullptr ? static_cast<int64_t>(*cb->correlationData) : 0;
  // ENTER may have been skipped (recording switched on mid-call): then the call is instantaneous.
  c.t0 = (enter > 0 && enter <= t1 && t1 - enter < 3'600'000'000'000) ? enter : t1;
  c.tid = CurrentTid();
  c.device = g_contexts.DeviceOf(U(cb->context));
  c.result = cb->functionReturnValue != nullptr
                 ? *static_cast<const CUresult*>(cb->functionReturnValue)
                 : CUDA_SUCCESS;
  Keep(cbid, cb);
  if (c.result != CUDA_SUCCESS) {
    // Out-parameters are meaningless; frees did not happen.
    EmitFailure(c, 0);
    return;
  }
  switch (cbid) {
#define CUCLIMB_DISPATCH(name, group, decoder, keeper)                 \
  case CUPTI_DRIVER_TRACE_CBID_##name:                                 \
    decoder(static_cast<const name##_params*>(cb->functionParams), c); \
    break;
    CUCLIMB_DRIVER_CBIDS(CUCLIMB_DISPATCH)
#undef CUCLIMB_DISPATCH
    default:
      break;
  }
}

void OnResource(CUpti_CallbackId cbid, const CUpti_ResourceData* data) {
  Event ev = format::MakeEvent(EventType::kCreate);
  ev.ts = TraceClockNow();
  ev.tid = CurrentTid();
  const uint64_t context = U(data->context);
  ev.device = g_contexts.DeviceOf(context);
  ev.api = g_str_resource.load(std::memory_order_relaxed);
  bool with_stack = true;
  switch (cbid) {
    case CUPTI_CBID_RESOURCE_CONTEXT_CREATED: {
      const int32_t device =
          g_hooks.device_of_context != nullptr ? g_hooks.device_of_context(context) : -1;
      g_contexts.Put(context, device);
      ev.device = device;
      ev.kind = static_cast<uint8_t>(format::HandleType::kContext);
      ev.handle = context;
      break;
    }
    case CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING:
      g_contexts.DestroyBegin(context);
      if (g_hooks.context_destroying != nullptr)
        g_hooks.context_destroying(context);
      ev.type = EventType::kDestroy;
      ev.kind = static_cast<uint8_t>(format::HandleType::kContext);
      ev.handle = context;
      break;
    case CUPTI_CBID_RESOURCE_STREAM_CREATED:
    case CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING:
      ev.type =
          cbid == CUPTI_CBID_RESOURCE_STREAM_CREATED ? EventType::kCreate : EventType::kDestroy;
      ev.kind = static_cast<uint8_t>(format::HandleType::kStream);
      ev.handle = U(data->resourceHandle.stream);
      break;
    case CUPTI_CBID_RESOURCE_MODULE_LOADED:
    case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING: {
      ev.type =
          cbid == CUPTI_CBID_RESOURCE_MODULE_LOADED ? EventType::kCreate : EventType::kDestroy;
      ev.kind = static_cast<uint8_t>(format::HandleType::kModule);
      const auto* module = static_cast<const CUpti_ModuleResourceData*>(data->resourceDescriptor);
      ev.handle = module != nullptr ? module->moduleId : 0;
      break;
    }
    case CUPTI_CBID_RESOURCE_GRAPH_CREATED:
    case CUPTI_CBID_RESOURCE_GRAPH_CLONED:
    case CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING: {
      ev.type = cbid == CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING ? EventType::kDestroy
                                                                   : EventType::kCreate;
      ev.kind = static_cast<uint8_t>(format::HandleType::kGraph);
      const auto* graph = static_cast<const CUpti_GraphData*>(data->resourceDescriptor);
      ev.handle = graph != nullptr ? U(graph->graph) : 0;
      break;
    }
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED:
    case CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING: {
      ev.type =
          cbid == CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED ? EventType::kCreate : EventType::kDestroy;
      ev.kind = static_cast<uint8_t>(format::HandleType::kGraphExec);
      const auto* graph = static_cast<const CUpti_GraphData*>(data->resourceDescriptor);
      ev.handle = graph != nullptr ? U(graph->graphExec) : 0;
      break;
    }
    default:
      return;
  }
  if (ev.type == EventType::kDestroy)
    with_stack = false;
  if (with_stack)
    ev.stack = Stack();
  Emit(ev);
}

const CbidEntry kDriverEntries[] = {
#define CUCLIMB_ENTRY(name, group, decoder, keeper) \
  {CUPTI_DRIVER_TRACE_CBID_##name, CbidGroup::group, HasKeeper(&keeper<name##_params>), #name},
    CUCLIMB_DRIVER_CBIDS(CUCLIMB_ENTRY)
#undef CUCLIMB_ENTRY
};

const CUpti_CallbackId kResourceEntries[] = {
#define CUCLIMB_RESOURCE(name) CUPTI_CBID_RESOURCE_##name,
    CUCLIMB_RESOURCE_CBIDS(CUCLIMB_RESOURCE)
#undef CUCLIMB_RESOURCE
};

// While paused (or before recording starts) only cuclimb's own state is kept right: the keepers
// of the enabled ids (capture tracking, teardown handshakes) and the context table. Nothing is
// recorded.
void TrackWhileOff(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    Keep(cbid, static_cast<const CUpti_CallbackData*>(data));
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const auto* r = static_cast<const CUpti_ResourceData*>(data);
    const uint64_t context = U(r->context);
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
      g_contexts.Put(
          context, g_hooks.device_of_context != nullptr ? g_hooks.device_of_context(context) : -1);
    } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      g_contexts.DestroyBegin(context);
    }
  }
}

__attribute__((tls_model("initial-exec"))) thread_local bool t_thread_seen = false;

}  // namespace

void CUPTIAPI OnCuptiCallback(void* /*userdata*/, CUpti_CallbackDomain domain,
                              CUpti_CallbackId cbid, const void* data) noexcept {
  if (g_debug_counts != nullptr && static_cast<size_t>(domain) < kDebugDomains &&
      cbid < kDebugCbids) {
    g_debug_counts[static_cast<size_t>(domain) * kDebugCbids + cbid].fetch_add(
        1, std::memory_order_relaxed);
  }
  if (g_in_child.load(std::memory_order_relaxed) ||
      g_bare_callbacks.load(std::memory_order_relaxed)) {
    return;
  }
  ReentryGuard guard;
  if (guard.nested())
    return;
  if (!g_capture_on.load(std::memory_order_relaxed)) {
    TrackWhileOff(domain, cbid, data);
    return;
  }
  switch (domain) {
    case CUPTI_CB_DOMAIN_DRIVER_API: {
      const auto* cb = static_cast<const CUpti_CallbackData*>(data);
      if (cb->callbackSite == CUPTI_API_ENTER) {
        const int64_t now = TraceClockNow();
        if (cb->correlationData != nullptr)
          *cb->correlationData = static_cast<uint64_t>(now);
        Keep(cbid, cb);
        return;
      }
      const int64_t t1 = TraceClockNow();
      OnDriverExit(cbid, cb, t1);
      if (!t_thread_seen) {
        t_thread_seen = true;
        if (g_hooks.thread_first_seen != nullptr)
          g_hooks.thread_first_seen();
      }
      AddSelfTime(TraceClockNow() - t1);
      return;
    }
    case CUPTI_CB_DOMAIN_RESOURCE: {
      const int64_t t0 = TraceClockNow();
      OnResource(cbid, static_cast<const CUpti_ResourceData*>(data));
      AddSelfTime(TraceClockNow() - t0);
      return;
    }
    case CUPTI_CB_DOMAIN_SYNCHRONIZE:
      // Pools above their release threshold give memory back at synchronization: let the
      // writer's next gauge sample see it.
      g_sync_seen.store(true, std::memory_order_relaxed);
      return;
    case CUPTI_CB_DOMAIN_STATE:
      if (cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
        // CUPTI finalized itself: nothing more will arrive through it.
        g_capture_on.store(false, std::memory_order_relaxed);
      }
      return;
    default:
      return;
  }
}

void InternApiNames() noexcept {
  for (const CbidEntry& e : kDriverEntries) {
    if (e.cbid < kMaxDriverCbid) {
      g_api_names[e.cbid].store(InternString(e.name), std::memory_order_relaxed);
    }
  }
  g_str_resource.store(InternString("resource"), std::memory_order_relaxed);
}

const CbidEntry* DriverCbids(size_t* count) noexcept {
  *count = sizeof(kDriverEntries) / sizeof(kDriverEntries[0]);
  return kDriverEntries;
}

const CUpti_CallbackId* ResourceCbids(size_t* count) noexcept {
  *count = sizeof(kResourceEntries) / sizeof(kResourceEntries[0]);
  return kResourceEntries;
}

void EnableCallbackCounting() noexcept {
  // Cold, once: static storage, so no allocation.
  static std::atomic<uint64_t> counts[kDebugDomains * kDebugCbids];
  g_debug_counts = counts;
}

uint64_t CallbackCount(size_t domain, size_t cbid) noexcept {
  if (g_debug_counts == nullptr || domain >= kDebugDomains || cbid >= kDebugCbids)
    return 0;
  return g_debug_counts[domain * kDebugCbids + cbid].load(std::memory_order_relaxed);
}

}  // namespace cuclimb::interposer
