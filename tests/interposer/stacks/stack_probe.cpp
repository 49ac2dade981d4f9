// SPDX-License-Identifier: Apache-2.0
// Plays libcuclimb.so in stack tests: a shared object holding the capture code, so that its own
// frames are "own code" exactly as in the real library, with a callback that takes the stack.
#include "stack_probe.h"

#include "interposer/cuda_code.h"
#include "interposer/stack.h"

namespace {

__attribute__((noinline)) void Take(ProbeRequest* request) {
  if (request->from_context) {
    request->count = cuclimb::interposer::CollectStackFromContext(
        request->pc, request->sp, request->fp, request->depth, request->frames);
  } else {
    request->count = cuclimb::interposer::CollectStack(
        static_cast<cuclimb::interposer::StackMode>(request->mode), request->depth,
        request->frames);
  }
  asm volatile("" ::: "memory");
}

}  // namespace

extern "C" void probe_refresh() {
  cuclimb::interposer::RefreshCudaRuntimeCode();
}

extern "C" void probe_callback(void* arg) {
  Take(static_cast<ProbeRequest*>(arg));
  asm volatile("" ::: "memory");
}

extern "C" int probe_is_cuda_code(uintptr_t pc) {
  return cuclimb::interposer::IsCudaRuntimeCode(pc) ? 1 : 0;
}

extern "C" int probe_stack_bounds(uintptr_t* low, uintptr_t* high) {
  return cuclimb::interposer::ThreadStackBounds(low, high) ? 1 : 0;
}
