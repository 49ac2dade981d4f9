// SPDX-License-Identifier: Apache-2.0
// Definitions of the process-wide state of state.h, clock.h and reentry_guard.h.
#include "interposer/state.h"

#include "interposer/capture_state.h"
#include "interposer/clock.h"
#include "interposer/reentry_guard.h"

namespace cuclimb::interposer {

__attribute__((tls_model("initial-exec"))) thread_local uint32_t t_reentry_depth = 0;

constinit Config g_config;
constinit Hooks g_hooks;
constinit std::atomic<bool> g_capture_on{false};
constinit std::atomic<bool> g_in_child{false};
constinit std::atomic<bool> g_bare_callbacks{false};
constinit std::atomic<uint64_t> g_iteration_marks{0};
constinit std::atomic<uint64_t> g_iteration_number{0};
constinit std::atomic<bool> g_sync_seen{false};
constinit ContextTable g_contexts;
constinit FunctionNames g_functions;
constinit PoolSet g_pools;

namespace {
constinit std::atomic<int64_t> g_base_ns{0};
}  // namespace

int64_t BaseNs() noexcept {
  return g_base_ns.load(std::memory_order_relaxed);
}
void SetBaseNs(int64_t base) noexcept {
  g_base_ns.store(base, std::memory_order_relaxed);
}

void NoteIterationBoundary(bool has_number, uint64_t number) noexcept {
  const uint64_t marks = g_iteration_marks.fetch_add(1, std::memory_order_relaxed) + 1;
  g_iteration_number.store(has_number ? number : marks, std::memory_order_relaxed);
}

void ResetStateForTesting() noexcept {
  g_config = Config{};
  g_hooks = Hooks{};
  g_capture_on.store(false);
  g_in_child.store(false);
  g_bare_callbacks.store(false);
  g_iteration_marks.store(0);
  g_iteration_number.store(0);
  g_sync_seen.store(false);
  g_contexts.ResetForTesting();
  g_functions.ResetForTesting();
  g_pools.ResetForTesting();
  Captures().ResetForTesting();
}

}  // namespace cuclimb::interposer
