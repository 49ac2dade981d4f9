// SPDX-License-Identifier: Apache-2.0
// The code a CUDA call passes through between the application and cuclimb's callback: libcuda,
// libcupti, libcudart (shared, or static inside the program), libnvToolsExt and libcuclimb.so
// itself. Stacks begin at the first frame outside it (issue #11): on the H200 every allocation's
// first frame was libcupti's call into our callback, so all call sites looked alike.
//
// A fixed table of address ranges, rebuilt on the cold path when objects were loaded and read
// lock-free (a sequence lock whose readers give up rather than wait, so a signal handler that
// interrupts a rebuild on its own thread cannot hang).
#pragma once

#include <cstdint>
#include <string_view>

namespace cuclimb::interposer {

// Hot path: lock-free, allocation-free, async-signal-safe. True when pc lies in CUDA runtime code
// as of the last refresh (false while a refresh is being published).
bool IsCudaRuntimeCode(uintptr_t pc) noexcept;

// Cold (dl_iterate_phdr; reads the program's .symtab once for static cudart): rebuilds the
// table and tells the stack walkers where libcuclimb.so's own code lies. One caller at a time:
// at start, then the writer thread when objects were loaded.
void RefreshCudaRuntimeCode() noexcept;

// True when the object at path (its file name) is one of the CUDA runtime libraries.
bool IsCudaRuntimeModule(std::string_view path) noexcept;

}  // namespace cuclimb::interposer
