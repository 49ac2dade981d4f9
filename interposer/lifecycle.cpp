// SPDX-License-Identifier: Apache-2.0
// Once-guards, CUPTI setup, the writer tick, pause/resume, and the fork/exit/signal policy.
//
// Policy, and why:
//  - Exit: an atexit handler registered from InitializeInjection runs inside the first cuInit,
//    after the CUDA runtime registered its own teardown, so it runs first, while CUDA is alive:
//    forced CUPTI flush, decode, stop the recorder (trailer). It is registered again at every
//    entry (idempotent), and never calls cuptiFinalize (shared/notes/cupti-cuda13.md §8).
//  - fork: the child inherits our memory but not our threads, and CUPTI cannot be used there
//    (an inherited flush hangs: HPCToolkit#195). The atfork child handler only sets flags and
//    forgets the parent's trace file; every entry point and the atexit handler check them. The
//    child stops recording; if it execs, the environment makes the new program record itself.
//  - SIGINT/SIGTERM/SIGHUP with the default action (would kill the program without atexit): our
//    handler wakes a cuclimb thread that flushes and closes the trace, waits for it (at most
//    3 s), restores the default action and re-raises, so the program still dies of the signal.
//    Signals the program handles itself are left alone. SIGKILL skips everything: the recorder
//    writes self-contained chunks as it goes, so the file is readable up to its last chunk.
#include "interposer/lifecycle.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <unistd.h>

#include <cupti.h>

#include "interposer/activity_buffers.h"
#include "interposer/callbacks.h"
#include "interposer/capture_state.h"
#include "interposer/clock.h"
#include "interposer/config.h"
#include "interposer/cuda_code.h"
#include "interposer/driver_api.h"
#include "interposer/host_sampler.h"
#include "interposer/log.h"
#include "interposer/modules.h"
#include "interposer/python_frames.h"
#include "interposer/reentry_guard.h"
#include "interposer/sampler.h"
#include "interposer/state.h"
#include "interposer/writer/recorder.h"
#include "version.h"

namespace cuclimb::interposer {
namespace {

enum RecorderState : int { kRecUninit, kRecStarting, kRecOn, kRecFailed };
enum CuptiState : int { kCuptiUninit, kCuptiInitializing, kCuptiActive, kCuptiPassive, kCuptiOff };

std::atomic<int> g_recorder_state{kRecUninit};
std::atomic<int> g_cupti_state{kCuptiUninit};
std::atomic<bool> g_stopping{false};
CUpti_SubscriberHandle g_subscriber = nullptr;
uint32_t g_cupti_version = 0;
char g_status[192] = {};  // why recording is partial (trailer), empty when complete
char g_debug_cbids_path[kMaxPathBytes] = {};
int64_t g_start_ns = 0;
bool g_activity_ok = false;  // activity callbacks registered and records parsed

std::mutex g_control_mutex;  // pause/resume/enable: CUPTI asks callers to serialize enabling
std::mutex g_tick_mutex;     // one tick at a time (writer vs FlushRecorder on another thread)

// Threads that call FlushRecorder/StopRecorder (exit, signal, cuclimb_flush) are not the writer:
// the tick skips the writer-only work there (CUDA queries, which also change the thread's
// capture mode).
__attribute__((tls_model("initial-exec"))) thread_local bool t_not_writer = false;

// Tick state (under g_tick_mutex).
int64_t g_last_flush_ns = 0;
int64_t g_last_mappings_ns = 0;
bool g_process_emitted = false;
bool g_first_gauges_done = false;
size_t g_activity_budget = 8192;

struct KernelSampling {
  bool on = false;
  int64_t on_since = 0;
  int64_t off_since = 0;
  int64_t min_off_ns = 0;
  uint64_t on_marks = 0;
  uint64_t seen_marks = 0;
  uint64_t ticks = 0;
} g_ks;

// Signals.
constexpr int kFlushSignals[] = {SIGINT, SIGTERM, SIGHUP};
sem_t g_signal_sem;
std::atomic<int> g_signal_pending{0};
std::atomic<bool> g_signal_done{false};
std::atomic<bool> g_signal_handlers{false};

const char* Getenv(const char* name) {
  return std::getenv(name);
}
void WarnConfig(const char* message) {
  LogWarning("%s", message);
}

void SetStatus(const char* text) {
  if (g_status[0] == '\0')
    std::snprintf(g_status, sizeof(g_status), "%s", text);
}

// ---- Process description ----

void EmitProcess(int64_t now) {
  format::Event ev = format::MakeEvent(format::EventType::kProcess);
  ev.ts = now;
  ev.value = getpid();
  ev.handle = static_cast<uint64_t>(getppid());
  char cmd[4096] = {};
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, cmd, sizeof(cmd) - 1);
    close(fd);
    if (n > 0) {
      for (ssize_t i = 0; i < n; ++i) {
        if (cmd[i] == '\0')
          cmd[i] = ' ';
      }
      while (n > 0 && cmd[n - 1] == ' ') cmd[--n] = '\0';
    }
  }
  ev.name = InternString(cmd);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  ev.text = InternString(host);
  char exe[kMaxPathBytes] = {};
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len > 0)
    ev.api = InternString(std::string_view(exe, static_cast<size_t>(len)));
  if (g_cupti_state.load() == kCuptiActive || g_cupti_state.load() == kCuptiPassive) {
    const DriverApi& d = Driver();
    int version = 0;
    if (d.DriverGetVersion != nullptr && d.DriverGetVersion(&version) == CUDA_SUCCESS) {
      ev.size = static_cast<uint64_t>(version);
    }
  }
  ev.aux = g_cupti_version;
  if (const char* rank = RankFromEnv(Getenv))
    ev.corr = std::strtoull(rank, nullptr, 10) + 1;
  Record(ev);
  g_process_emitted = true;
}

