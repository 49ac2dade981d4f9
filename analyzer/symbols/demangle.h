// SPDX-License-Identifier: Apache-2.0
// Demangling of C++ (Itanium) and Rust (legacy and v0) symbol names by maintained libraries:
// the C++ runtime's abi::__cxa_demangle and GCC's libiberty (rust_demangle).
#pragma once

#include <string>
#include <string_view>

namespace cuclimb::analysis {

// Returns the readable form of a mangled name, or the name unchanged when it is not mangled or
// cannot be parsed. Rust legacy names lose their "::h<16 hex>" hash and Rust v0 names their
// crate disambiguators, as rustc-demangle's alternate form prints them; suffixes such as
// ".llvm.123" are dropped from Rust names and shown as "[clone .cold]" for C++ ones.
std::string Demangle(std::string_view name);

}  // namespace cuclimb::analysis
