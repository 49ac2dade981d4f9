// SPDX-License-Identifier: Apache-2.0
// Turns recorded stack frames into classified Frames: string frames as recorded (Python frames
// decoded, mangled names demangled), return addresses through the `mapping` events and the ELF
// files they name, with their debug files, when those exist on this machine (names, file:line,
// inlined calls); otherwise "module+0xoffset" and why. Call sites are labelled and keyed by
// SiteLabel: the user's frame first.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "symbols/debug_files.h"
#include "symbols/frame.h"
#include "symbols/frame_classifier.h"
#include "symbols/module_symbols.h"
#include "trace/tables.h"

namespace cuclimb::analysis {

class Symbolizer {
 public:
  using Frame = analysis::Frame;

  // search_dirs (--symbols) are searched first for the mapped files, by base name, and for
  // their debug files (debug_files.h); debug_root stands for /usr/lib/debug (tests change it).
  // Recorded paths are looked up under host_root ("" = this machine's root).
  explicit Symbolizer(std::vector<std::string> search_dirs = {},
                      FrameClassifier classifier = FrameClassifier::Builtin(),
                      std::string debug_root = "/usr/lib/debug", std::string host_root = "");
  ~Symbolizer();

  // A `mapping` event: file offset `file_offset` of path is mapped at address base, for size
  // bytes; build_id is the hex build id recorded with it ("" when none).
  void AddMapping(std::string path, uint64_t base, uint64_t size, uint64_t file_offset,
                  std::string build_id = "");

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
  // "Trainer::Step <- main". A stack with no user frame is labelled by its two outermost
  // framework frames (the operator, not the allocator under it), else by its first two frames
  // outside CUDA; an empty stack by "".
  std::string SiteLabel(absl::Span<const uint64_t> stack, const trace::StringTable& strings);

  // One line per module whose frames in a label so far lack a name or a source line, saying why
  // and how to fix it ("--symbols DIR", the -dbg package), for the report's notes.
  std::vector<std::string> Notes() const;

  const FrameClassifier& classifier() const { return classifier_; }

 private:
  struct Mapping {
    uint64_t base, size, offset;
    uint32_t file;  // index into files_
    bool delta_known = false, delta_ok = false;
    int64_t delta = 0;  // link-time address − file offset in this mapping
  };
  struct File {
    std::string path, base_name, build_id;
    bool tried = false;
    ModuleFiles located;
    std::unique_ptr<ModuleSymbols> symbols;              // null when no usable file
    std::string problem;                                 // why symbols is null
    bool noted_unnamed = false, noted_no_lines = false;  // a label used such a frame
  };
  ModuleSymbols* SymbolsOf(File& file);
  std::vector<Frame> ResolvePc(uint64_t pc);
  Frame ResolveString(std::string_view text) const;
  void NoteLabelFrame(const Frame& f);

  std::vector<std::string> search_dirs_;
  FrameClassifier classifier_;
  std::string debug_root_;
  std::string host_root_;
  std::vector<Mapping> mappings_;  // sorted by base on lookup
  bool sorted_ = true;
  std::vector<File> files_;
  absl::flat_hash_map<std::string, uint32_t> file_index_;
  absl::flat_hash_map<uint64_t, std::vector<Frame>> cache_;
};

}  // namespace cuclimb::analysis