// ---- CUPTI enabling ----

bool TrackedWhilePaused(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture:
    case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2:
    case CUPTI_DRIVER_TRACE_CBID_cuMemPoolDestroy:
      return true;
    default:
      return false;
  }
}

// Enables the table's driver ids for full recording, or only the ones that keep cuclimb's own
// state right while paused (capture tracking, teardown handshakes). Caller holds
// g_control_mutex.
void EnableDriverCallbacks(bool full) {
  size_t count = 0;
  const CbidEntry* entries = DriverCbids(&count);
  for (size_t i = 0; i < count; ++i) {
    bool on = entries[i].group == CbidGroup::kAlways || g_config.api;
    if (!full)
      on = on && TrackedWhilePaused(entries[i].cbid);
    cuptiEnableCallback(on ? 1 : 0, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, entries[i].cbid);
  }
}

int32_t DeviceOfContext(uint64_t context) {
  uint32_t id = 0;
  return cuptiGetDeviceId(reinterpret_cast<CUcontext>(context), &id) == CUPTI_SUCCESS
             ? static_cast<int32_t>(id)
             : -1;
}

void ContextDestroying(uint64_t) {
  FlushActivity(true);
}

// ---- Kernel sampling (writer tick) ----

bool SampledIterationIn(uint64_t after, uint64_t upto, uint32_t every) {
  if (upto <= after)
    return false;
  if (upto / every > after / every)
    return true;                              // a multiple of every was passed
  for (uint64_t p = 1; p < every; p <<= 1) {  // early iterations 1, 2, 4, ...
    if (p > after && p <= upto)
      return true;
  }
  return false;
}

void SamplingWindowGauge(int64_t now, bool on) {
  format::Event ev = format::MakeEvent(format::EventType::kGauge);
  ev.ts = now;
  ev.name = InternString("cuclimb.sampling_window");
  ev.value = on ? 1 : 0;
  Record(ev);
}

void SetWindowActivity(bool on) {
  if (g_config.kernels == KernelMode::kSampled)
    SetKernelActivity(on);
  if (g_config.memory_activity == MemoryActivity::kSampled)
    SetMemoryActivity(on);
}

