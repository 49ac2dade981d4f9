// SPDX-License-Identifier: Apache-2.0
// One module's symbols, lines and inlined calls through libdwfl, read offline.
#include "symbols/module_symbols.h"

#include <cstdlib>
#include <cstring>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <vector>

#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "symbols/demangle.h"
#include "symbols/dwarf_functions.h"

namespace cuclimb::analysis {
namespace {

// The module is reported with its file name, so libdwfl never has to look for it.
int FindNoElf(Dwfl_Module*, void**, const char*, Dwarf_Addr, char**, Elf**) {
  return -1;
}

// The separate debug file was chosen beforehand (debug_files.h), so libdwfl's own search, which
// would also ask a debuginfod server when DEBUGINFOD_URLS is set, is never run.
int OpenChosenDebugFile(Dwfl_Module*, void** userdata, const char*, Dwarf_Addr, const char*,
                        const char*, GElf_Word, char** debuginfo_file_name) {
  const auto* path = static_cast<const std::string*>(*userdata);
  if (path == nullptr || path->empty()) {
    errno = 0;
    return -1;
  }
  const int fd = open(path->c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0)
    *debuginfo_file_name = strdup(path->c_str());
  return fd;
}

const Dwfl_Callbacks kCallbacks = {FindNoElf, OpenChosenDebugFile, dwfl_offline_section_address,
                                   nullptr};

// "/b/build/../src/./a.cpp" → "/b/src/a.cpp": DWARF paths joined from a relative directory.
std::string Normalize(const char* path) {
  std::vector<std::string> parts;
  const bool absolute = path[0] == '/';
  std::string part;
  for (const char* p = path;; ++p) {
    if (*p == '/' || *p == '\0') {
      if (part == "..") {
        if (!parts.empty() && parts.back() != "..")
          parts.pop_back();
        else if (!absolute)
          parts.push_back(part);
      } else if (!part.empty() && part != ".") {
        parts.push_back(part);
      }
      part.clear();
      if (*p == '\0')
        break;
    } else {
      part.push_back(*p);
    }
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) absl::StrAppend(&out, i > 0 ? "/" : "", parts[i]);
  return out;
}

// A source path as DWARF gives it, made absolute with the unit's compilation directory.
std::string SourcePath(const char* path, Dwarf_Die* cu) {
  if (path == nullptr)
    return "";
  if (path[0] != '/' && cu != nullptr) {
    Dwarf_Attribute attr;
    if (const char* dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
        dir != nullptr && dir[0] == '/') {
      return Normalize(absl::StrCat(dir, "/", path).c_str());
    }
  }
  return Normalize(path);
}

// A function DIE's name: its linkage name demangled (through abstract origins and
// specifications), else its plain name.
std::string DieName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (const char* s = dwarf_formstring(dwarf_attr_integrate(die, at, &attr)); s != nullptr)
      return Demangle(s);
  }
  const char* name = dwarf_diename(die);
  return name != nullptr ? name : "";
}

// Where an inlined call was made: DW_AT_call_file (an index into the CU's files) and line.
void CallSite(Dwarf_Die* inlined, Dwarf_Die* cu, std::string* file, int* line) {
  file->clear();
  *line = 0;
  Dwarf_Attribute attr;
  Dwarf_Word index = 0, call_line = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &call_line) == 0)
    *line = static_cast<int>(call_line);
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &index) == 0 &&
      dwarf_getsrcfiles(cu, &files, &count) == 0 && index < count) {
    *file = SourcePath(dwarf_filesrc(files, index, nullptr, nullptr), cu);
  }
}

}  // namespace

struct ModuleSymbols::Impl {
  struct Segment {
    uint64_t offset, vaddr, filesz;
    bool exec;
  };
  struct Symbol {
    uint64_t addr, size;
    const char* name;  // owned by libdwfl's ELF data
  };
  std::string debug_path;
  Dwfl* dwfl = nullptr;
  Dwfl_Module* mod = nullptr;
  std::vector<Segment> segments;
  int dwarf = -1;  // −1 unknown, 0 absent, 1 present
  // Function symbols by address, built on first use: libdwfl's own address lookup scans the
  // whole table for every address (libtorch has ~10^5 symbols).
  bool symbols_built = false;
  std::vector<Symbol> symbols;
  DwarfFunctions functions;

  const char* SymbolAt(uint64_t vaddr);

  ~Impl() {
    if (dwfl != nullptr)
      dwfl_end(dwfl);
  }
};

const char* ModuleSymbols::Impl::SymbolAt(uint64_t vaddr) {
  if (!symbols_built) {
    symbols_built = true;
    const int count = dwfl_module_getsymtab(mod);
    for (int i = 1; i < count; ++i) {
      GElf_Sym sym;
      GElf_Addr addr = 0;
      GElf_Word shndx = 0;
      const char* name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, nullptr, nullptr);
      const int type = GELF_ST_TYPE(sym.st_info);
      if (name != nullptr && name[0] != '\0' && (type == STT_FUNC || type == STT_GNU_IFUNC) &&
          shndx != SHN_UNDEF && addr != 0) {
        symbols.push_back({addr, sym.st_size, name});
      }
    }
    std::sort(symbols.begin(), symbols.end(), [](const Symbol& a, const Symbol& b) {
      return a.addr != b.addr ? a.addr < b.addr : a.size > b.size;
    });
  }
  auto it = std::upper_bound(symbols.begin(), symbols.end(), vaddr,
                             [](uint64_t v, const Symbol& s) { return v < s.addr; });
  if (it == symbols.begin())
    return nullptr;
  // The last symbol starting at or before vaddr (the largest of equals); a symbol without a
  // size (assembly) reaches up to the next one.
  const auto next = it;
  const uint64_t start = std::prev(it)->addr;
  while (it != symbols.begin() && std::prev(it)->addr == start) --it;
  const uint64_t end =
      it->size != 0 ? it->addr + it->size : (next != symbols.end() ? next->addr : UINT64_MAX);
  return vaddr < end ? it->name : nullptr;
}

