// SPDX-License-Identifier: Apache-2.0
// Finding, on the analysing machine, the ELF file a trace's `mapping` event names and its
// separate debug file: by base name in --symbols directories, at the recorded path, and by
// build id (DIR/.build-id/xx/yyyy.debug) or .gnu_debuglink name, the way gdb and elfutils do,
// without asking a debuginfod server (an offline GPU machine would wait minutes for it).
#pragma once

#include <string>
#include <vector>

namespace cuclimb::analysis {

// What libelf says about one ELF file.
struct ElfIds {
  bool ok = false;          // the file opened and is ELF
  std::string build_id;     // lowercase hex of NT_GNU_BUILD_ID, "" when absent
  std::string debug_link;   // .gnu_debuglink file name, "" when absent
  bool has_symtab = false;  // a full .symtab (else only .dynsym, or nothing)
  bool has_dwarf = false;   // a .debug_info section with contents
};
ElfIds ReadElfIds(const std::string& path);

struct ModuleFiles {
  std::string elf;    // the module's ELF file here ("" when none matches the recording)
  std::string debug;  // its separate debug file ("" when none was found)
  // When elf is "": "file missing" (not found anywhere) or "different build" (a file of that
  // name exists but its build id is not the recorded one). Otherwise "".
  std::string problem;
  ElfIds elf_ids, debug_ids;
};

// Looks for the module recorded at recorded_path with build id recorded_build_id (hex, "" when
// the trace has none): first DIR/<base name> for each of dirs, then recorded_path; a candidate
// whose build id differs from the recorded one is skipped. Its debug file: by build id in each
// of dirs and debug_root (DIR/.build-id/xx/yyyy.debug), then by debug link next to the file,
// in its .debug/ directory, under debug_root/<its directory>/ and in each of dirs, then
// DIR/<base name>.debug; a debug file with another build id is skipped. When no ELF file matches
// but a debug file of the recorded build id exists, that debug file serves as both.
ModuleFiles LocateModuleFiles(const std::string& recorded_path,
                              const std::string& recorded_build_id,
                              const std::vector<std::string>& dirs,
                              const std::string& debug_root = "/usr/lib/debug");

}  // namespace cuclimb::analysis
