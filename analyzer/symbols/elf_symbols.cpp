// SPDX-License-Identifier: Apache-2.0
// A bounds-checked ELF64 symbol table reader (no libelf dependency).
#include "symbols/elf_symbols.h"

#include <algorithm>
#include <cstring>
#include <fstream>

#include <elf.h>

#include "absl/strings/str_cat.h"

namespace cuclimb::analysis {
namespace {

constexpr uint64_t kMaxSymbolBytes = 1ull << 30;  // refuse absurd tables

bool ReadAt(std::ifstream& f, uint64_t off, void* out, size_t n) {
  f.clear();
  f.seekg(static_cast<std::streamoff>(off));
  f.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
  return static_cast<size_t>(f.gcount()) == n;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ElfSymbols>> ElfSymbols::Load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  f.seekg(0, std::ios::end);
  const uint64_t file_size = static_cast<uint64_t>(f.tellg());
  Elf64_Ehdr eh;
  if (!ReadAt(f, 0, &eh, sizeof(eh)) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a little-endian ELF64 file"));
  }
  auto out = std::unique_ptr<ElfSymbols>(new ElfSymbols());
  if (eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 4096 &&
      eh.e_phoff + uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr) <= file_size) {
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
      Elf64_Phdr ph;
      if (!ReadAt(f, eh.e_phoff + i * sizeof(Elf64_Phdr), &ph, sizeof(ph)))
        break;
      if (ph.p_type == PT_LOAD)
        out->segments_.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
    }
  }
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum >= 65280 ||
      eh.e_shoff + uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) > file_size) {
    return out;  // no section headers: no symbols, offsets still usable
  }
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  if (!ReadAt(f, eh.e_shoff, sh.data(), sh.size() * sizeof(Elf64_Shdr)))
    return out;
  // Prefer the full .symtab; a stripped library still has .dynsym.
  const Elf64_Shdr* table = nullptr;
  for (uint32_t type : {uint32_t{SHT_SYMTAB}, uint32_t{SHT_DYNSYM}}) {
    for (const Elf64_Shdr& s : sh) {
      if (s.sh_type == type && s.sh_entsize == sizeof(Elf64_Sym) && s.sh_link < sh.size()) {
        table = &s;
        break;
      }
    }
    if (table != nullptr)
      break;
  }
  if (table == nullptr)
    return out;
  const Elf64_Shdr& strtab = sh[table->sh_link];
  if (table->sh_offset + table->sh_size > file_size ||
      strtab.sh_offset + strtab.sh_size > file_size || table->sh_size > kMaxSymbolBytes ||
      strtab.sh_size > kMaxSymbolBytes) {
    return out;
  }
  out->names_.resize(strtab.sh_size);
  if (!ReadAt(f, strtab.sh_offset, out->names_.data(), out->names_.size()))
    return out;
  std::vector<Elf64_Sym> syms(table->sh_size / sizeof(Elf64_Sym));
  if (!ReadAt(f, table->sh_offset, syms.data(), syms.size() * sizeof(Elf64_Sym)))
    return out;
  for (const Elf64_Sym& s : syms) {
    if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_value == 0 ||
        s.st_name >= out->names_.size()) {
      continue;
    }
    out->symbols_.push_back({s.st_value, s.st_size, s.st_name});
  }
  std::sort(out->symbols_.begin(), out->symbols_.end(), [](const Symbol& a, const Symbol& b) {
    return a.addr != b.addr ? a.addr < b.addr : a.size > b.size;
  });
  return out;
}

bool ElfSymbols::FileOffsetToVaddr(uint64_t file_offset, uint64_t* vaddr) const {
  for (const Segment& s : segments_) {
    if (file_offset >= s.offset && file_offset < s.offset + s.filesz) {
      *vaddr = s.vaddr + (file_offset - s.offset);
      return true;
    }
  }
  return false;
}

bool ElfSymbols::Lookup(uint64_t vaddr, std::string_view* name, uint64_t* offset) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), vaddr,
                             [](uint64_t v, const Symbol& s) { return v < s.addr; });
  if (it == symbols_.begin())
    return false;
  --it;
  // Zero-sized symbols (hand-written assembly) cover up to the next symbol.
  const uint64_t end = it->size != 0
                           ? it->addr + it->size
                           : (std::next(it) != symbols_.end() ? std::next(it)->addr : ~0ull);
  if (vaddr >= end)
    return false;
  *name = std::string_view(names_.data() + it->name);
  *offset = vaddr - it->addr;
  return true;
}

}  // namespace cuclimb::analysis
