// SPDX-License-Identifier: Apache-2.0
// Where static cudart lies inside a program, from the program's ELF symbol table.
//
// nvcc links cudart statically by default, so the frames between the application's call and the
// driver (cudaMalloc, its internal libcudart_static_<hash> helpers) lie in the program itself and
// no module boundary tells them apart. Its functions are named cuda<Upper>..., __cuda...,
// __cudart..., cudart::... or libcudart_static_<hash> (CUDA 13), and the linker places the
// archive's objects together, so they form a few contiguous runs. A stripped program has no
// .symtab: then nothing is found and the analyzer's frame classification drops those frames
// instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cuclimb::interposer {

struct CodeRange {
  uint64_t begin;  // first byte
  uint64_t end;    // one past the last byte
};

// True for the names static cudart gives its functions (see above).
bool IsStaticCudartSymbol(std::string_view name) noexcept;

// Reads the ELF file at path and writes up to max runs of static-cudart functions, as ELF
// virtual addresses (add the load bias); returns how many. Runs are maximal: no other function
// starts inside one. When there are more than max, the largest are kept. Cold: maps the file and
// allocates; 0 on any error (not ELF64, no .symtab, out of memory).
size_t FindStaticCudart(const char* path, CodeRange* out, size_t max) noexcept;

}  // namespace cuclimb::interposer
