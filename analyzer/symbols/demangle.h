// SPDX-License-Identifier: Apache-2.0
// Demangling of C++ (Itanium) and Rust (legacy and v0) symbol names.
#pragma once

#include <string>
#include <string_view>

namespace cuclimb::analysis {

// Returns the readable form of a mangled name, or the name unchanged when it is not mangled or
// cannot be parsed. Rust legacy names lose their "::h<16 hex>" hash; Rust v0 names are printed
// without crate disambiguators, like rustc-demangle's alternate form.
std::string Demangle(std::string_view name);

// Rust v0 ("_R...") only; false when the name does not parse.
bool DemangleRustV0(std::string_view name, std::string* out);

}  // namespace cuclimb::analysis
