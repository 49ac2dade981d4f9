// SPDX-License-Identifier: Apache-2.0
// Turns stack frames into function names: string frames as recorded (demangled when mangled),
// return addresses through the `mapping` events and the ELF symbol tables of the mapped files,
// when those files exist on this machine; otherwise "module+0xoffset".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "symbols/elf_symbols.h"
#include "trace/tables.h"

namespace cuclimb::analysis {

class Symbolizer {
 public:
  // search_dirs are tried (by the mapped file's base name) before the recorded path.
  explicit Symbolizer(std::vector<std::string> search_dirs = {});

  void AddMapping(std::string path, uint64_t base, uint64_t size, uint64_t file_offset);

  struct Frame {
    std::string function;  // demangled, or "module+0x1234", or "0x7f..." without a mapping
    std::string module;    // base name of the mapped file ("" for string frames)
    bool symbolized = false;
  };
  // A frame word (format::PcFrame / StringFrame). Return addresses are looked up at pc − 1 so
  // that a call at the end of a function is not taken for the next one.
  Frame Resolve(uint64_t frame_word, const trace::StringTable& strings);

  // Symbolized frames of a stack, innermost first, at most max_frames.
  std::vector<std::string> Frames(absl::Span<const uint64_t> stack,
                                  const trace::StringTable& strings, size_t max_frames = 32);
  // The call site: the first two frames outside the CUDA libraries, NVTX and cuclimb itself,
  // shortened to their last two name components: "MemoryManagement::reserve <- Adam::step".
  std::string SiteLabel(absl::Span<const uint64_t> stack, const trace::StringTable& strings);

  // True for frames of CUDA, CUPTI, NVTX, the C library's allocator wrappers, or cuclimb.
  static bool IsRuntimeFrame(const Frame& f);

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

  std::vector<std::string> search_dirs_;
  std::vector<Mapping> mappings_;  // sorted by base on lookup
  bool sorted_ = true;
  std::vector<File> files_;
  absl::flat_hash_map<std::string, uint32_t> file_index_;
  absl::flat_hash_map<uint64_t, Frame> cache_;
};

// "a::b::C<T>::f(int) const" → "C<T>::f".
std::string ShortFunctionName(const std::string& function);

}  // namespace cuclimb::analysis
