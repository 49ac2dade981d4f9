// SPDX-License-Identifier: Apache-2.0
// The process's one recording session, wired to the real recorder and CUPTI, and the fork, exit
// and environment policy of libcuclimb.so.
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
//    Destroying the parent's rings or tables in the child is unsafe (another thread may have
//    held them at the fork), so they are leaked on purpose.
//  - Signals: signals.h (SIGINT/SIGTERM/SIGHUP at their default action flush and re-raise).
//  - Children: with CUCLIMB_FOLLOW_CHILDREN=off cuclimb removes itself from the environment its
//    children inherit, once, early (first CUDA or NVTX use), like any setenv racy with a program
//    thread reading the environment at that moment.
#include "interposer/lifecycle.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "interposer/activity_buffers.h"
#include "interposer/callbacks.h"
#include "interposer/clock.h"
#include "interposer/config.h"
#include "interposer/cuda_code.h"
#include "interposer/cupti_setup.h"
#include "interposer/host_sampler.h"
#include "interposer/log.h"
#include "interposer/modules.h"
#include "interposer/python_frames.h"
#include "interposer/reentry_guard.h"
#include "interposer/sampler.h"
#include "interposer/session.h"
#include "interposer/signals.h"
#include "interposer/state.h"
#include "interposer/tick.h"
#include "interposer/writer/recorder.h"
#include "version.h"

namespace cuclimb::interposer {
namespace {

char g_debug_cbids_path[kMaxPathBytes] = {};
bool g_activity_ok = false;  // activity callbacks registered and records parsed

const char* Getenv(const char* name) {
  return std::getenv(name);
}
void WarnConfig(const char* message) {
  LogWarning("%s", message);
}

Session& TheSession() noexcept;

void OnExit() {
  TheSession().Stop(nullptr);
}
void OnForkChild() {
  TheSession().EnterForkChild();
}
void StopFromSignal(const char* reason) {
  TheSession().Stop(reason);
}
bool Stopping() {
  return TheSession().stopping();
}

// Only our own entries: the user's other preloads (an allocator, a sanitizer) stay.
void RemoveOurselvesFromChildren() {
  unsetenv("CUDA_INJECTION64_PATH");
  unsetenv("NVTX_INJECTION64_PATH");
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr)
    return;
  char kept[4096];
  if (!PreloadWithoutCuclimb(preload, kept, sizeof(kept))) {
    LogWarning("LD_PRELOAD is longer than %zu bytes; children may still load cuclimb",
               sizeof(kept));
    return;
  }
  if (kept[0] == '\0') {
    unsetenv("LD_PRELOAD");
  } else if (std::strcmp(kept, preload) != 0) {
    setenv("LD_PRELOAD", kept, 1);
  }
}

// The debug and test variables that are not options (docs/recording.md).
void ReadDebugVariables() {
  if (const char* debug = std::getenv(kEnvDebugCbids); debug != nullptr && debug[0] != '\0') {
    std::snprintf(g_debug_cbids_path, sizeof(g_debug_cbids_path), "%s", debug);
    EnableCallbackCounting();
  }
  if (const char* v = std::getenv(kEnvDebugCaptureQueries); v != nullptr && v[0] == '1')
    SetDebugCaptureQueries(true);
  if (const char* v = std::getenv(kEnvDebugBareCallbacks); v != nullptr && v[0] == '1')
    g_bare_callbacks.store(true);
}

// libcuclimb.so's effects: the recorder is the sink, CUPTI is CUPTI.
class ProcessEffects final : public SessionEffects {
 public:
  constexpr ProcessEffects() = default;

  bool OpenSink() noexcept override {
    g_config = LoadConfig(Getenv, WarnConfig);
    SetLogQuiet(g_config.quiet);
    ReadDebugVariables();

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
    const int64_t start_ns = ClockNs();
    SetBaseNs(start_ns);
    RecorderOptions options;
    options.path = path;
    options.ring_kib = g_config.ring_kib;
    options.flush_interval_ms = static_cast<int>(g_config.flush_ms);
    options.base_clock_ns = start_ns;
    options.producer = "cuclimb " CUCLIMB_VERSION;
    StartTick(&TheSession(), (size_t{g_config.ring_kib} * 1024 / sizeof(format::Event)) / 2);
    return StartRecorder(options);  // false: the recorder said why
  }

