// SPDX-License-Identifier: Apache-2.0
// SIGINT, SIGTERM and SIGHUP with their default action would kill the program without running
// atexit handlers, losing the trace's last chunk and its trailer. cuclimb catches those three
// (only when the program left them at SIG_DFL), has a thread of its own stop the recording, and
// lets the program die of the signal as it would have.
//
// Why a thread: nothing the stop does (CUPTI flush, locks, malloc, stdio) is async-signal-safe.
// The handler only posts a semaphore and waits (at most 3 s) for the thread to finish, then
// restores the default action and re-raises. Signals the program handles or ignores are left
// alone; SIGKILL skips everything (the recorder's chunks are self-contained, so the file stays
// readable up to its last chunk).
#pragma once

namespace cuclimb::interposer {

// Installs the handlers and starts the signal thread, which calls stop("stopped by signal N")
// once. A signal that comes while `stopping()` (the exit path runs) does not wait. Both must be
// safe to call from any thread; `stopping` from a signal handler too. Cold, once, after the
// trace opened. No-op when every one of the signals is taken.
void InstallFlushSignalHandlers(void (*stop)(const char* reason), bool (*stopping)()) noexcept;

}  // namespace cuclimb::interposer
