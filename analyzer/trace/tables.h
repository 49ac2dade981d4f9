// SPDX-License-Identifier: Apache-2.0
// The string and stack tables a trace defines, indexed by the ids events carry.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"

namespace cuclimb::trace {

// Strings by id; id 0 is "" and means "none". Intern() adds by content (JSON Lines input and
// tests); Define() adds the next id as a binary trace defines it.
class StringTable {
 public:
  StringTable() { strings_.emplace_back(); }

  std::string_view Get(uint32_t id) const {
    return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
  }
  bool Has(uint32_t id) const { return id < strings_.size(); }
  size_t size() const { return strings_.size(); }
  uint64_t bytes() const { return bytes_; }  // of all strings

  uint32_t Intern(std::string_view s);
  void Define(std::string_view s) {  // id = previous size()
    strings_.emplace_back(s);
    bytes_ += s.size();
  }

 private:
  std::vector<std::string> strings_;
  uint64_t bytes_ = 0;
  absl::flat_hash_map<std::string, uint32_t> index_;  // filled by Intern() only
};

// Stacks by id; id 0 is the empty stack. Frames are format::PcFrame/StringFrame words.
class StackTable {
 public:
  StackTable() {
    offsets_.push_back(0);
    offsets_.push_back(0);
  }

  absl::Span<const uint64_t> Get(uint32_t id) const {
    if (id + 1 >= offsets_.size())
      return {};
    return absl::MakeConstSpan(frames_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]);
  }
  bool Has(uint32_t id) const { return id + 1 < offsets_.size(); }
  size_t size() const { return offsets_.size() - 1; }
  uint64_t frames() const { return frames_.size(); }  // of all stacks

  uint32_t Intern(absl::Span<const uint64_t> frames);
  void Define(absl::Span<const uint64_t> frames);  // id = previous size()

 private:
  std::vector<uint64_t> frames_;
  std::vector<size_t> offsets_;  // stack i is frames_[offsets_[i], offsets_[i+1])
  absl::flat_hash_map<std::vector<uint64_t>, uint32_t> index_;  // filled by Intern() only
};

}  // namespace cuclimb::trace
