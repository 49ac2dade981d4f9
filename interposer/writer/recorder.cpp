// SPDX-License-Identifier: Apache-2.0
// The recorder's global state, hot path and writer-thread lifecycle (API in recorder.h).
#include "interposer/writer/recorder.h"

#include <atomic>
#include <csignal>
#include <cstring>
#include <ctime>
#include <new>
#include <sys/syscall.h>
#include <thread>

#include <pthread.h>
#include <unistd.h>

#include "interposer/log.h"
#include "interposer/writer/file_sink.h"
#include "interposer/writer/interner.h"
#include "interposer/writer/thread_ring.h"
#include "interposer/writer/trace_writer.h"
#include "interposer/writer/writer_wake.h"

namespace cuclimb::interposer {
namespace {

// kStopping still records: the final tick (CUPTI flush) and exit-time frees land in the trace.
enum State : int { kOff, kStarting, kActive, kStopping, kStopped, kAbandoned };

bool Recording(int state) {
  return state == kActive || state == kStopping;
}

// Sizes of the interning tables: enough for every kernel, range and call site of a large
// framework; exhaustion is counted as drops, never fatal.
constexpr size_t kStringSlots = 1 << 18;
constexpr size_t kStringArenaBytes = 32u << 20;
constexpr size_t kStackSlots = 1 << 18;
constexpr size_t kStackArenaBytes = 64u << 20;

std::atomic<int> g_state{kOff};
std::atomic<bool> g_recording{true};
std::atomic<uint64_t> g_ringless_drops{0};
int64_t g_base_ns = 0;
clockid_t g_clock = CLOCK_MONOTONIC;

RingRegistry g_rings;
Interner g_strings;
Interner g_stacks;
FileSink g_sink;
// Constructed in StartRecorder and never destroyed: static destructors run at exit in an order
// we do not control, possibly while an atexit handler still flushes.
TraceWriter* g_writer = nullptr;
alignas(TraceWriter) unsigned char g_writer_storage[sizeof(TraceWriter)];

std::atomic<TickHook> g_tick_hook{nullptr};
std::atomic<void*> g_tick_context{nullptr};
int g_flush_interval_ms = 100;

// Writer thread control: lock-free, so a forked child finds nothing locked or waited on (a
// condition variable here once hung a child's exit() in pthread_cond_destroy), and a producer
// whose ring passes half full can wake the writer from anywhere, a signal handler included.
WriterWake g_wake;
std::atomic<bool> g_stop_requested{false};
std::thread* g_thread = nullptr;
alignas(std::thread) unsigned char g_thread_storage[sizeof(std::thread)];
std::thread::id g_writer_thread_id;

pthread_key_t g_ring_key;

// initial-exec: a dlopen'ed library must not allocate TLS lazily inside a callback.
__attribute__((tls_model("initial-exec"))) thread_local ThreadRing* t_ring = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local uint32_t t_tid = 0;

int64_t ClockNs() noexcept {
  timespec ts{};
  clock_gettime(g_clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void OrphanRing(void* ring) {
  RingRegistry::Orphan(static_cast<ThreadRing*>(ring));
}

ThreadRing* ClaimRing() noexcept {
  ThreadRing* r = g_rings.Claim(CurrentTid());
  if (r != nullptr) {
    t_ring = r;
    pthread_setspecific(g_ring_key, r);  // its destructor orphans the ring at thread exit
  }
  return r;
}

void RunTick() noexcept {
  if (TickHook hook = g_tick_hook.load(std::memory_order_acquire)) {
    hook(g_tick_context.load(std::memory_order_relaxed), TraceNow());
  }
}

// Drains every flush period (after the tick: CUPTI's buffers) and whenever a ring passes half
// full, so bursts faster than a period's worth of ring are written instead of dropped.
// `seen` is read before each check of the stop flag and before each drain, the first time by
// StartRecorder before this thread exists: a Wake() that comes after (a stop request, a ring
// filling up while we drain or before this thread first runs) makes the next sleep return.
void WriterLoop(uint32_t seen) noexcept {
  g_writer_thread_id = std::this_thread::get_id();
  const int64_t period_ns = int64_t{g_flush_interval_ms} * 1'000'000;
  int64_t next_tick = ClockNs() + period_ns;
  while (!g_stop_requested.load(std::memory_order_seq_cst)) {
    g_wake.SleepUnlessChanged(seen, next_tick - ClockNs());
    seen = g_wake.Sequence();
    if (g_stop_requested.load(std::memory_order_seq_cst))
      break;
    if (ClockNs() >= next_tick) {
      RunTick();
      next_tick = ClockNs() + period_ns;
    }
    g_writer->Drain(TraceNow(), /*seal=*/false);
  }
}

void RecordSwitch(bool on, const char* reason) noexcept {
  format::Event ev = format::MakeEvent(format::EventType::kRecording);
  ev.ts = TraceNow();
  ev.value = on ? 1 : 0;
  ev.text = InternString(reason);
  Record(ev);
}

}  // namespace

int64_t TraceNow() noexcept {
  return ClockNs() - g_base_ns;
}

uint32_t CurrentTid() noexcept {
  if (t_tid == 0)
    t_tid = static_cast<uint32_t>(syscall(SYS_gettid));
  return t_tid;
}

bool StartRecorder(const RecorderOptions& options) noexcept {
  int expected = kOff;
  if (!g_state.compare_exchange_strong(expected, kStarting))
    return false;  // already started
  g_clock = options.clock == format::ClockId::kMonotonicRaw ? CLOCK_MONOTONIC_RAW : CLOCK_MONOTONIC;
  g_base_ns = options.base_clock_ns != 0 ? options.base_clock_ns : ClockNs();
  g_flush_interval_ms = options.flush_interval_ms > 0 ? options.flush_interval_ms : 100;
  timespec real{};
  clock_gettime(CLOCK_REALTIME, &real);
  const int64_t realtime_ns =
      static_cast<int64_t>(real.tv_sec) * 1'000'000'000 + real.tv_nsec - (ClockNs() - g_base_ns);

  if (options.path == nullptr || !g_sink.Open(options.path)) {
    g_state.store(kOff);
    return false;
  }
  if (!g_strings.Init(kStringSlots, kStringArenaBytes) ||
      !g_stacks.Init(kStackSlots, kStackArenaBytes) ||
      pthread_key_create(&g_ring_key, OrphanRing) != 0) {
    LogWarning("cannot reserve memory for recording; the program runs untraced");
    g_sink.Close();
    g_state.store(kOff);
    return false;
  }
  g_rings.Configure(options.ring_kib * 1024);
  g_writer = new (g_writer_storage)
      TraceWriter(WriterInputs{&g_rings, &g_strings, &g_stacks, &g_ringless_drops},
                  options.zstd_level, options.chunk_kib * 1024);
  const format::FileHeader header = format::MakeFileHeader(
      options.clock, g_base_ns, realtime_ns, options.producer != nullptr ? options.producer : "");
  if (!g_writer->Begin(&g_sink, header)) {
    g_state.store(kOff);
    return false;
  }
  // The writer thread takes no signals: the program's handlers (profilers' SIGPROF, its own
  // SIGINT logic) must run on the program's threads, and we must not be interrupted mid-write.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  try {
    g_thread = new (g_thread_storage) std::thread(WriterLoop, g_wake.Sequence());
  } catch (...) {
    g_thread = nullptr;
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (g_thread == nullptr) {
    LogWarning("cannot start the writer thread; the program runs untraced");
    g_sink.Close();
    g_state.store(kOff);
    return false;
  }
  g_state.store(kActive, std::memory_order_release);
  return true;
}

bool RecorderActive() noexcept {
  return g_state.load(std::memory_order_relaxed) == kActive &&
         g_recording.load(std::memory_order_relaxed);
}

void SetRecording(bool on) noexcept {
  if (g_state.load(std::memory_order_relaxed) != kActive)
    return;
  if (!on)
    RecordSwitch(false, "paused");
  g_recording.store(on, std::memory_order_relaxed);
  if (on)
    RecordSwitch(true, "resumed");
}

bool Record(const format::Event& ev) noexcept {
  if (!Recording(g_state.load(std::memory_order_relaxed)) ||
      !g_recording.load(std::memory_order_relaxed)) {
    return false;
  }
  ThreadRing* r = t_ring;
  if (r == nullptr && (r = ClaimRing()) == nullptr) {
    g_ringless_drops.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const ThreadRing::PushResult result = r->Push(ev);
  if (result == ThreadRing::PushResult::kStoredHalfFull)
    g_wake.Wake();
  return result != ThreadRing::PushResult::kDropped;
}

uint32_t InternString(std::string_view s) noexcept {
  if (s.size() > format::kMaxStringBytes)
    s = s.substr(0, format::kMaxStringBytes);
  return g_strings.Intern(s.data(), s.size());
}

uint32_t InternStack(const uint64_t* frames, size_t count) noexcept {
  if (count == 0)
    return format::kNoStack;
  if (count > format::kMaxStackFrames)
    count = format::kMaxStackFrames;
  return g_stacks.Intern(frames, count * sizeof(uint64_t));
}

void AddSelfTime(int64_t ns) noexcept {
  if (ThreadRing* r = t_ring)
    r->AddSelfTime(ns);
}

void SetTickHook(TickHook hook, void* context) noexcept {
  g_tick_context.store(context, std::memory_order_relaxed);
  g_tick_hook.store(hook, std::memory_order_release);
}

void FlushRecorder() noexcept {
  if (g_state.load(std::memory_order_acquire) != kActive)
    return;
  RunTick();
  g_writer->Drain(TraceNow(), /*seal=*/true);
}

void StopRecorder(const char* status) noexcept {
  int expected = kActive;
  if (!g_state.compare_exchange_strong(expected, kStopping))
    return;
  const bool on_writer_thread = std::this_thread::get_id() == g_writer_thread_id;
  g_stop_requested.store(true, std::memory_order_seq_cst);
  g_wake.Wake();
  if (g_thread != nullptr && g_thread->joinable()) {
    if (on_writer_thread) {
      g_thread->detach();
    } else {
      g_thread->join();
    }
  }
  RunTick();  // the last CUPTI flush, still recorded
  g_writer->Finish(TraceNow(), status);
  g_sink.Close();
  g_state.store(kStopped, std::memory_order_release);
}

void AbandonRecorderInChild() noexcept {
  // fork() copied our memory but not the writer thread; its mutexes may be held forever. Touch
  // nothing the parent's threads used: forget the file descriptor and stop recording.
  g_state.store(kAbandoned, std::memory_order_relaxed);
  g_sink.Forget();
  t_ring = nullptr;
}

RecorderStats GetRecorderStats() noexcept {
  RecorderStats s{};
  uint64_t pushed = 0;
  for (size_t i = 0; i < g_rings.count(); ++i) {
    if (ThreadRing* r = g_rings.at(i))
      pushed += r->pushed();
  }
  s.events_recorded = pushed;
  if (g_writer != nullptr) {
    s.events_written = g_writer->events_written();
    s.events_dropped = g_writer->dropped_total();
    s.chunks_written = g_writer->chunks_written();
    s.bytes_written = g_writer->bytes_written();
  }
  return s;
}

}  // namespace cuclimb::interposer
