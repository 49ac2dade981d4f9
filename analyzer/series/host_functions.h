// SPDX-License-Identifier: Apache-2.0
// Host stack samples by function, inclusive: a sample counts once for every distinct function on
// its stack, so a function's series is the time spent in it and in what it calls.
//
// Why inclusive: the leaf of a sample is where the CPU was, and that is mostly the C library,
// the interpreter or the driver (`libc.so.6+0x98e50` told a user nothing about a PyTorch loop
// that registered one more gradient hook per iteration). The frame that explains growing host
// time is higher up: the deepest frame of the program or its framework whose inclusive samples
// grow (detect/host_growth.h picks it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "series/slot_vec.h"
#include "symbols/symbolizer.h"
#include "trace/tables.h"

namespace cuclimb::analysis {

// How much a frame tells a user, best last (from its symbols/frame_classes.txt class).
enum class FrameRank : uint8_t {
  kUnsymbolized = 0,  // "module+0x1234", or an address in no module
  kSystem = 1,        // symbolized, in CUDA, the C/C++ runtime, the loader or the interpreter
  kActionable = 2,    // symbolized, the program's own code or its framework's (Python included)
};

FrameRank RankFrame(const Frame& frame);

struct HostFunctions {
  // A native function by its demangled name; a Python frame by its label, line included
  // ("<lambda> (train.py:104)"): the line is what a user changes, and a Python function's lines
  // are different calls.
  std::vector<std::string> names;
  std::vector<FrameRank> ranks;
  std::vector<bool> user;  // FrameClass::kUser: the program's own code
  // Samples per slot of each function.
  std::vector<SlotVec> inclusive;
  // Each distinct sampled stack: its stack id, its distinct functions innermost first, samples.
  struct Stack {
    uint32_t stack_id = 0;
    std::vector<uint32_t> functions;
    uint64_t samples = 0;
  };
  std::vector<Stack> stacks;
};

class HostFunctionCollector {
 public:
  explicit HostFunctionCollector(HostFunctions* out) : out_(out) {}

  // One sample of stack `stack_id` (frames innermost first) in `slot`.
  void Observe(uint32_t stack_id, absl::Span<const uint64_t> frames, uint32_t slot,
               Symbolizer& symbolizer, const trace::StringTable& strings);

 private:
  uint32_t FunctionOf(const Frame& frame);

  HostFunctions* out_;
  absl::flat_hash_map<uint32_t, uint32_t> stack_index_;  // stack id → out_->stacks
  absl::flat_hash_map<std::string, uint32_t> by_name_;   // function name → function
};

}  // namespace cuclimb::analysis