// A sampling window (CONCURRENT_KERNEL with --kernels=sampled, MEMORY2 + MEMORY_POOL with
// --memory-activity=sampled) starts at a sampled iteration boundary (or one tick in N without
// iteration marks) and ends at the next boundary the writer sees; afterwards the window stays
// closed for (N-1) times its length, so it is open for at most ~1/N of the run and the step time
// of the other iterations is undisturbed (kernel records cost ~1.5 us per launch, memory records
// ~1 us per allocation and per free, measured on the H200). The gauge "cuclimb.sampling_window"
// (1 open, 0 closed) tells the analyzer which iterations carry them.
void SamplingWindowTick(int64_t now) {
  const uint32_t every = g_config.kernel_every;
  const uint64_t marks = g_iteration_marks.load(std::memory_order_relaxed);
  KernelSampling& ks = g_ks;
  ++ks.ticks;
  if (Captures().Active() > 0)
    return;  // enabling allocates device buffers: not during capture
  if (ks.on) {
    const bool boundary = marks > 0 ? marks != ks.on_marks : true;
    const bool too_long = now - ks.on_since > 2'000'000'000;
    if (boundary || too_long) {
      SetWindowActivity(false);
      ks.on = false;
      ks.off_since = now;
      ks.min_off_ns = (now - ks.on_since) * static_cast<int64_t>(every - 1);
      ks.seen_marks = marks;
      SamplingWindowGauge(now, false);
    }
    return;
  }
  if (now - ks.off_since < ks.min_off_ns) {
    ks.seen_marks = marks;
    return;
  }
  bool start = false;
  if (marks > 0) {
    start = SampledIterationIn(ks.seen_marks, marks, every);
  } else if (now - g_start_ns > 2'000'000'000) {
    start = every <= 1 || ks.ticks % every == 0;  // no iteration marks: one tick in N
  }
  ks.seen_marks = marks;
  if (start) {
    SetWindowActivity(true);
    ks.on = true;
    ks.on_since = now;
    ks.on_marks = marks;
    SamplingWindowGauge(now, true);
  }
}

// ---- The tick ----

