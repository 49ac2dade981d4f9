// SPDX-License-Identifier: Apache-2.0
// The writer's tick: the work libcuclimb.so does on its writer thread at every wake-up, before
// the rings are drained: the process description, the module map, CUPTI's activity buffers,
// the sampling window and the gauges. Also run by threads that flush or stop the recorder (exit,
// signal, cuclimb_flush); those skip the writer-only work.
//
// Only the writer thread makes CUDA queries: they change the calling thread's capture mode, and
// they must never run on an application thread (shared/notes/cupti-cuda13.md §7).
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuclimb::interposer {

class Session;

// Installs the tick as the recorder's tick hook (before the recorder starts). `session` gives
// the CUPTI state and whether the run is stopping; activity_budget caps the activity events
// decoded per tick (the writer's ring must not overflow).
void StartTick(const Session* session, size_t activity_budget) noexcept;

// After activity collection started with a sampled kind (--kernels sampled or
// --memory-activity sampled): the tick opens and closes sampling windows.
void EnableSamplingWindows() noexcept;

// Writes the module map (objects not described yet) and the process description (if not
// written yet) now. Before a pause (the tick writes them only while capturing, so nothing is
// taken as written while the sink drops it), and on the exit path after the last drain (a short
// run the writer never ticked through).
void WriteSessionRecords() noexcept;

// While alive, the calling thread is not the writer: a tick it runs (inside a flush or a stop)
// skips the writer-only work.
class NotWriterScope {
 public:
  NotWriterScope() noexcept;
  ~NotWriterScope();
  NotWriterScope(const NotWriterScope&) = delete;
  NotWriterScope& operator=(const NotWriterScope&) = delete;

 private:
  bool was_;
};

// For threads that never write (the signal thread): permanently not the writer.
void MarkNotWriterThread() noexcept;

}  // namespace cuclimb::interposer
