// SPDX-License-Identifier: Apache-2.0
// Flushing the trace on default-action termination signals (see signals.h).
#include "interposer/signals.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>

#include <pthread.h>
#include <semaphore.h>

#include "interposer/reentry_guard.h"
#include "interposer/state.h"
#include "interposer/tick.h"

namespace cuclimb::interposer {
namespace {

constexpr int kFlushSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kMaxWaitMs = 3000;  // the handler waits this long for the trace to close

sem_t g_signal_sem;
std::atomic<int> g_signal_pending{0};
std::atomic<bool> g_signal_done{false};
void (*g_stop)(const char* reason) = nullptr;
bool (*g_stopping)() = nullptr;

void RestoreAndRaise(int sig) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // blocked while this handler runs; delivered (default action) when it returns
}

// Async-signal-safe: atomics, sem_post, nanosleep, sigaction, raise.
void OnFlushSignal(int sig) {
  const int saved_errno = errno;
  if (!g_in_child.load(std::memory_order_relaxed) && !g_stopping()) {
    int expected = 0;
    if (g_signal_pending.compare_exchange_strong(expected, sig))
      sem_post(&g_signal_sem);
    timespec ms{0, 1'000'000};
    for (int i = 0; i < kMaxWaitMs && !g_signal_done.load(std::memory_order_acquire); ++i) {
      nanosleep(&ms, nullptr);
    }
  }
  RestoreAndRaise(sig);
  errno = saved_errno;
}

void* SignalThread(void*) {
  HoldReentryGuardForever();
  MarkNotWriterThread();
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
  g_stop(reason);
  g_signal_done.store(true, std::memory_order_release);
  return nullptr;
}

}  // namespace

void InstallFlushSignalHandlers(void (*stop)(const char* reason), bool (*stopping)()) noexcept {
  g_stop = stop;
  g_stopping = stopping;
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
  // The thread starts with every signal blocked, so none is ever delivered to it.
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_t thread;
  if (pthread_create(&thread, nullptr, SignalThread, nullptr) == 0) {
    pthread_setname_np(thread, "cuclimb-signal");
    pthread_detach(thread);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace cuclimb::interposer