void DumpDebugCounts() {
  if (g_debug_cbids_path[0] == '\0')
    return;
  const int fd = open(g_debug_cbids_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
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

void OnTick(void*, int64_t now) noexcept {
  if (g_in_child.load(std::memory_order_relaxed))
    return;
  std::unique_lock<std::mutex> lock(g_tick_mutex, std::try_to_lock);
  if (!lock.owns_lock())
    return;
  ReentryGuard guard;  // our own CUDA/CUPTI calls must not record themselves
  const bool writer = !t_not_writer;
  const bool stopping = g_stopping.load(std::memory_order_relaxed);
  const bool cupti = g_cupti_state.load(std::memory_order_acquire) == kCuptiActive;
  if (!g_process_emitted && (g_cupti_state.load() != kCuptiUninit ||
                             now - ToTraceNs(g_start_ns) > 2'000'000'000 || stopping)) {
    EmitProcess(now);
  }
  if (writer && now - g_last_mappings_ns >= 1'000'000'000 &&
      (g_last_mappings_ns == 0 || MappingsChanged())) {
    g_last_mappings_ns = now;
    RecordMappings();
    RefreshCudaRuntimeCode();
    if (g_config.python_stacks)
      RefreshPythonSupport();
  }
  if (!cupti)
    return;
  if (writer && !stopping && now - g_last_flush_ns >= 200'000'000) {
    g_last_flush_ns = now;
    FlushActivity(false);
  }
  DrainActivity(g_activity_budget);
  RecordActivityDrops();
  if (!writer || stopping)
    return;
  if (g_activity_ok &&
      (g_config.kernels == KernelMode::kSampled ||
       g_config.memory_activity == MemoryActivity::kSampled) &&
      g_capture_on.load(std::memory_order_relaxed)) {
    SamplingWindowTick(now);
  }
  if (!g_config.gauges)
    return;
  if (!g_first_gauges_done) {
    g_first_gauges_done = true;
    SampleGaugesNow(now);
  } else {
    SampleGaugesTick(now);
  }
}

// ---- Stop ----

void StopEverything(const char* reason) {
  bool expected = false;
  if (!g_stopping.compare_exchange_strong(expected, true))
    return;
  if (g_recorder_state.load() != kRecOn)
    return;
  t_not_writer = true;
  ReentryGuard guard;
  // Rings first: this needs no CUDA, so even if CUPTI blocks below, the program's events are on
  // disk.
  FlushRecorder();
  if (g_cupti_state.load() == kCuptiActive) {
    FlushActivity(true);
    const size_t budget = g_activity_budget;
    for (int round = 0; round < 10'000; ++round) {
      const size_t n = DrainActivity(budget);
      FlushRecorder();
      if (n == 0)
        break;
    }
    RecordActivityDrops();
  }
  StopHostSampler();
  {
    // A short run never reached the writer's first mapping pass: the map is needed to
    // symbolize its stacks.
    std::lock_guard<std::mutex> lock(g_tick_mutex);
    if (g_last_mappings_ns == 0) {
      g_last_mappings_ns = TraceClockNow();
      RecordMappings();
    }
    if (!g_process_emitted)
      EmitProcess(TraceClockNow());
  }
  DumpDebugCounts();
  if (reason != nullptr && reason[0] != '\0')
    SetStatus(reason);
  StopRecorder(g_status[0] != '\0' ? g_status : nullptr);
  g_capture_on.store(false, std::memory_order_relaxed);
}

void OnExit() {
  if (g_in_child.load(std::memory_order_relaxed))
    return;
  StopEverything(nullptr);
}

void OnForkChild() {
  // Only flags here: the writer and sampler threads do not exist in the child, their locks may
  // be held, and CUDA/CUPTI are unusable after fork. The rings and tables are leaked on purpose.
  g_in_child.store(true, std::memory_order_relaxed);
  g_capture_on.store(false, std::memory_order_relaxed);
  AbandonRecorderInChild();
}

// ---- Signals ----

void RestoreAndRaise(int sig) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // blocked while this handler runs; delivered (default action) when it returns
}

void OnFlushSignal(int sig) {
  const int saved_errno = errno;
  if (!g_in_child.load(std::memory_order_relaxed) && !g_stopping.load(std::memory_order_relaxed)) {
    int expected = 0;
    if (g_signal_pending.compare_exchange_strong(expected, sig))
      sem_post(&g_signal_sem);
    timespec ms{0, 1'000'000};
    for (int i = 0; i < 3000 && !g_signal_done.load(std::memory_order_acquire); ++i) {
      nanosleep(&ms, nullptr);
    }
  }
  RestoreAndRaise(sig);
  errno = saved_errno;
}

void* SignalThread(void*) {
  HoldReentryGuardForever();
  t_not_writer = true;
  while (true) {
    if (sem_wait(&g_signal_sem) != 0) {
      if (errno == EINTR)
        continue;
      return nullptr;
    }
    if (g_signal_pending.load() != 0)
      break;
  }
  char reason[48];
  std::snprintf(reason, sizeof(reason), "stopped by signal %d", g_signal_pending.load());
  StopEverything(reason);
  g_signal_done.store(true, std::memory_order_release);
  return nullptr;
}

void InstallSignalHandlers() {
  if (sem_init(&g_signal_sem, 0, 0) != 0)
    return;
  bool any = false;
  for (int sig : kFlushSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0)
      continue;
    const bool default_action = (old.sa_flags & SA_SIGINFO) == 0 && old.sa_handler == SIG_DFL;
    if (!default_action)
      continue;  // the program handles it (or ignores it): leave it alone
    struct sigaction sa {};
    sa.sa_handler = OnFlushSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(sig, &sa, nullptr) == 0)
      any = true;
  }
  if (!any)
    return;
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_t thread;
  if (pthread_create(&thread, nullptr, SignalThread, nullptr) == 0) {
    pthread_setname_np(thread, "cuclimb-signal");
    pthread_detach(thread);
    g_signal_handlers.store(true);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void RemoveOurselvesFromChildren() {
  // CUCLIMB_FOLLOW_CHILDREN=off. Cold and early (first CUDA or NVTX use); documented as racy with
  // a program thread reading the environment at the same moment, like any setenv.
  unsetenv("CUDA_INJECTION64_PATH");
  unsetenv("NVTX_INJECTION64_PATH");
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload != nullptr && std::strstr(preload, "libcuclimb") != nullptr)
    unsetenv("LD_PRELOAD");
}

bool StartRecorderOnce() {
  ReentryGuard guard;
  g_config = LoadConfig(Getenv, WarnConfig);
  SetLogQuiet(g_config.quiet);
  if (const char* debug = std::getenv(kEnvDebugCbids); debug != nullptr && debug[0] != '\0') {
    std::snprintf(g_debug_cbids_path, sizeof(g_debug_cbids_path), "%s", debug);
    EnableCallbackCounting();
  }
  if (const char* v = std::getenv(kEnvDebugCaptureQueries); v != nullptr && v[0] == '1') {
    SetDebugCaptureQueries(true);
  }
  if (const char* v = std::getenv(kEnvDebugBareCallbacks); v != nullptr && v[0] == '1') {
    g_bare_callbacks.store(true);
  }

  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  PatternValues values;
  values.pid = getpid();
  values.host = host;
  const char* rank = RankFromEnv(Getenv);
  values.rank = rank != nullptr ? rank : "";
  values.program = program_invocation_short_name != nullptr ? program_invocation_short_name : "";
  char path[kMaxPathBytes];
  char error[256];
  if (!ExpandOutputPattern(g_config.output, values, path, sizeof(path), error, sizeof(error))) {
    LogWarning("CUCLIMB_OUTPUT=%s: %s; the program runs untraced", g_config.output, error);
    return false;
  }
  if (g_debug_cbids_path[0] != '\0') {
    char expanded[kMaxPathBytes];
    if (ExpandOutputPattern(g_debug_cbids_path, values, expanded, sizeof(expanded), error,
                            sizeof(error))) {
      std::memcpy(g_debug_cbids_path, expanded, sizeof(expanded));
    }
  }

  RefreshCudaRuntimeCode();
  if (g_config.python_stacks)
    RefreshPythonSupport();
  g_start_ns = ClockNs();
  SetBaseNs(g_start_ns);
  RecorderOptions options;
  options.path = path;
  options.ring_kib = g_config.ring_kib;
  options.flush_interval_ms = static_cast<int>(g_config.flush_ms);
  options.base_clock_ns = g_start_ns;
  options.producer = "cuclimb " CUCLIMB_VERSION;
  g_activity_budget = (size_t{g_config.ring_kib} * 1024 / sizeof(format::Event)) / 2;
  SetTickHook(OnTick, nullptr);
  if (!StartRecorder(options))
    return false;  // the recorder said why

  if (!g_config.follow_children)
    RemoveOurselvesFromChildren();
  pthread_atfork(nullptr, nullptr, OnForkChild);
  atexit(OnExit);
  InstallSignalHandlers();
  if (g_config.sample_hz > 0 && StartHostSampler(g_config.sample_hz)) {
    g_hooks.thread_first_seen = RegisterSampledThread;
  }
  if (g_config.paused)
    SetRecording(false);
  g_capture_on.store(!g_config.paused, std::memory_order_release);
  return true;
}

}  // namespace

