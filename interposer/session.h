// SPDX-License-Identifier: Apache-2.0
// The recording session of a process: which of start, CUPTI attach, pause, resume, flush, stop
// and fork may happen now, in what order their effects run, and what the trailer says went wrong.
//
//   sink:  kClosed --EnsureOpen--> kOpening --> kOpen | kFailed     (once; racing callers wait)
//   cupti: kUninit --AttachCupti--> kAttaching --> kActive | kPassive | kOff   (once)
//   stopping: false --Stop--> true (once);  in a forked child nothing happens any more
//   capturing (g_capture_on): true while open, not paused, not stopped, not in a child
//
// The effects (the trace file and writer, CUPTI, process hooks) sit behind SessionEffects:
// libcuclimb.so implements it in lifecycle.cpp; session_test.cpp records the calls, so every
// transition is tested in one process, without a GPU and without forking.
//
// Every method is a cold path, callable from any entry point on any thread in any order (NVTX may
// load cuclimb before cuInit does; exit may come from any thread, or from a signal's thread). None
// throws; a failure switches off the affected part.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace cuclimb::interposer {

enum class SinkState : int { kClosed, kOpening, kOpen, kFailed };
enum class CuptiState : int { kUninit, kAttaching, kActive, kPassive, kOff };

class Session;

// What a session does to the world. Called with the session's control lock held where noted;
// an implementation must not call back into the session except SetStatus.
class SessionEffects {
 public:
  // -- The sink: the trace file and its writer thread.
  // Reads the configuration (g_config), opens the trace and starts the writer. False when the
  // program must run untraced (the implementation said why, once).
  virtual bool OpenSink() noexcept = 0;
  // Installs the process hooks (atexit, atfork, signal handlers, host sampler); once, after
  // the sink opened.
  virtual void InstallProcessHooks() noexcept = 0;
  // The process description and module map, if not written yet, while the sink still records:
  // before a pause, since the sink drops everything while paused and a trace must always say
  // who ran (and its rank) and where its code lay.
  virtual void WriteSessionRecords() noexcept = 0;
  // The sink's own gate (it writes a `recording` event at each switch).
  virtual void SetSinkRecording(bool on) noexcept = 0;
  // Everything recorded so far reaches the file, CUPTI's completed buffers included when
  // `cupti` (its activity is attached).
  virtual void FlushSink(bool cupti) noexcept = 0;
  // The last records before the trailer: a forced CUPTI flush and decode when `cupti`, then the
  // host sampler's stop, the module map and the process description if still missing.
  virtual void FinishRecords(bool cupti) noexcept = 0;
  // Writes the trailer (status: why the recording is partial, or null) and closes the file.
  virtual void CloseSink(const char* status) noexcept = 0;
  // Forked child: forgets the parent's writer and file without touching them.
  virtual void AbandonSink() noexcept = 0;

  // -- CUPTI.
  // Version gate and subscription. Returns kActive (subscribed; activity decoding allowed or
  // not), or kPassive with the reason given to session.SetStatus.
  virtual CuptiState AttachCupti(Session& session) noexcept = 0;
  // Driver callback ids: the whole table (`full`), or only those kept while paused. Control
  // lock held.
  virtual void EnableCallbacks(bool full) noexcept = 0;
  // Activity kinds configured for the whole run (--kernels all, --memory-activity on) on or
  // off; `off` also closes an open sampling window's kinds. Control lock held.
  virtual void SetRunActivity(bool on) noexcept = 0;
  // Starts activity collection after subscribing, with the run's kinds on when `capturing`.
  // Control lock held.
  virtual void StartActivity(bool capturing) noexcept = 0;

 protected:
  ~SessionEffects() = default;
};

class Session {
 public:
  // effects: where the session's effects go; outlives the session.
  constexpr explicit Session(SessionEffects* effects) noexcept : effects_(effects) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Opens the sink once (first caller wins; racing callers wait for the outcome), then installs
  // the process hooks and starts capturing unless the configuration says paused. True while
  // recording is possible.
  bool EnsureOpen() noexcept;

  // Once per process (a second call returns at once; a racing one waits): EnsureOpen, the
  // version gate and subscription, then callbacks and activity as pause state requires.
  void AttachCupti() noexcept;

  // cuclimb_pause / cuclimb_resume: only while open, not stopping, not in a child; idempotent.
  // Pause stops the hot path first, then switches CUPTI off; resume switches CUPTI on first.
  void Pause() noexcept;
  void Resume() noexcept;
  // cuclimb_flush: everything so far reaches the file.
  void Flush() noexcept;

  // Exit or a fatal signal: flush, last records, trailer (reason kept unless an earlier status
  // was set), close. Once; later calls and calls in a child do nothing.
  void Stop(const char* reason) noexcept;

  // The atfork child handler: flags only (the parent's threads do not exist here and their
  // locks may be held). Nothing of the parent's recording is touched afterwards.
  void EnterForkChild() noexcept;

  // Why the recording is partial, for the trailer; the first reason wins.
  void SetStatus(const char* text) noexcept;
  const char* status() const noexcept { return status_; }

  SinkState sink() const noexcept { return sink_.load(std::memory_order_acquire); }
  CuptiState cupti() const noexcept { return cupti_.load(std::memory_order_acquire); }
  bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }
  // True when a pause, resume or flush may act now.
  bool Controllable() const noexcept;

 private:
  SessionEffects* effects_;
  std::atomic<SinkState> sink_{SinkState::kClosed};
  std::atomic<CuptiState> cupti_{CuptiState::kUninit};
  std::atomic<bool> stopping_{false};
  // Pause, resume and CUPTI enabling: CUPTI asks callers to serialize enabling.
  std::mutex control_;
  char status_[192] = {};
};

}  // namespace cuclimb::interposer