  void InstallProcessHooks() noexcept override {
    if (!g_config.follow_children)
      RemoveOurselvesFromChildren();
    pthread_atfork(nullptr, nullptr, OnForkChild);
    atexit(OnExit);
    InstallFlushSignalHandlers(StopFromSignal, Stopping);
    if (g_config.sample_hz > 0 && StartHostSampler(g_config.sample_hz))
      g_hooks.thread_first_seen = RegisterSampledThread;
  }

  void WriteSessionRecords() noexcept override { interposer::WriteSessionRecords(); }
  void SetSinkRecording(bool on) noexcept override { SetRecording(on); }

  void FlushSink(bool cupti) noexcept override {
    NotWriterScope not_writer;
    if (cupti)
      FlushActivity(false);
    FlushRecorder();
  }

  void FinishRecords(bool cupti) noexcept override {
    NotWriterScope not_writer;
    if (cupti) {
      FlushActivity(true);
      const size_t budget = (size_t{g_config.ring_kib} * 1024 / sizeof(format::Event)) / 2;
      for (int round = 0; round < 10'000; ++round) {
        const size_t n = DrainActivity(budget);
        FlushRecorder();
        if (n == 0)
          break;
      }
      RecordActivityDrops();
    }
    StopHostSampler();
    WriteSessionRecords();
    DumpDebugCounts(g_debug_cbids_path);
  }

  void CloseSink(const char* status) noexcept override {
    NotWriterScope not_writer;
    StopRecorder(status);
  }

  void AbandonSink() noexcept override { AbandonRecorderInChild(); }

  CuptiState AttachCupti(Session& session) noexcept override {
    atexit(OnExit);  // again: this registration runs before the CUDA runtime's teardown
    return SubscribeCupti(session, g_debug_cbids_path[0] != '\0');
  }

  void EnableCallbacks(bool full) noexcept override { EnableDriverCallbacks(TheSession(), full); }

  void SetRunActivity(bool on) noexcept override {
    if (!g_activity_ok)
      return;
    if (!on) {
      SetKernelActivity(false);
      SetMemoryActivity(false);
      return;
    }
    if (g_config.memory_activity == MemoryActivity::kOn)
      SetMemoryActivity(true);
    if (g_config.kernels == KernelMode::kAll)
      SetKernelActivity(true);
  }

  void StartActivity(bool capturing) noexcept override {
    // Activity layouts are validated for 13.0 (API 130001, the H200's): others get callbacks.
    if (!ActivityLayoutsValidated())
      return;
    ActivityOptions activity;
    activity.memory = g_config.memory_activity == MemoryActivity::kOn && capturing;
    activity.kernels_all = g_config.kernels == KernelMode::kAll && capturing;
    activity.parse = true;
    g_activity_ok = interposer::StartActivity(activity);
    if (g_activity_ok && (g_config.kernels == KernelMode::kSampled ||
                          g_config.memory_activity == MemoryActivity::kSampled)) {
      EnableSamplingWindows();
    }
  }
};

constinit ProcessEffects g_effects;
constinit Session g_session{&g_effects};

Session& TheSession() noexcept {
  return g_session;
}

}  // namespace

bool EnsureRecorder() noexcept {
  return TheSession().EnsureOpen();
}

void InitializeCupti() noexcept {
  TheSession().AttachCupti();
}

void OnPreloadConstructor() noexcept {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr || std::strstr(preload, "libcuclimb") == nullptr)
    return;
  SetLogQuiet(QuietFromEnv(Getenv));  // before the configuration is read
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
  TheSession().Pause();
}

void ResumeRecording() noexcept {
  TheSession().Resume();
}

void FlushNow() noexcept {
  TheSession().Flush();
}

}  // namespace cuclimb::interposer
