// SPDX-License-Identifier: Apache-2.0
// The module map for offline symbolization: one `mapping` event per loaded ELF object (path,
// load bias, extent, GNU build id), written at start and again when objects were loaded since.
//
// Conventions (docs/recording.md): `base` is the load bias (dl_phdr_info::dlpi_addr), so
// pc - base is the ELF virtual address to look up with addr2line or a symbol table; `size` is the
// end of the highest PT_LOAD segment (virtual address), so [base, base + size) contains every pc
// of the object; `offset` is the lowest PT_LOAD virtual address. Writer thread / exit path only.
#pragma once

#include <cstdint>

namespace cuclimb::interposer {

// Emits mapping events for objects not described yet (cold: dl_iterate_phdr, allocates).
void RecordMappings() noexcept;

// True when objects were loaded or unloaded since the last RecordMappings (cheap-ish: one
// dl_iterate_phdr call that stops at the first object).
bool MappingsChanged() noexcept;

}  // namespace cuclimb::interposer