bool EnsureRecorder() noexcept {
  if (g_in_child.load(std::memory_order_relaxed))
    return false;
  int state = g_recorder_state.load(std::memory_order_acquire);
  if (state == kRecUninit) {
    int expected = kRecUninit;
    if (g_recorder_state.compare_exchange_strong(expected, kRecStarting)) {
      const bool ok = StartRecorderOnce();
      g_recorder_state.store(ok ? kRecOn : kRecFailed, std::memory_order_release);
      return ok;
    }
  }
  // Another thread is starting it (NVTX and cuInit on two threads): wait.
  while ((state = g_recorder_state.load(std::memory_order_acquire)) == kRecStarting) {
    sched_yield();
  }
  return state == kRecOn;
}

void InitializeCupti() noexcept {
  int expected = kCuptiUninit;
  if (!g_cupti_state.compare_exchange_strong(expected, kCuptiInitializing)) {
    while (g_cupti_state.load(std::memory_order_acquire) == kCuptiInitializing) sched_yield();
    return;  // one subscription per process
  }
  if (!EnsureRecorder()) {
    g_cupti_state.store(kCuptiOff, std::memory_order_release);
    return;
  }
  ReentryGuard guard;
  atexit(OnExit);  // again: this registration runs before the CUDA runtime's teardown

  if (cuptiGetVersion(&g_cupti_version) != CUPTI_SUCCESS || g_cupti_version / 10000 != 13) {
    LogWarning("CUPTI API version %u is not supported (built for %d); recording NVTX only",
               g_cupti_version, CUPTI_API_VERSION);
    SetStatus("unsupported CUPTI version: NVTX only");
    g_cupti_state.store(kCuptiPassive, std::memory_order_release);
    return;
  }
  // Activity layouts are validated for 13.0 (API 130001, the H200's): others get callbacks only.
  const bool parse = g_cupti_version / 100 == 1300 && g_cupti_version >= 130001;
  if (!parse) {
    LogWarning(
        "CUPTI API version %u: activity records (GPU kernel times, MEMORY2) are off until "
        "this version is validated; API callbacks and NVTX are recorded",
        g_cupti_version);
  }

  char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 8] = {};
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "cuclimb";
  params.oldSubscriberName = other;
  params.oldSubscriberSize = sizeof(other);
  const CUptiResult r = cuptiSubscribe_v2(&g_subscriber, OnCuptiCallback, nullptr, &params);
  if (r != CUPTI_SUCCESS) {
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      LogWarning("another CUPTI tool (%s) is attached; recording NVTX only, the program runs on",
                 other[0] != '\0' ? other : "unnamed, e.g. Nsight or torch.profiler");
      char status[160];
      std::snprintf(status, sizeof(status), "CUPTI taken by %s: NVTX only",
                    other[0] != '\0' ? other : "another tool");
      SetStatus(status);
    } else {
      const char* why = nullptr;
      cuptiGetResultString(r, &why);
      LogWarning("CUPTI subscription failed (%s); recording NVTX only",
                 why != nullptr ? why : "unknown error");
      SetStatus("CUPTI subscription failed: NVTX only");
    }
    g_cupti_state.store(kCuptiPassive, std::memory_order_release);
    return;
  }

  g_hooks.device_of_context = DeviceOfContext;
  g_hooks.context_destroying = ContextDestroying;
  InternApiNames();
  {
    std::lock_guard<std::mutex> lock(g_control_mutex);
    EnableDriverCallbacks(g_capture_on.load());
    size_t count = 0;
    const CUpti_CallbackId* resources = ResourceCbids(&count);
    for (size_t i = 0; i < count; ++i) {
      cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, resources[i]);
    }
    cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_SYNCHRONIZE);
    cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR);
    if (g_debug_cbids_path[0] != '\0') {
      // Diagnostics: count every driver and runtime callback (events only for the table's ids).
      cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
      cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
    }
  }
  if (parse) {
    ActivityOptions activity;
    activity.memory = g_config.memory_activity == MemoryActivity::kOn && g_capture_on.load();
    activity.kernels_all = g_config.kernels == KernelMode::kAll && g_capture_on.load();
    activity.parse = true;
    g_activity_ok = StartActivity(activity);
  }
  g_cupti_state.store(kCuptiActive, std::memory_order_release);
}

