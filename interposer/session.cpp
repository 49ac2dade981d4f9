// SPDX-License-Identifier: Apache-2.0
// The session's transitions (see session.h).
#include "interposer/session.h"

#include <cstdio>

#include <sched.h>

#include "interposer/reentry_guard.h"
#include "interposer/state.h"

namespace cuclimb::interposer {

bool Session::EnsureOpen() noexcept {
  if (g_in_child.load(std::memory_order_relaxed))
    return false;
  SinkState state = sink_.load(std::memory_order_acquire);
  if (state == SinkState::kClosed) {
    SinkState expected = SinkState::kClosed;
    if (sink_.compare_exchange_strong(expected, SinkState::kOpening)) {
      ReentryGuard guard;
      const bool ok = effects_->OpenSink();
      if (ok) {
        effects_->InstallProcessHooks();
        if (g_config.paused) {
          effects_->WriteSessionRecords();
          effects_->SetSinkRecording(false);
        }
        g_capture_on.store(!g_config.paused, std::memory_order_release);
      }
      sink_.store(ok ? SinkState::kOpen : SinkState::kFailed, std::memory_order_release);
      return ok;
    }
  }
  // Another thread is opening it (NVTX and cuInit on two threads): wait for the outcome.
  while ((state = sink_.load(std::memory_order_acquire)) == SinkState::kOpening) sched_yield();
  return state == SinkState::kOpen;
}

void Session::AttachCupti() noexcept {
  CuptiState expected = CuptiState::kUninit;
  if (!cupti_.compare_exchange_strong(expected, CuptiState::kAttaching)) {
    while (cupti_.load(std::memory_order_acquire) == CuptiState::kAttaching) sched_yield();
    return;  // one subscription per process
  }
  if (!EnsureOpen()) {
    cupti_.store(CuptiState::kOff, std::memory_order_release);
    return;
  }
  ReentryGuard guard;
  // Under the control lock, and the state published before it is released: a pause racing with
  // the attach either comes first (and the attach enables only what a pause keeps) or sees
  // kActive (and switches off what the attach enabled).
  std::lock_guard<std::mutex> lock(control_);
  const CuptiState reached = effects_->AttachCupti(*this);
  if (reached == CuptiState::kActive) {
    const bool capturing = g_capture_on.load(std::memory_order_acquire);
    effects_->EnableCallbacks(capturing);
    effects_->StartActivity(capturing);
  }
  cupti_.store(reached, std::memory_order_release);
}

bool Session::Controllable() const noexcept {
  return !g_in_child.load(std::memory_order_relaxed) && sink() == SinkState::kOpen && !stopping();
}

void Session::Pause() noexcept {
  if (!Controllable())
    return;
  ReentryGuard guard;
  std::lock_guard<std::mutex> lock(control_);
  if (!g_capture_on.load(std::memory_order_acquire))
    return;
  g_capture_on.store(false, std::memory_order_release);  // the hot path stops first
  if (cupti() == CuptiState::kActive) {
    effects_->EnableCallbacks(false);
    effects_->SetRunActivity(false);
  }
  effects_->WriteSessionRecords();
  effects_->SetSinkRecording(false);
}

void Session::Resume() noexcept {
  if (!Controllable())
    return;
  ReentryGuard guard;
  std::lock_guard<std::mutex> lock(control_);
  if (g_capture_on.load(std::memory_order_acquire))
    return;
  if (cupti() == CuptiState::kActive) {
    effects_->EnableCallbacks(true);
    effects_->SetRunActivity(true);
  }
  effects_->SetSinkRecording(true);
  g_capture_on.store(true, std::memory_order_release);  // the hot path starts last
}

void Session::Flush() noexcept {
  if (!Controllable())
    return;
  ReentryGuard guard;
  effects_->FlushSink(cupti() == CuptiState::kActive);
}

void Session::Stop(const char* reason) noexcept {
  if (g_in_child.load(std::memory_order_relaxed))
    return;
  bool expected = false;
  if (!stopping_.compare_exchange_strong(expected, true))
    return;
  if (sink() != SinkState::kOpen)
    return;
  ReentryGuard guard;
  // The rings first: this needs no CUDA, so even if CUPTI blocks below, the program's events
  // are on disk.
  effects_->FlushSink(false);
  effects_->FinishRecords(cupti() == CuptiState::kActive);
  if (reason != nullptr && reason[0] != '\0')
    SetStatus(reason);
  effects_->CloseSink(status_[0] != '\0' ? status_ : nullptr);
  g_capture_on.store(false, std::memory_order_relaxed);
}

void Session::EnterForkChild() noexcept {
  g_in_child.store(true, std::memory_order_relaxed);
  g_capture_on.store(false, std::memory_order_relaxed);
  effects_->AbandonSink();
}

void Session::SetStatus(const char* text) noexcept {
  if (status_[0] == '\0')
    std::snprintf(status_, sizeof(status_), "%s", text);
}

}  // namespace cuclimb::interposer