ModuleSymbols::ModuleSymbols(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ModuleSymbols::~ModuleSymbols() = default;

absl::StatusOr<std::unique_ptr<ModuleSymbols>> ModuleSymbols::Open(const std::string& elf_path,
                                                                   const std::string& debug_path) {
  auto impl = std::make_unique<Impl>();
  impl->debug_path = debug_path;
  impl->dwfl = dwfl_begin(&kCallbacks);
  if (impl->dwfl == nullptr)
    return absl::InternalError(absl::StrCat("libdwfl: ", dwfl_errmsg(-1)));
  dwfl_report_begin(impl->dwfl);
  // Base 0 with add_p_vaddr: addresses in the module are its link-time addresses.
  impl->mod = dwfl_report_elf(impl->dwfl, elf_path.c_str(), elf_path.c_str(), -1, 0, true);
  dwfl_report_end(impl->dwfl, nullptr, nullptr);
  if (impl->mod == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(elf_path, ": ", dwfl_errmsg(-1)));
  void** userdata = nullptr;
  dwfl_module_info(impl->mod, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  if (userdata != nullptr)
    *userdata = &impl->debug_path;
  GElf_Addr bias = 0;
  if (Elf* elf = dwfl_module_getelf(impl->mod, &bias); elf != nullptr) {
    size_t count = 0;
    if (elf_getphdrnum(elf, &count) == 0) {
      for (size_t i = 0; i < count; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, static_cast<int>(i), &ph) != nullptr && ph.p_type == PT_LOAD)
          impl->segments.push_back(
              {ph.p_offset, ph.p_vaddr, ph.p_filesz, (ph.p_flags & PF_X) != 0});
      }
    }
  }
  return std::unique_ptr<ModuleSymbols>(new ModuleSymbols(std::move(impl)));
}

bool ModuleSymbols::SegmentDelta(uint64_t file_offset, int64_t* delta) const {
  constexpr uint64_t kPage = 4096;
  const Impl::Segment* best = nullptr;
  for (const Impl::Segment& s : impl_->segments) {
    // The page that holds p_offset is mapped too: a mapping may start below p_offset.
    const uint64_t start = s.offset & ~(kPage - 1);
    // A debug file's segments keep their addresses but not their file extent (filesz 0).
    if (s.filesz > 0 && file_offset >= start && file_offset < s.offset + s.filesz &&
        (best == nullptr || (s.exec && !best->exec))) {
      best = &s;
    }
  }
  if (best == nullptr)
    return false;
  *delta = static_cast<int64_t>(best->vaddr) - static_cast<int64_t>(best->offset);
  return true;
}

bool ModuleSymbols::IsLowestLoadAddress(uint64_t value) const {
  uint64_t low = UINT64_MAX;
  for (const Impl::Segment& s : impl_->segments) low = std::min(low, s.vaddr);
  return !impl_->segments.empty() && value == low && low != 0;
}

bool ModuleSymbols::has_dwarf() {
  if (impl_->dwarf < 0) {
    Dwarf_Addr bias = 0;
    impl_->dwarf = dwfl_module_getdwarf(impl_->mod, &bias) != nullptr ? 1 : 0;
  }
  return impl_->dwarf == 1;
}

std::vector<Frame> ModuleSymbols::Symbolize(uint64_t vaddr) {
  std::vector<Frame> out;
  const char* symbol = impl_->SymbolAt(vaddr);
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(impl_->mod, vaddr, &bias);
  std::string file;
  int line = 0;
  if (Dwfl_Line* l = dwfl_module_getsrc(impl_->mod, vaddr); l != nullptr)
    file = SourcePath(dwfl_lineinfo(l, nullptr, &line, nullptr, nullptr, nullptr), cu);
  if (cu != nullptr) {
    std::vector<Dwarf_Die> chain = impl_->functions.ChainAt(cu, vaddr - bias);
    for (Dwarf_Die& scope : chain) {
      const bool inlined = dwarf_tag(&scope) == DW_TAG_inlined_subroutine;
      Frame f;
      f.function = DieName(&scope);
      f.file = file;
      f.line = line;
      f.inlined = inlined;
      f.symbolized = !f.function.empty();
      out.push_back(std::move(f));
      if (inlined)
        CallSite(&scope, cu, &file, &line);  // the outer function's line is the call's
    }
  }
  if (out.empty() || out.back().inlined) {
    // No DWARF function here (assembly, a library built without -g): the symbol alone, or as
    // the function the last inlined call sits in.
    if (symbol == nullptr)
      return out;
    Frame f;
    f.function = Demangle(symbol);
    f.file = file;  // the line table's, or where the last inlined call was made
    f.line = line;
    f.symbolized = true;
    out.push_back(std::move(f));
  } else if (out.back().function.empty() && symbol != nullptr) {
    out.back().function = Demangle(symbol);
    out.back().symbolized = true;
  }
  return out;
}

}  // namespace cuclimb::analysis
