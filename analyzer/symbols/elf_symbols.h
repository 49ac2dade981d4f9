// SPDX-License-Identifier: Apache-2.0
// Function symbols of an ELF64 file (.symtab, else .dynsym), for offline symbolization.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace cuclimb::analysis {

class ElfSymbols {
 public:
  // Reads the program headers and the function symbols of path. Errors: the file cannot be read
  // or is not a little-endian ELF64 file. Every size and offset is checked against the file.
  static absl::StatusOr<std::unique_ptr<ElfSymbols>> Load(const std::string& path);

  // The virtual address (as linked) that a file offset is loaded at; false when no PT_LOAD
  // segment covers it.
  bool FileOffsetToVaddr(uint64_t file_offset, uint64_t* vaddr) const;
  // The (mangled) function containing vaddr, and vaddr's offset in it; false when none.
  bool Lookup(uint64_t vaddr, std::string_view* name, uint64_t* offset) const;
  size_t size() const { return symbols_.size(); }

 private:
  struct Symbol {
    uint64_t addr, size;
    uint32_t name;  // offset into names_
  };
  struct Segment {
    uint64_t offset, vaddr, filesz;
  };
  std::vector<Symbol> symbols_;  // sorted by addr
  std::vector<Segment> segments_;
  std::string names_;
};

}  // namespace cuclimb::analysis
