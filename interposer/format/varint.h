// SPDX-License-Identifier: Apache-2.0
// LEB128 varints and zigzag mapping shared by the trace encoder and reader.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cuclimb::format {

inline constexpr size_t kMaxVarintBytes = 10;

constexpr uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
constexpr int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Deltas modulo 2^64: any two int64 values (timestamps of a trace spanning the whole range) have
// one, and adding it back restores the second exactly, where signed arithmetic would overflow.
constexpr int64_t WrappingSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
constexpr int64_t WrappingAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

// Writes v at out (which must have kMaxVarintBytes free) and returns the byte after it.
inline uint8_t* PutVarint(uint8_t* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *out++ = static_cast<uint8_t>(v);
  return out;
}

// Reads a varint from [p, end). Returns the byte after it, or nullptr when the varint runs past
// end or is longer than 10 bytes (corrupt input).
__attribute__((always_inline)) inline const uint8_t* GetVarint(const uint8_t* p, const uint8_t* end,
                                                               uint64_t* v) {
  if (p < end && *p < 0x80) {  // the common one-byte case
    *v = *p;
    return p + 1;
  }
  uint64_t result = 0;
  for (unsigned shift = 0; shift < 64 && p < end; shift += 7) {
    const uint8_t byte = *p++;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) {
      *v = result;
      return p;
    }
  }
  return nullptr;
}

}  // namespace cuclimb::format
