// SPDX-License-Identifier: Apache-2.0
// Demangling through libiberty (Rust) and the C++ runtime (Itanium C++).
#include "symbols/demangle.h"

#include <cstdlib>
#include <libiberty/demangle.h>
#include <memory>

#include <cxxabi.h>

namespace cuclimb::analysis {
namespace {

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using Malloced = std::unique_ptr<char, FreeDeleter>;

}  // namespace

std::string Demangle(std::string_view name) {
  const bool itanium = name.size() > 2 && name[0] == '_' && name[1] == 'Z';
  const bool rust_v0 = name.size() > 2 && name[0] == '_' && name[1] == 'R';
  if (!itanium && !rust_v0)
    return std::string(name);
  const std::string mangled(name);  // both demanglers want a NUL-terminated string
  // Rust legacy names are valid Itanium names too ("_ZN4core3fmt5write17h…E"): libiberty
  // recognises them by their hash and returns null for every other name.
  if (Malloced rust(rust_demangle(mangled.c_str(), DMGL_PARAMS | DMGL_ANSI)); rust != nullptr)
    return rust.get();
  if (itanium) {
    int status = 0;
    Malloced cxx(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status));
    if (status == 0 && cxx != nullptr)
      return cxx.get();
  }
  return mangled;
}

}  // namespace cuclimb::analysis
