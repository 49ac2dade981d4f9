// SPDX-License-Identifier: Apache-2.0
// Locating a module's ELF file and separate debug file on the analysing machine.
#include "symbols/debug_files.h"

#include <cstring>
#include <elfutils/libdwelf.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

namespace cuclimb::analysis {
namespace {

std::string Hex(const void* bytes, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  const auto* p = static_cast<const unsigned char*>(bytes);
  for (size_t i = 0; i < n; ++i) {
    s.push_back(kHex[p[i] >> 4]);
    s.push_back(kHex[p[i] & 15]);
  }
  return s;
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string Join(const std::string& dir, const std::string& name) {
  if (dir.empty())
    return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// "DIR/.build-id/ab/cdef….debug" for build id "abcdef…".
std::string BuildIdPath(const std::string& dir, const std::string& build_id) {
  return Join(dir, ".build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug");
}

}  // namespace

ElfIds ReadElfIds(const std::string& path) {
  ElfIds ids;
  if (!IsRegularFile(path))
    return ids;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ids;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf != nullptr && elf_kind(elf) == ELF_K_ELF) {
    ids.ok = true;
    const void* bits = nullptr;
    const ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
    if (n > 0)
      ids.build_id = Hex(bits, static_cast<size_t>(n));
    GElf_Word crc = 0;
    if (const char* link = dwelf_elf_gnu_debuglink(elf, &crc); link != nullptr)
      ids.debug_link = link;
    size_t shstrndx = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
      for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == nullptr)
          continue;
        if (sh.sh_type == SHT_SYMTAB)
          ids.has_symtab = true;
        const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
        if (name != nullptr && sh.sh_type == SHT_PROGBITS && sh.sh_size > 0 &&
            (std::strcmp(name, ".debug_info") == 0 || std::strcmp(name, ".zdebug_info") == 0)) {
          ids.has_dwarf = true;
        }
      }
    }
  }
  if (elf != nullptr)
    elf_end(elf);
  close(fd);
  return ids;
}

ModuleFiles LocateModuleFiles(const std::string& recorded_path,
                              const std::string& recorded_build_id,
                              const std::vector<std::string>& dirs, const std::string& debug_root) {
  ModuleFiles out;
  const std::string base = BaseName(recorded_path);
  bool seen_other_build = false;
  std::vector<std::string> candidates;
  for (const std::string& dir : dirs) candidates.push_back(Join(dir, base));
  candidates.push_back(recorded_path);
  for (const std::string& c : candidates) {
    ElfIds ids = ReadElfIds(c);
    if (!ids.ok)
      continue;
    if (!recorded_build_id.empty() && ids.build_id != recorded_build_id) {
      seen_other_build = true;
      continue;
    }
    out.elf = c;
    out.elf_ids = std::move(ids);
    break;
  }
  const std::string build_id =
      !recorded_build_id.empty() ? recorded_build_id : out.elf_ids.build_id;
  // Debug files, most specific first.
  std::vector<std::string> debug_candidates;
  if (build_id.size() > 2) {
    for (const std::string& dir : dirs) debug_candidates.push_back(BuildIdPath(dir, build_id));
    debug_candidates.push_back(BuildIdPath(debug_root, build_id));
  }
  if (!out.elf_ids.debug_link.empty()) {
    const std::string link = BaseName(out.elf_ids.debug_link);
    const std::string dir = DirName(out.elf);
    debug_candidates.push_back(Join(dir, link));
    debug_candidates.push_back(Join(dir, ".debug/" + link));
    debug_candidates.push_back(debug_root + (dir.front() == '/' ? dir : "/" + dir) + "/" + link);
    for (const std::string& d : dirs) debug_candidates.push_back(Join(d, link));
  }
  for (const std::string& d : dirs) debug_candidates.push_back(Join(d, base + ".debug"));
  for (const std::string& c : debug_candidates) {
    if (c == out.elf)
      continue;
    ElfIds ids = ReadElfIds(c);
    if (!ids.ok || (!build_id.empty() && ids.build_id != build_id))
      continue;
    out.debug = c;
    out.debug_ids = std::move(ids);
    break;
  }
  if (out.elf.empty()) {
    if (!out.debug.empty()) {
      out.elf = out.debug;  // the debug file keeps the program headers and the symbols
      out.elf_ids = out.debug_ids;
      out.debug.clear();
      out.debug_ids = ElfIds();
    } else {
      out.problem = seen_other_build ? "different build" : "file missing";
    }
  }
  return out;
}

}  // namespace cuclimb::analysis
