// SPDX-License-Identifier: Apache-2.0
// Inclusive host samples by function.
#include "series/host_functions.h"

#include <algorithm>

namespace cuclimb::analysis {

FrameRank RankFrame(const Frame& frame) {
  if (!frame.symbolized || frame.frame_class == FrameClass::kUnknown)
    return FrameRank::kUnsymbolized;
  switch (frame.frame_class) {
    case FrameClass::kUser:
    case FrameClass::kFramework:
      return FrameRank::kActionable;
    default:
      return FrameRank::kSystem;
  }
}

uint32_t HostFunctionCollector::FunctionOf(const Frame& frame) {
  std::string name = frame.python ? FrameLabel(frame) : frame.function;
  auto [it, inserted] = by_name_.try_emplace(name, static_cast<uint32_t>(out_->names.size()));
  if (inserted) {
    out_->names.push_back(std::move(name));
    out_->ranks.push_back(RankFrame(frame));
    out_->user.push_back(frame.frame_class == FrameClass::kUser);
    out_->inclusive.emplace_back();
  }
  return it->second;
}

void HostFunctionCollector::Observe(uint32_t stack_id, absl::Span<const uint64_t> frames,
                                    uint32_t slot, Symbolizer& symbolizer,
                                    const trace::StringTable& strings) {
  auto [it, inserted] =
      stack_index_.try_emplace(stack_id, static_cast<uint32_t>(out_->stacks.size()));
  if (inserted) {
    HostFunctions::Stack s;
    s.stack_id = stack_id;
    for (uint64_t word : frames) {
      for (const Frame& frame : symbolizer.ResolveAll(word, strings)) {  // inlined ones too
        const uint32_t fn = FunctionOf(frame);
        // Recursion (and several addresses in one function) count once per sample.
        if (std::find(s.functions.begin(), s.functions.end(), fn) == s.functions.end())
          s.functions.push_back(fn);
      }
    }
    out_->stacks.push_back(std::move(s));
  }
  HostFunctions::Stack& s = out_->stacks[it->second];
  ++s.samples;
  for (uint32_t fn : s.functions) {
    out_->inclusive[fn].Add(slot, 1);
  }
}

}  // namespace cuclimb::analysis
