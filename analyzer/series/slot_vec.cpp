// SPDX-License-Identifier: Apache-2.0
// SlotVec's cold paths: allocating a page, copying, accounting.
#include "series/slot_vec.h"

#include <algorithm>
#include <bit>

namespace cuclimb::analysis {

SlotVec::SlotVec(std::initializer_list<double> values) {
  uint32_t slot = 0;
  for (double v : values) Add(slot++, v);
}

SlotVec::SlotVec(SlotVec&& other) noexcept
    : pages_(std::move(other.pages_)),
      hot_(other.hot_),
      hot_first_(other.hot_first_),
      hot_capacity_(other.hot_capacity_) {
  other.pages_.clear();
  other.Cool();
}

SlotVec& SlotVec::operator=(SlotVec&& other) noexcept {
  if (this != &other) {
    pages_ = std::move(other.pages_);
    hot_ = other.hot_;
    hot_first_ = other.hot_first_;
    hot_capacity_ = other.hot_capacity_;
    other.pages_.clear();
    other.Cool();
  }
  return *this;
}

SlotVec::SlotVec(const SlotVec& other) {
  *this = other;
}

SlotVec& SlotVec::operator=(const SlotVec& other) {
  if (this == &other)
    return *this;
  Cool();
  pages_.clear();
  pages_.resize(other.pages_.size());
  for (size_t t = 0; t < other.pages_.size(); ++t) {
    const Page& from = other.pages_[t];
    if (from.capacity == 0)
      continue;
    pages_[t].values = std::make_unique<double[]>(from.capacity);
    pages_[t].capacity = from.capacity;
    std::copy_n(from.values.get(), from.capacity, pages_[t].values.get());
  }
  return *this;
}

double* SlotVec::NewCell(uint32_t slot) {
  const size_t t = TableIndex(slot);
  const uint32_t o = Offset(slot);
  if (t >= pages_.size())
    pages_.resize(t + 1);  // geometric growth of the table (16 bytes a page) keeps this amortized
  Page& p = pages_[t];
  const uint32_t capacity =
      std::min(kPageSlots, std::max({std::bit_ceil(o + 1), 2 * p.capacity, kFirstPageSlots}));
  auto values = std::make_unique<double[]>(capacity);  // value-initialized: zeros
  if (p.capacity > 0)
    std::copy_n(p.values.get(), p.capacity, values.get());
  p.values = std::move(values);
  p.capacity = capacity;
  Heat(slot, p);
  return &p.values[o];
}

size_t SlotVec::pages() const {
  return static_cast<size_t>(
      std::count_if(pages_.begin(), pages_.end(), [](const Page& p) { return p.capacity > 0; }));
}

size_t SlotVec::bytes() const {
  size_t values = 0;
  for (const Page& p : pages_) values += p.capacity;
  return values * sizeof(double) + pages_.capacity() * sizeof(Page);
}

}  // namespace cuclimb::analysis
