// SPDX-License-Identifier: Apache-2.0
// The stack probe's interface (see stack_probe.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

struct ProbeRequest {
  int mode = 0;  // cuclimb::interposer::StackMode
  uint32_t depth = 32;
  bool from_context = false;  // CollectStackFromContext(pc, sp, fp) instead of CollectStack
  uintptr_t pc = 0;
  uintptr_t sp = 0;
  uintptr_t fp = 0;
  size_t count = 0;
  uint64_t frames[256] = {};
};

extern "C" {
void probe_refresh();
void probe_callback(void* arg);
int probe_is_cuda_code(uintptr_t pc);
int probe_stack_bounds(uintptr_t* low, uintptr_t* high);
}
