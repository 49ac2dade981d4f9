// SPDX-License-Identifier: Apache-2.0
// CRC-32C (Castagnoli), the checksum of file headers and chunks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuclimb::format {

// Extends `crc` (0 to start) over [data, data + size). Uses SSE4.2 when the CPU has it.
uint32_t Crc32c(uint32_t crc, const void* data, size_t size);

}  // namespace cuclimb::format
