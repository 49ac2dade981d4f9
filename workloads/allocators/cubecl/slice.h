// SPDX-License-Identifier: Apache-2.0
// Shared vocabulary of the cubecl 0.10 memory model: Arc-like slice handles, storage ids,
// padding arithmetic and reservations.
#pragma once

#include <cstdint>
#include <memory>

namespace cuclimb::workloads::cubecl {

// cubecl's SliceHandle is an Arc: the pool keeps one reference, every tensor one more, and "free"
// means only the pool's reference is left (handle.rs). Dropping a tensor is a plain decrement;
// nothing is told, so slots and slices are rediscovered lazily by the next scan. The count is
// read through the shared_ptr's control block, i.e. through a pointer, which is the cache miss a
// scan pays per slot in Rust too.
struct SliceState {
  uint64_t id = 0;
};
using SliceHandle = std::shared_ptr<SliceState>;

SliceHandle NewSliceHandle();

inline bool IsFree(const SliceHandle& handle) {
  return handle.use_count() == 1;
}

using StorageId = uint64_t;

// calculate_padding(size, alignment): bytes that round size up to the alignment.
inline uint64_t Padding(uint64_t size, uint64_t alignment) {
  const uint64_t remainder = size % alignment;
  return remainder == 0 ? 0 : alignment - remainder;
}

inline uint64_t RoundUp(uint64_t size, uint64_t alignment) {
  return size + Padding(size, alignment);
}

// Where a reserve landed: the handle to hold, and the address the tensor uses.
struct Reservation {
  SliceHandle handle;
  StorageId storage = 0;
  uint64_t address = 0;
  uint64_t offset = 0;  // within the storage buffer (a page, or 0 for a persistent slot)
};

}  // namespace cuclimb::workloads::cubecl
