// SPDX-License-Identifier: Apache-2.0
// Inclusive host samples by function.
#include "series/host_functions.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace cuclimb::analysis {

FrameRank RankFrame(const Symbolizer::Frame& frame) {
  if (!frame.symbolized)
    return FrameRank::kUnsymbolized;
  if (Symbolizer::IsRuntimeFrame(frame))
    return FrameRank::kSystem;
  // The C and C++ runtimes, the dynamic loader, CPython's own C code and the CUDA math and
  // communication libraries: where time is spent, never what to change.
  static constexpr absl::string_view kSystemModules[] = {
      "libc.so",    "libc-",    "libstdc++", "libgcc_s", "libm.so",     "libm-",
      "libpthread", "libdl.so", "librt.so",  "ld-linux", "libpython",   "python",
      "libcublas",  "libcudnn", "libnccl",   "libcufft", "libcusparse", "libcurand"};
  for (absl::string_view m : kSystemModules) {
    if (absl::StartsWith(frame.module, m))
      return FrameRank::kSystem;
  }
  return FrameRank::kActionable;
}

uint32_t HostFunctionCollector::FunctionOf(uint64_t word, Symbolizer& symbolizer,
                                           const trace::StringTable& strings) {
  auto [it, inserted] = by_frame_.try_emplace(word, 0);
  if (!inserted)
    return it->second;
  const Symbolizer::Frame f = symbolizer.Resolve(word, strings);
  auto [fit, fnew] = by_name_.try_emplace(f.function, static_cast<uint32_t>(out_->names.size()));
  if (fnew) {
    out_->names.push_back(f.function);
    out_->ranks.push_back(RankFrame(f));
    out_->inclusive.emplace_back();
  }
  it->second = fit->second;
  return fit->second;
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
      const uint32_t fn = FunctionOf(word, symbolizer, strings);
      // Recursion (and several addresses in one function) count once per sample.
      if (std::find(s.functions.begin(), s.functions.end(), fn) == s.functions.end())
        s.functions.push_back(fn);
    }
    out_->stacks.push_back(std::move(s));
  }
  HostFunctions::Stack& s = out_->stacks[it->second];
  ++s.samples;
  for (uint32_t fn : s.functions) {
    std::vector<uint32_t>& v = out_->inclusive[fn];
    if (slot >= v.size())
      v.resize(std::max<size_t>(slot + 1, 2 * v.size() + 16), 0);
    ++v[slot];
  }
}

}  // namespace cuclimb::analysis
