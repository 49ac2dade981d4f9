// SPDX-License-Identifier: Apache-2.0
// CUPTI activity buffers, flushing and decoding (see activity_buffers.h).
#include "interposer/activity_buffers.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <tuple>

#include <cupti.h>

#include "interposer/activity.h"
#include "interposer/clock.h"
#include "interposer/cupti_try.h"
#include "interposer/log.h"
#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

// 2 MiB buffers: about 10,000 kernel records, which the writer decodes within one tick without
// overflowing its ring. At most kMaxBuffers exist; beyond that CUPTI gets no buffer and counts
// the records it drops (reported in the trace).
constexpr size_t kBufferBytes = 2u << 20;
constexpr size_t kMaxBuffers = 128;
constexpr size_t kInitialBuffers = 4;

class SpinLock {
 public:
  void lock() noexcept {
    while (flag_.test_and_set(std::memory_order_acquire)) {
    }
  }
  void unlock() noexcept { flag_.clear(std::memory_order_release); }

 private:
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

struct Completed {
  uint8_t* buffer;
  size_t valid;
};

SpinLock g_lock;  // guards the free list and the queue; held for a few instructions
uint8_t* g_free[kMaxBuffers];
size_t g_free_count = 0;
size_t g_allocated = 0;
Completed g_queue[kMaxBuffers];
size_t g_queue_head = 0;  // next to decode
size_t g_queue_size = 0;

std::atomic<uint64_t> g_refused{0};  // buffer requests we could not satisfy
std::atomic<uint64_t> g_cupti_dropped{
    0};  // records CUPTI dropped (cuptiActivityGetNumDroppedRecords)
uint64_t g_reported_refused = 0;
uint64_t g_reported_dropped = 0;

std::mutex g_decode_mutex;  // one decoder at a time (writer tick vs exit path)
ActivityTranslator g_translator;
bool g_parse = true;
// The buffer being decoded and the last record read from it (resumed across calls).
Completed g_current{nullptr, 0};
CUpti_Activity* g_cursor = nullptr;

std::mutex g_enable_mutex;  // CUPTI asks callers to serialize enable/disable
std::atomic<bool> g_kernels_on{false};
std::atomic<bool> g_memory_on{false};

uint8_t* MapBuffer() {
  void* p = mmap(nullptr, kBufferBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;  // as many as fit
  uint8_t* b = nullptr;
  bool map_new = false;
  {
    std::lock_guard<SpinLock> lock(g_lock);
    if (g_free_count > 0) {
      b = g_free[--g_free_count];
    } else if (g_allocated < kMaxBuffers) {
      ++g_allocated;
      map_new = true;
    }
  }
  if (map_new) {
    b = MapBuffer();  // rare: the pool grows only while the writer falls behind
    if (b == nullptr) {
      std::lock_guard<SpinLock> lock(g_lock);
      --g_allocated;
    }
  }
  if (b == nullptr)
    g_refused.fetch_add(1, std::memory_order_relaxed);
  *buffer = b;
  *size = b != nullptr ? kBufferBytes : 0;
}

void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t,
                              size_t valid) {
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    g_cupti_dropped.fetch_add(dropped, std::memory_order_relaxed);
  }
  if (buffer == nullptr)
    return;
  std::lock_guard<SpinLock> lock(g_lock);
  // The queue holds every buffer that exists, so it cannot overflow.
  g_queue[(g_queue_head + g_queue_size) % kMaxBuffers] = Completed{buffer, valid};
  ++g_queue_size;
}

void Recycle(uint8_t* buffer, size_t valid) {
  // CUPTI was told (ZEROED_OUT_ACTIVITY_BUFFER) that buffers come zeroed: zero what it wrote.
  std::memset(buffer, 0, valid);
  std::lock_guard<SpinLock> lock(g_lock);
  g_free[g_free_count++] = buffer;
}

bool NextCompleted(Completed* out) {
  std::lock_guard<SpinLock> lock(g_lock);
  if (g_queue_size == 0)
    return false;
  *out = g_queue[g_queue_head];
  g_queue_head = (g_queue_head + 1) % kMaxBuffers;
  --g_queue_size;
  return true;
}

uint64_t CUPTIAPI Timestamp() {
  return static_cast<uint64_t>(ClockNs());
}

bool Enable(CUpti_ActivityKind kind, const char* name) {
  const CUptiResult r = cuptiActivityEnable(kind);
  if (r != CUPTI_SUCCESS) {
    const char* why = nullptr;
    cuptiGetResultString(r, &why);
    LogWarning("cannot enable CUPTI activity %s: %s; recording continues without it", name,
               why != nullptr ? why : "unknown error");
    return false;
  }
  return true;
}

}  // namespace

