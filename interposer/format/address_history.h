// SPDX-License-Identifier: Apache-2.0
// The address history of format 1.2 column chunks (ChunkType::kColumnsV2): the addresses of
// `alloc` and `free` events coded as "the k-th most recent" instead of a delta.
//
// Why: an allocator hands out what was freed a moment ago, and a program frees what it allocated
// a moment ago. A delta between two such addresses is as large as the heap, so on a PyTorch
// cudaMallocAsync recording the two address columns took 0.8 bytes per alloc or free, a tenth of
// the file; with the history, 90 % of allocations and 97 % of frees are one small index
// (docs/performance.md).
//
// Encoder and decoder keep the same history, reset at every chunk, and update it the same way:
//   alloc at a:  word = 1 + index of a among the recently freed addresses (a leaves them), or 0
//                when it is not there; then a becomes the most recent live address.
//   free of a:   word = 1 + index of a among the recent live addresses (a leaves them), or 0;
//                then a becomes the most recently freed address.
// A word of 0 takes the address from the field's escape column instead:
// zigzag(a − the previous escaped address in the chunk), one word per miss, in event order.
// Each list keeps kDepth addresses; the oldest falls off.
#pragma once

#include <cstdint>
#include <cstring>

#include "trace_format.h"
#include "varint.h"

namespace cuclimb::format {

class AddressHistory {
 public:
  static constexpr uint32_t kDepth = 64;

  // Which list an event's address is looked up in, and which it joins.
  enum class List : uint8_t { kLive = 0, kFreed = 1 };

  void Reset() {
    count_[0] = count_[1] = 0;
    base_[0] = base_[1] = 0;
    last_escape_ = 0;
  }

  // The word for `addr` found in `list` (removed from it), or 0 when it is not there.
  uint64_t Find(List list, uint64_t addr) {
    const int l = static_cast<int>(list);
    const uint64_t* newest = entries_[l] + base_[l] + count_[l] - 1;
    for (uint32_t i = 0; i < count_[l]; ++i) {
      if (newest[-static_cast<int64_t>(i)] == addr) {
        Remove(l, i);
        return i + 1;
      }
    }
    return 0;
  }
  // The address of a nonzero word in `list` (removed from it); false when the word is past the
  // list's end (damage).
  bool Take(List list, uint64_t word, uint64_t* addr) {
    const int l = static_cast<int>(list);
    if (word == 0 || word > count_[l])
      return false;
    const auto i = static_cast<uint32_t>(word - 1);
    *addr = entries_[l][base_[l] + count_[l] - 1 - i];
    Remove(l, i);
    return true;
  }
  // Makes addr the most recent entry of `list`.
  void Push(List list, uint64_t addr) {
    const int l = static_cast<int>(list);
    if (base_[l] + count_[l] == kCapacity) {  // every few hundred pushes
      std::memmove(entries_[l], entries_[l] + base_[l], count_[l] * sizeof(uint64_t));
      base_[l] = 0;
    }
    entries_[l][base_[l] + count_[l]] = addr;
    if (count_[l] < kDepth) {
      ++count_[l];
    } else {
      ++base_[l];  // the oldest falls off
    }
  }

  // The escape word of an address that was not found, and its inverse.
  uint64_t EscapeWord(uint64_t addr) {
    const uint64_t word = ZigZag(static_cast<int64_t>(addr - last_escape_));
    last_escape_ = addr;
    return word;
  }
  uint64_t FromEscape(uint64_t word) {
    last_escape_ += static_cast<uint64_t>(UnZigZag(word));
    return last_escape_;
  }

  uint32_t count(List list) const { return count_[static_cast<int>(list)]; }

 private:
  // Each list lies in entries_[l][base_, base_ + count_), the most recent last, so that a push
  // appends and a removal moves only the entries more recent than the one removed: an allocator
  // reuses what it freed a moment ago and a program frees what it allocated a moment ago, so
  // they are few. (A list kept most recent first moved the whole list on every push.) The
  // buffer is four lists long: the list moves back to its start once per 3 × kDepth pushes.
  static constexpr uint32_t kCapacity = 4 * kDepth;

  // Removes entry i (0 = the most recent). Up to kShort entries move as one block of kShort
  // (a few vector loads and stores; the entries past the most recent are spare, kShort of them
  // past the end included); more with memmove.
  static constexpr uint32_t kShort = 8;
  void Remove(int l, uint32_t i) {
    uint64_t* e = entries_[l] + base_[l] + count_[l] - 1 - i;
    if (i == 0) {
      // the most recent: nothing moves
    } else if (i <= kShort) {
      uint64_t moved[kShort];
      std::memcpy(moved, e + 1, sizeof(moved));
      std::memcpy(e, moved, sizeof(moved));
    } else {
      std::memmove(e, e + 1, i * sizeof(uint64_t));
    }
    --count_[l];
  }

  uint64_t entries_[2][kCapacity + kShort];
  uint32_t base_[2] = {0, 0};
  uint32_t count_[2] = {0, 0};
  uint64_t last_escape_ = 0;
};

// The list an `alloc` (kFreed) or `free` (kLive) looks its address up in; it then joins the other.
constexpr AddressHistory::List FindList(EventType type) {
  return type == EventType::kAlloc ? AddressHistory::List::kFreed : AddressHistory::List::kLive;
}
constexpr AddressHistory::List PushList(EventType type) {
  return type == EventType::kAlloc ? AddressHistory::List::kLive : AddressHistory::List::kFreed;
}

// The field of `type` whose column the history codes in kColumnsV2 chunks (the `addr` of alloc
// and free), or -1.
constexpr int HistoryField(uint8_t type) {
  if (type != static_cast<uint8_t>(EventType::kAlloc) &&
      type != static_cast<uint8_t>(EventType::kFree)) {
    return -1;
  }
  const EventSpec& spec = kEventSchema[type];
  for (uint8_t i = 0; i < spec.field_count; ++i) {
    if (spec.fields[i].slot == Slot::kAddr)
      return i;
  }
  return -1;
}

}  // namespace cuclimb::format
