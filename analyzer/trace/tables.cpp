// SPDX-License-Identifier: Apache-2.0
// String and stack interning for traces read from JSON Lines or built by tests.
#include "trace/tables.h"

namespace cuclimb::trace {

uint32_t StringTable::Intern(std::string_view s) {
  if (s.empty())
    return 0;
  auto [it, inserted] = index_.try_emplace(std::string(s), static_cast<uint32_t>(strings_.size()));
  if (inserted)
    strings_.emplace_back(s);
  return it->second;
}

uint32_t StackTable::Intern(absl::Span<const uint64_t> frames) {
  if (frames.empty())
    return 0;
  auto [it, inserted] = index_.try_emplace(std::vector<uint64_t>(frames.begin(), frames.end()),
                                           static_cast<uint32_t>(size()));
  if (inserted)
    Define(frames);
  return it->second;
}

void StackTable::Define(absl::Span<const uint64_t> frames) {
  frames_.insert(frames_.end(), frames.begin(), frames.end());
  offsets_.push_back(frames_.size());
}

}  // namespace cuclimb::trace
