// SPDX-License-Identifier: Apache-2.0
// Static cudart runs from a program's .symtab (see static_cudart.h).
#include "interposer/static_cudart.h"

#include <algorithm>
#include <cstring>
#include <sys/mman.h>
#include <sys/stat.h>
#include <vector>

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

namespace cuclimb::interposer {
namespace {

struct FunctionSymbol {
  uint64_t begin;
  uint64_t end;
  bool cudart;
};

// The file mapped read-only for the duration of one scan.
class MappedFile {
 public:
  explicit MappedFile(const char* path) noexcept {
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return;
    struct stat st {};
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        data_ = static_cast<const unsigned char*>(p);
        size_ = static_cast<size_t>(st.st_size);
      }
    }
    close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr)
      munmap(const_cast<unsigned char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // The bytes [offset, offset + bytes), or nullptr when they are not all inside the file.
  const unsigned char* At(uint64_t offset, uint64_t bytes) const noexcept {
    if (data_ == nullptr || offset > size_ || bytes > size_ - offset)
      return nullptr;
    return data_ + offset;
  }

 private:
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The defined functions of the file's .symtab, each marked cudart or not.
std::vector<FunctionSymbol> ReadFunctions(const MappedFile& file) {
  std::vector<FunctionSymbol> out;
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(file.At(0, sizeof(Elf64_Ehdr)));
  if (eh == nullptr || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr)) {
    return out;
  }
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(
      file.At(eh->e_shoff, uint64_t{eh->e_shnum} * sizeof(Elf64_Shdr)));
  if (sections == nullptr)
    return out;
  for (unsigned i = 0; i < eh->e_shnum; ++i) {
    const Elf64_Shdr& symtab = sections[i];
    if (symtab.sh_type != SHT_SYMTAB || symtab.sh_link >= eh->e_shnum ||
        symtab.sh_entsize != sizeof(Elf64_Sym)) {
      continue;
    }
    const Elf64_Shdr& strtab = sections[symtab.sh_link];
    const auto* syms =
        reinterpret_cast<const Elf64_Sym*>(file.At(symtab.sh_offset, symtab.sh_size));
    const auto* names = reinterpret_cast<const char*>(file.At(strtab.sh_offset, strtab.sh_size));
    if (syms == nullptr || names == nullptr)
      return out;
    const size_t count = symtab.sh_size / sizeof(Elf64_Sym);
    out.reserve(count / 2);
    for (size_t j = 0; j < count; ++j) {
      const Elf64_Sym& s = syms[j];
      if (ELF64_ST_TYPE(s.st_info) != STT_FUNC || s.st_shndx == SHN_UNDEF || s.st_size == 0 ||
          s.st_name >= strtab.sh_size) {
        continue;
      }
      const char* name = names + s.st_name;
      const size_t len = strnlen(name, strtab.sh_size - s.st_name);
      out.push_back(
          {s.st_value, s.st_value + s.st_size, IsStaticCudartSymbol(std::string_view(name, len))});
    }
    break;  // one .symtab per file
  }
  return out;
}

}  // namespace

bool IsStaticCudartSymbol(std::string_view name) noexcept {
  if (StartsWith(name, "libcudart_static_") || StartsWith(name, "__cuda") ||
      StartsWith(name, "_ZN6cudart")) {
    return true;  // __cuda also covers __cudart<N>, the internal names of older toolkits
  }
  // The C API: cudaMalloc, cudaLaunchKernel... but not a user's "cudaify".
  return name.size() > 4 && StartsWith(name, "cuda") && name[4] >= 'A' && name[4] <= 'Z';
}

size_t FindStaticCudart(const char* path, CodeRange* out, size_t max) noexcept {
  try {
    const MappedFile file(path);
    std::vector<FunctionSymbol> functions = ReadFunctions(file);
    // Aliases share an address: order cudart names first so an alias cannot split a run.
    std::sort(functions.begin(), functions.end(), [](const auto& a, const auto& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.cudart > b.cudart;
    });
    std::vector<CodeRange> runs;
    bool open = false;
    for (const FunctionSymbol& f : functions) {
      if (f.cudart) {
        if (open && f.begin <= runs.back().end + 64) {
          runs.back().end = std::max(runs.back().end, f.end);  // padding between functions
        } else {
          runs.push_back({f.begin, f.end});
          open = true;
        }
      } else if (open && f.begin >= runs.back().end) {
        open = false;  // an application function starts here
      }
    }
    if (runs.size() > max) {
      std::sort(runs.begin(), runs.end(), [](const CodeRange& a, const CodeRange& b) {
        return a.end - a.begin > b.end - b.begin;
      });
      runs.resize(max);
    }
    std::copy(runs.begin(), runs.end(), out);
    return runs.size();
  } catch (...) {
    return 0;  // out of memory: static cudart frames stay in stacks; the analyzer folds them
  }
}

}  // namespace cuclimb::interposer
