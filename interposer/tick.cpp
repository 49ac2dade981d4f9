// SPDX-License-Identifier: Apache-2.0
// The writer's tick (see tick.h).
#include "interposer/tick.h"

#include <atomic>
#include <mutex>

#include "interposer/activity_buffers.h"
#include "interposer/capture_state.h"
#include "interposer/clock.h"
#include "interposer/config.h"
#include "interposer/cuda_code.h"
#include "interposer/cupti_setup.h"
#include "interposer/driver_api.h"
#include "interposer/modules.h"
#include "interposer/process_info.h"
#include "interposer/python_frames.h"
#include "interposer/reentry_guard.h"
#include "interposer/sampler.h"
#include "interposer/sampling_window.h"
#include "interposer/session.h"
#include "interposer/state.h"
#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

constexpr int64_t kActivityFlushNs = 200'000'000;  // CUPTI flush period (completed buffers)
constexpr int64_t kMappingsCheckNs = 1'000'000'000;
// Without CUPTI (NVTX only, or CUPTI attaching late) the process is described after this long.
constexpr int64_t kProcessWaitNs = 2'000'000'000;

// Threads that flush or stop the recorder (exit, signal, cuclimb_flush) are not the writer.
__attribute__((tls_model("initial-exec"))) thread_local bool t_not_writer = false;

const Session* g_session = nullptr;
size_t g_activity_budget = 8192;
std::atomic<bool> g_windows{false};

// One tick at a time (the writer vs a flush or stop on another thread); the state below is
// under it.
std::mutex g_tick_mutex;
int64_t g_last_flush_ns = 0;
int64_t g_last_mappings_ns = 0;
bool g_process_emitted = false;
bool g_first_gauges_done = false;
SamplingWindow g_window{1, 0};

// Objects were loaded: where CUDA's runtime code lies (stacks begin at the caller) and, with
// --stacks python, the interpreter's support.
void RefreshCodeRanges() {
  RefreshCudaRuntimeCode();
  if (g_config.python_stacks)
    RefreshPythonSupport();
}

void EmitProcess(int64_t now) {
  ProcessFacts facts;
  ReadProcessFacts(&facts);
  const CuptiState cupti = g_session->cupti();
  if (cupti == CuptiState::kActive || cupti == CuptiState::kPassive) {
    const DriverApi& d = Driver();
    int version = 0;
    if (d.DriverGetVersion != nullptr && d.DriverGetVersion(&version) == CUDA_SUCCESS)
      facts.driver_version = static_cast<uint32_t>(version);
  }
  facts.cupti_version = CuptiVersion();
  Record(ProcessEvent(facts, now, [](std::string_view s) { return InternString(s); }));
  g_process_emitted = true;
}

void SamplingWindowGauge(int64_t now, bool open) {
  format::Event ev = format::MakeEvent(format::EventType::kGauge);
  ev.ts = now;
  ev.name = InternString("cuclimb.sampling_window");
  ev.value = open ? 1 : 0;
  Record(ev);
}

// The window's kinds: only those configured as sampled.
void SetWindowActivity(bool on) {
  if (g_config.kernels == KernelMode::kSampled)
    SetKernelActivity(on);
  if (g_config.memory_activity == MemoryActivity::kSampled)
    SetMemoryActivity(on);
}

void SamplingWindowTick(int64_t now) {
  const SamplingWindow::Action action = g_window.Tick(
      now, g_iteration_marks.load(std::memory_order_relaxed), Captures().Active() > 0);
  if (action == SamplingWindow::Action::kNone)
    return;
  const bool open = action == SamplingWindow::Action::kOpen;
  SetWindowActivity(open);
  SamplingWindowGauge(now, open);
}

void OnTick(void*, int64_t now) noexcept {
  if (g_in_child.load(std::memory_order_relaxed))
    return;
  std::unique_lock<std::mutex> lock(g_tick_mutex, std::try_to_lock);
  if (!lock.owns_lock())
    return;
  ReentryGuard guard;  // our own CUDA/CUPTI calls must not record themselves
  const bool writer = !t_not_writer;
  const bool stopping = g_session->stopping();
  const CuptiState cupti_state = g_session->cupti();
  // Session records only while capturing: the sink drops everything while paused, and a record
  // taken as written would never come again (a pause writes them first: WriteSessionRecords).
  const bool capturing = g_capture_on.load(std::memory_order_acquire);
  if (capturing && !g_process_emitted &&
      (cupti_state != CuptiState::kUninit || now > kProcessWaitNs || stopping)) {
    EmitProcess(now);
  }
  if (capturing && writer && now - g_last_mappings_ns >= kMappingsCheckNs &&
      (g_last_mappings_ns == 0 || MappingsChanged())) {
    g_last_mappings_ns = now;
    RecordMappings();
    RefreshCodeRanges();
  }
  if (cupti_state != CuptiState::kActive)
    return;
  if (writer && !stopping && now - g_last_flush_ns >= kActivityFlushNs) {
    g_last_flush_ns = now;
    FlushActivity(false);
  }
  DrainActivity(g_activity_budget);
  RecordActivityDrops();
  if (!writer || stopping)
    return;
  // Switching kinds and querying the driver are safe only when every capture is known.
  const bool queries_safe = CaptureTrackingComplete();
  if (queries_safe && g_windows.load(std::memory_order_relaxed) &&
      g_capture_on.load(std::memory_order_relaxed)) {
    SamplingWindowTick(now);
  }
  if (!g_config.gauges || !queries_safe)
    return;
  if (!g_first_gauges_done) {
    g_first_gauges_done = true;
    SampleGaugesNow(now);
  } else {
    SampleGaugesTick(now);
  }
}

}  // namespace

void StartTick(const Session* session, size_t activity_budget) noexcept {
  g_session = session;
  g_activity_budget = activity_budget;
  g_window = SamplingWindow(g_config.kernel_every, 0);  // trace time 0 is the start
  SetTickHook(OnTick, nullptr);
}

void EnableSamplingWindows() noexcept {
  g_windows.store(true, std::memory_order_relaxed);
}

void WriteSessionRecords() noexcept {
  // Blocking, unlike the tick: a tick holding the lock finishes its records before a pause
  // closes the sink.
  std::lock_guard<std::mutex> lock(g_tick_mutex);
  ReentryGuard guard;
  const int64_t now = TraceClockNow();
  if (g_last_mappings_ns == 0 || MappingsChanged()) {
    g_last_mappings_ns = now > 0 ? now : 1;
    RecordMappings();
    RefreshCodeRanges();
  }
  if (!g_process_emitted)
    EmitProcess(now);
}

NotWriterScope::NotWriterScope() noexcept : was_(t_not_writer) {
  t_not_writer = true;
}

NotWriterScope::~NotWriterScope() {
  t_not_writer = was_;
}

void MarkNotWriterThread() noexcept {
  t_not_writer = true;
}

}  // namespace cuclimb::interposer