void OnPreloadConstructor() noexcept {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr || std::strstr(preload, "libcuclimb") == nullptr)
    return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&OnPreloadConstructor), &info) == 0 ||
      info.dli_fname == nullptr) {
    return;
  }
  char self[kMaxPathBytes];
  if (realpath(info.dli_fname, self) == nullptr)
    return;
  // Constructors run before main, normally single-threaded: the one place setenv is safe.
  for (const char* name : {"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH"}) {
    const char* current = std::getenv(name);
    if (current == nullptr || current[0] == '\0') {
      setenv(name, self, 1);
      continue;
    }
    char resolved[kMaxPathBytes];
    if (realpath(current, resolved) == nullptr || std::strcmp(resolved, self) != 0) {
      LogWarning("%s already names %s; cuclimb leaves it alone%s", name, current,
                 name[0] == 'C' ? " and records NVTX only" : "");
    }
  }
  const char* init = std::getenv(kEnvPreloadInit);
  if (init != nullptr && init[0] == '1')
    InitializeCupti();
}

void PauseRecording() noexcept {
  if (g_in_child.load() || g_recorder_state.load() != kRecOn || g_stopping.load())
    return;
  ReentryGuard guard;
  std::lock_guard<std::mutex> lock(g_control_mutex);
  if (!g_capture_on.load())
    return;
  g_capture_on.store(false, std::memory_order_release);
  if (g_cupti_state.load() == kCuptiActive) {
    EnableDriverCallbacks(false);
    if (g_activity_ok) {
      SetKernelActivity(false);
      SetMemoryActivity(false);
    }
  }
  SetRecording(false);
}

void ResumeRecording() noexcept {
  if (g_in_child.load() || g_recorder_state.load() != kRecOn || g_stopping.load())
    return;
  ReentryGuard guard;
  std::lock_guard<std::mutex> lock(g_control_mutex);
  if (g_capture_on.load())
    return;
  if (g_cupti_state.load() == kCuptiActive) {
    EnableDriverCallbacks(true);
    if (g_activity_ok) {
      if (g_config.memory_activity == MemoryActivity::kOn)
        SetMemoryActivity(true);
      if (g_config.kernels == KernelMode::kAll)
        SetKernelActivity(true);
    }
  }
  SetRecording(true);
  g_capture_on.store(true, std::memory_order_release);
}

void FlushNow() noexcept {
  if (g_in_child.load() || g_recorder_state.load() != kRecOn || g_stopping.load())
    return;
  ReentryGuard guard;
  const bool was = t_not_writer;
  t_not_writer = true;
  if (g_cupti_state.load() == kCuptiActive)
    FlushActivity(false);
  FlushRecorder();
  t_not_writer = was;
}

}  // namespace cuclimb::interposer
