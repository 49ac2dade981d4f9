// SPDX-License-Identifier: Apache-2.0
// SIGPROF-based host stack sampling (see host_sampler.h).
#include "interposer/host_sampler.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <sys/syscall.h>

#include <pthread.h>
#include <ucontext.h>
#include <unistd.h>

#include "interposer/clock.h"
#include "interposer/log.h"
#include "interposer/reentry_guard.h"
#include "interposer/stack.h"
#include "interposer/state.h"
#include "interposer/writer/recorder.h"

namespace cuclimb::interposer {
namespace {

constexpr size_t kMaxThreads = 1024;
std::atomic<uint32_t> g_tids[kMaxThreads] = {};
std::atomic<size_t> g_tid_count{0};
std::atomic<bool> g_running{false};
std::atomic<bool> g_installed{false};
std::atomic<uint64_t> g_skipped_nested{0};
uint32_t g_period_ns = 1'000'000;
pthread_t g_thread;

__attribute__((tls_model("initial-exec"))) thread_local bool t_registered = false;

void OnSigprof(int, siginfo_t*, void* context) {
  const int saved_errno = errno;
  if (g_in_child.load(std::memory_order_relaxed) || !g_capture_on.load(std::memory_order_relaxed) ||
      !t_registered) {
    errno = saved_errno;
    return;
  }
  ReentryGuard guard;
  if (guard.nested()) {
    // The thread was inside cuclimb (its ring mid-push): skip, counted.
    g_skipped_nested.fetch_add(1, std::memory_order_relaxed);
    errno = saved_errno;
    return;
  }
  const int64_t t0 = TraceClockNow();
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  const auto pc = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
  const auto sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
  const auto fp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RBP]);
#elif defined(__aarch64__)
  const auto pc = static_cast<uintptr_t>(uc->uc_mcontext.pc);
  const auto sp = static_cast<uintptr_t>(uc->uc_mcontext.sp);
  const auto fp = static_cast<uintptr_t>(uc->uc_mcontext.regs[29]);
#else
  const uintptr_t pc = 0, sp = 0, fp = 0;
  (void)uc;
#endif
  format::Event ev = format::MakeEvent(format::EventType::kSample);
  ev.ts = t0;
  ev.tid = CurrentTid();
  ev.stack = CaptureStackFromContext(pc, sp, fp, g_config.stack_depth, g_config.python_stacks);
  Record(ev);
  AddSelfTime(TraceClockNow() - t0);
  errno = saved_errno;
}

void* SamplerLoop(void*) {
  HoldReentryGuardForever();
  const pid_t pid = getpid();
  timespec period{};
  period.tv_sec = g_period_ns / 1'000'000'000;
  period.tv_nsec = g_period_ns % 1'000'000'000;
  while (g_running.load(std::memory_order_relaxed)) {
    nanosleep(&period, nullptr);
    const size_t n = std::min(g_tid_count.load(std::memory_order_acquire), kMaxThreads);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t tid = g_tids[i].load(std::memory_order_relaxed);
      if (tid == 0)
        continue;
      if (syscall(SYS_tgkill, pid, tid, SIGPROF) != 0 && errno == ESRCH) {
        g_tids[i].store(0, std::memory_order_relaxed);  // thread exited
      }
    }
  }
  return nullptr;
}

}  // namespace

bool StartHostSampler(uint32_t hz) noexcept {
  if (hz == 0)
    return false;
  struct sigaction old {};
  if (sigaction(SIGPROF, nullptr, &old) != 0)
    return false;
  const bool has_handler = (old.sa_flags & SA_SIGINFO) != 0
                               ? old.sa_sigaction != nullptr
                               : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
  if (has_handler) {
    LogWarning("SIGPROF already has a handler (another profiler?); host sampling is off");
    return false;
  }
  struct sigaction sa {};
  sa.sa_sigaction = OnSigprof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGPROF, &sa, nullptr) != 0)
    return false;
  g_installed.store(true);
  g_period_ns = 1'000'000'000u / hz;
  g_running.store(true);
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  const bool ok = pthread_create(&g_thread, nullptr, SamplerLoop, nullptr) == 0;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (!ok) {
    g_running.store(false);
    LogWarning("cannot start the host sampling thread; host sampling is off");
    return false;
  }
  pthread_setname_np(g_thread, "cuclimb-sample");
  return true;
}

void RegisterSampledThread() noexcept {
  if (t_registered || !g_installed.load(std::memory_order_relaxed))
    return;
  uintptr_t low = 0;
  uintptr_t high = 0;
  ThreadStackBounds(&low, &high);  // cached now, so the handler never computes it
  const size_t i = g_tid_count.fetch_add(1, std::memory_order_acq_rel);
  if (i >= kMaxThreads)
    return;
  g_tids[i].store(CurrentTid(), std::memory_order_release);
  t_registered = true;
}

void StopHostSampler() noexcept {
  if (!g_running.exchange(false))
    return;
  pthread_join(g_thread, nullptr);
}

}  // namespace cuclimb::interposer
