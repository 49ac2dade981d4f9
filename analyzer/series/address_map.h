// SPDX-License-Identifier: Apache-2.0
// A map from addresses to what lives there (allocations, mappings), for one insert and one erase
// per allocation and free of the trace.
//
// An allocation-heavy trace allocates and frees at every launch: absl::flat_hash_map's insert,
// find and erase (a mixing hash, a control-byte group probe, a tombstone on erase) cost about a
// third of each pair's aggregation. Here: open addressing with linear probing over one array of
// (address, value) entries; the hash is one multiplication (Fibonacci hashing: the high bits of
// address × 2^64/φ, which spreads 256-byte-aligned device addresses and unaligned host ones
// alike); erase shifts the entries after the erased one back instead of leaving a tombstone, so
// probes stay short however many pairs come and go. At most 3/4 full. Iteration order is the
// table's, an order no report depends on (survivors are sorted by serial).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace cuclimb::analysis {

template <class V>
class AddressMap {
 public:
  using value_type = std::pair<uint64_t, V>;

  AddressMap() { Reset(kMinCapacity); }
  AddressMap(AddressMap&& other) noexcept { *this = std::move(other); }
  AddressMap& operator=(AddressMap&& other) noexcept {
    if (this != &other) {
      entries_ = std::move(other.entries_);
      mask_ = other.mask_;
      shift_ = other.shift_;
      size_ = other.size_;
      has_empty_key_ = other.has_empty_key_;
      other.Reset(kMinCapacity);
    }
    return *this;
  }
  AddressMap(const AddressMap&) = default;
  AddressMap& operator=(const AddressMap&) = default;
  ~AddressMap() = default;

  // The entry of addr, or nullptr.
  value_type* find(uint64_t addr) {
    if (addr == kEmpty) [[unlikely]]
      return has_empty_key_ ? &entries_[Capacity()] : nullptr;
    for (size_t i = Home(addr);; i = (i + 1) & Mask()) {
      value_type& e = entries_[i];
      if (e.first == addr)
        return &e;
      if (e.first == kEmpty)
        return nullptr;
    }
  }
  // Inserts (addr, value) unless addr is there; returns its entry and whether it was inserted.
  std::pair<value_type*, bool> try_emplace(uint64_t addr, const V& value) {
    if (addr == kEmpty) [[unlikely]]
      return EmplaceEmptyKey(value);
    if (4 * (size_ + 1) > 3 * Capacity()) [[unlikely]]
      Grow();
    for (size_t i = Home(addr);; i = (i + 1) & Mask()) {
      value_type& e = entries_[i];
      if (e.first == addr)
        return {&e, false};
      if (e.first == kEmpty) {
        e.first = addr;
        e.second = value;
        ++size_;
        return {&e, true};
      }
    }
  }
  // Removes an entry find() or try_emplace() returned (nothing else moved since).
  void erase(value_type* entry) {
    --size_;
    size_t i = static_cast<size_t>(entry - entries_.data());
    if (i == Capacity()) [[unlikely]] {
      has_empty_key_ = false;
      return;
    }
    // Backward shift: an entry after the hole moves into it unless its home lies after the hole
    // (between the hole and itself, cyclically), which would put it before its home.
    for (size_t j = (i + 1) & Mask();; j = (j + 1) & Mask()) {
      value_type& e = entries_[j];
      if (e.first == kEmpty)
        break;
      if (((j - Home(e.first)) & Mask()) >= ((j - i) & Mask())) {
        entries_[i] = std::move(e);
        i = j;
      }
    }
    entries_[i].first = kEmpty;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t bytes() const { return entries_.capacity() * sizeof(value_type); }

  class const_iterator {
   public:
    const value_type& operator*() const { return map_->entries_[i_]; }
    const value_type* operator->() const { return &map_->entries_[i_]; }
    const_iterator& operator++() {
      ++i_;
      Skip();
      return *this;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }

   private:
    friend class AddressMap;
    const_iterator(const AddressMap* map, size_t i) : map_(map), i_(i) { Skip(); }
    void Skip() {
      const size_t capacity = map_->Capacity();
      while (i_ < capacity && map_->entries_[i_].first == kEmpty) ++i_;
      if (i_ == capacity && !map_->has_empty_key_)
        ++i_;
    }
    const AddressMap* map_;
    size_t i_;
  };
  const_iterator begin() const { return const_iterator(this, 0); }
  const_iterator end() const { return const_iterator(this, Capacity() + 1); }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // an empty entry's key (that address: aside)
  static constexpr size_t kMinCapacity = 16;

  size_t Capacity() const { return mask_ + 1; }
  size_t Mask() const { return mask_; }
  size_t Home(uint64_t addr) const {
    return static_cast<size_t>((addr * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  // capacity entries (a power of two) plus one, at the end, for the address kEmpty.
  void Reset(size_t capacity) {
    entries_.assign(capacity + 1, value_type{kEmpty, V{}});
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    has_empty_key_ = false;
  }
  [[gnu::noinline]] std::pair<value_type*, bool> EmplaceEmptyKey(const V& value) {
    value_type& e = entries_[Capacity()];
    if (has_empty_key_)
      return {&e, false};
    has_empty_key_ = true;
    ++size_;
    e.second = value;
    return {&e, true};
  }
  [[gnu::noinline]] void Grow() {
    std::vector<value_type> old = std::move(entries_);
    const bool had_empty_key = has_empty_key_;
    const size_t old_size = size_;
    Reset(2 * (old.size() - 1));  // mask_ and shift_ of the new capacity
    for (size_t i = 0; i + 1 < old.size(); ++i) {
      if (old[i].first == kEmpty)
        continue;
      size_t j = Home(old[i].first);
      while (entries_[j].first != kEmpty) j = (j + 1) & Mask();
      entries_[j] = std::move(old[i]);
    }
    entries_.back() = std::move(old.back());
    has_empty_key_ = had_empty_key;
    size_ = old_size;
  }

  std::vector<value_type> entries_;
  size_t mask_ = 0;  // capacity − 1
  unsigned shift_ = 64;
  size_t size_ = 0;
  bool has_empty_key_ = false;
};

}  // namespace cuclimb::analysis