bool StartActivity(const ActivityOptions& options) noexcept {
  g_parse = options.parse;
  g_translator.InternNames();
  {
    std::lock_guard<SpinLock> lock(g_lock);
    for (size_t i = 0; i < kInitialBuffers; ++i) {
      uint8_t* b = MapBuffer();
      if (b == nullptr)
        break;
      g_free[g_free_count++] = b;
      ++g_allocated;
    }
  }
  // Same clock as the host events, registered before any kind is enabled.
  if (cuptiActivityRegisterTimestampCallback(Timestamp) != CUPTI_SUCCESS) {
    LogWarning("cannot set CUPTI's activity clock; GPU timestamps may not line up with host ones");
  }
  uint8_t zeroed = 1;
  size_t attr_size = sizeof(zeroed);
  CUCLIMB_CUPTI_TRY(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER,
                                              &attr_size, &zeroed),
                    "CUPTI zeroes every activity buffer itself (slower, records unchanged)");
  if (cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted) != CUPTI_SUCCESS) {
    LogWarning("cannot register CUPTI activity buffers; recording API callbacks and NVTX only");
    return false;
  }
  std::lock_guard<std::mutex> lock(g_enable_mutex);
  if (options.memory) {
    const bool ok = Enable(CUPTI_ACTIVITY_KIND_MEMORY2, "MEMORY2");
    Enable(CUPTI_ACTIVITY_KIND_MEMORY_POOL, "MEMORY_POOL");
    g_memory_on.store(ok, std::memory_order_relaxed);
  }
  if (options.kernels_all && Enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL")) {
    g_kernels_on.store(true, std::memory_order_relaxed);
  }
  return true;
}

void SetKernelActivity(bool on) noexcept {
  std::lock_guard<std::mutex> lock(g_enable_mutex);
  if (g_kernels_on.load(std::memory_order_relaxed) == on)
    return;
  const CUptiResult r = on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
                           : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r == CUPTI_SUCCESS) {
    g_kernels_on.store(on, std::memory_order_relaxed);
  } else {
    CUCLIMB_LOG_ONCE(kernel_toggle_once,
                     "cannot switch CUPTI kernel timing %s (CUPTI error %d); kernel sampling stops",
                     on ? "on" : "off", static_cast<int>(r));
  }
}

bool KernelActivityOn() noexcept {
  return g_kernels_on.load(std::memory_order_relaxed);
}

void SetMemoryActivity(bool on) noexcept {
  std::lock_guard<std::mutex> lock(g_enable_mutex);
  if (g_memory_on.load(std::memory_order_relaxed) == on)
    return;
  // MEMORY2 decides: without it the pool records alone say nothing about allocations.
  if (on) {
    if (CUCLIMB_CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY2),
                          "no sampled memory records") != CUPTI_SUCCESS) {
      return;
    }
    CUCLIMB_CUPTI_TRY(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMORY_POOL),
                      "no sampled pool records");
  } else {
    if (CUCLIMB_CUPTI_TRY(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY2),
                          "memory records stay on (about 1 us per allocation and free)") !=
        CUPTI_SUCCESS) {
      return;
    }
    CUCLIMB_CUPTI_TRY(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMORY_POOL),
                      "pool records stay on");
  }
  g_memory_on.store(on, std::memory_order_relaxed);
}

void FlushActivity(bool forced) noexcept {
  // No lock of ours is held here: CUPTI calls BufferCompleted from inside the flush.
  CUCLIMB_CUPTI_TRY(cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0),
                    "GPU records may arrive late or be missing at the end");
}

size_t DrainActivity(size_t max_events) noexcept {
  std::lock_guard<std::mutex> lock(g_decode_mutex);
  size_t recorded = 0;
  format::Event events[ActivityTranslator::kMaxEvents];
  while (recorded + ActivityTranslator::kMaxEvents <= max_events) {
    if (g_current.buffer == nullptr) {
      if (!NextCompleted(&g_current))
        break;
      g_cursor = nullptr;
    }
    bool buffer_done = !g_parse;
    while (!buffer_done && recorded + ActivityTranslator::kMaxEvents <= max_events) {
      const CUptiResult r =
          cuptiActivityGetNextRecord(g_current.buffer, g_current.valid, &g_cursor);
      if (r != CUPTI_SUCCESS) {
        buffer_done = true;  // CUPTI_ERROR_MAX_LIMIT_REACHED at the end, or a bad buffer
        break;
      }
      const size_t n = g_translator.Translate(g_cursor, events);
      for (size_t i = 0; i < n; ++i) recorded += Record(events[i]) ? 1 : 0;
    }
    if (!buffer_done)
      break;  // budget spent: resume this buffer next time
    Recycle(g_current.buffer, g_current.valid);
    g_current = Completed{nullptr, 0};
    g_cursor = nullptr;
  }
  return recorded;
}

void RecordActivityDrops() noexcept {
  const uint64_t dropped = g_cupti_dropped.load(std::memory_order_relaxed);
  const uint64_t refused = g_refused.load(std::memory_order_relaxed);
  for (auto [count, reported, reason] :
       {std::tuple{dropped, &g_reported_dropped, "cupti_records"},
        std::tuple{refused, &g_reported_refused, "cupti_buffer_refused"}}) {
    if (count == *reported)
      continue;
    format::Event ev = format::MakeEvent(format::EventType::kDrops);
    ev.ts = TraceClockNow();
    ev.value = static_cast<int64_t>(count - *reported);
    ev.text = InternString(reason);
    if (Record(ev))
      *reported = count;
  }
}

}  // namespace cuclimb::interposer
