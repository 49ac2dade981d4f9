// SPDX-License-Identifier: Apache-2.0
// The functions, source lines and inlined calls of one ELF module, read through elfutils'
// libdwfl from the file and its separate debug file: .symtab (else .dynsym) for names, DWARF
// for file:line and the chain of inlined calls at an address.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "symbols/frame.h"

namespace cuclimb::analysis {

class ModuleSymbols {
 public:
  // elf_path: the module's ELF file; debug_path: its separate debug file, or "". Errors: the
  // file cannot be opened or is not ELF (libdwfl's message).
  static absl::StatusOr<std::unique_ptr<ModuleSymbols>> Open(const std::string& elf_path,
                                                             const std::string& debug_path);
  ~ModuleSymbols();
  ModuleSymbols(const ModuleSymbols&) = delete;
  ModuleSymbols& operator=(const ModuleSymbols&) = delete;

  // The difference, link-time address − file offset, of the PT_LOAD segment whose pages hold
  // file_offset (an executable segment preferred: return addresses are code); false when none
  // does. A debug file (objcopy --only-keep-debug) keeps only its first segment's offsets, so
  // alone it serves mappings recorded from the first segment, as the recorder writes them.
  // (A /proc/<pid>/maps line of the code segment needs the program file itself.)
  bool SegmentDelta(uint64_t file_offset, int64_t* delta) const;
  // Whether file_offset equals the lowest PT_LOAD address (traces of cuclimb before format 1.x
  // recorded that address, not a file offset, for non-PIE executables).
  bool IsLowestLoadAddress(uint64_t value) const;

  // The frames at a link-time address, innermost first: the inlined calls (inlined = true)
  // then the function they are inlined into, each with its source file and line when DWARF
  // has them. Names are demangled. Empty when no symbol or DWARF function covers the address.
  std::vector<Frame> Symbolize(uint64_t vaddr);

  bool has_dwarf();  // DWARF was found (loads it)

 private:
  struct Impl;
  explicit ModuleSymbols(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuclimb::analysis
