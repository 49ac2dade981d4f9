// SPDX-License-Identifier: Apache-2.0
// Turns recorded stack frames into classified Frames: string frames as recorded (Python frames
// decoded, mangled names demangled), return addresses through the `mapping` events and the ELF
// files they name, when those files exist on this machine; otherwise "module+0xoffset". Call
// sites are labelled and keyed by SiteLabel: the user's frame first.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "symbols/elf_symbols.h"
#include "symbols/frame.h"
#include "symbols/frame_classifier.h"
#include "trace/tables.h"

namespace cuclimb::analysis {

class Symbolizer {
 public:
  using Frame = analysis::Frame;

  // search_dirs are tried (by the mapped file's base name) before the recorded path.
  explicit Symbolizer(std::vector<std::string> search_dirs = {},
                      FrameClassifier classifier = FrameClassifier::Builtin());

  void AddMapping(std::string path, uint64_t base, uint64_t size, uint64_t file_offset);

  // The frames of one frame word (format::PcFrame / StringFrame), innermost first: several when
  // functions were inlined at the return address, which is looked up at pc − 1 so that a call
  // at the end of a function is not taken for the next one. Classified; never empty.
  const std::vector<Frame>& ResolveAll(uint64_t frame_word, const trace::StringTable& strings);
  // The innermost of them.
  Frame Resolve(uint64_t frame_word, const trace::StringTable& strings) {
    return ResolveAll(frame_word, strings).front();
  }

  // A stack's frames, inlined ones included, innermost first, at most max_frames, in the
  // evidence form of FormatFrame.
  std::vector<std::string> Frames(absl::Span<const uint64_t> stack,
                                  const trace::StringTable& strings, size_t max_frames = 32);

  // The call site's label, which is also its key: stacks that differ only in internal frames
  // (FrameClass other than kUser) get the same label. It is the first user frame and the next
  // user frame that calls it, in FrameLabel form: "step (train.py:17) <- main (train.py:40)",
  // "Trainer::Step <- main". A stack with no user frame is labelled by its first two frames
  // outside CUDA, an empty stack by "".
  std::string SiteLabel(absl::Span<const uint64_t> stack, const trace::StringTable& strings);

  const FrameClassifier& classifier() const { return classifier_; }

 private:
  struct Mapping {
    uint64_t base, size, offset;
    uint32_t file;  // index into files_
  };
  struct File {
    std::string path, base_name;
    bool tried = false;
    std::unique_ptr<ElfSymbols> symbols;  // null when unreadable
  };
  const ElfSymbols* SymbolsOf(File& file);
  Frame ResolvePc(uint64_t pc);
  Frame ResolveString(std::string_view text) const;

  std::vector<std::string> search_dirs_;
  FrameClassifier classifier_;
  std::vector<Mapping> mappings_;  // sorted by base on lookup
  bool sorted_ = true;
  std::vector<File> files_;
  absl::flat_hash_map<std::string, uint32_t> file_index_;
  absl::flat_hash_map<uint64_t, std::vector<Frame>> cache_;
};

}  // namespace cuclimb::analysis
