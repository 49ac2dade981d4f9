// SPDX-License-Identifier: Apache-2.0
// SlotVec's cold paths: allocating a page, copying, accounting.
#include "series/slot_vec.h"

#include <algorithm>

namespace cuclimb::analysis {

SlotVec::SlotVec(std::initializer_list<double> values) {
  uint32_t slot = 0;
  for (double v : values) Add(slot++, v);
}

SlotVec::SlotVec(const SlotVec& other) {
  *this = other;
}

SlotVec& SlotVec::operator=(const SlotVec& other) {
  if (this == &other)
    return *this;
  pages_.clear();
  pages_.resize(other.pages_.size());
  for (size_t t = 0; t < other.pages_.size(); ++t) {
    if (other.pages_[t] == nullptr)
      continue;
    pages_[t] = std::make_unique<double[]>(kPageSlots);
    std::copy_n(other.pages_[t].get(), kPageSlots, pages_[t].get());
  }
  return *this;
}

double* SlotVec::NewCell(uint32_t slot) {
  const size_t t = TableIndex(slot);
  if (t >= pages_.size())
    pages_.resize(t + 1);  // geometric growth of the table (8 bytes a page) keeps this amortized
  if (pages_[t] == nullptr)
    pages_[t] = std::make_unique<double[]>(kPageSlots);  // value-initialized: zeros
  return pages_[t].get() + Offset(slot);
}

size_t SlotVec::pages() const {
  return static_cast<size_t>(
      std::count_if(pages_.begin(), pages_.end(), [](const auto& p) { return p != nullptr; }));
}

size_t SlotVec::bytes() const {
  return pages() * kPageSlots * sizeof(double) + pages_.capacity() * sizeof(pages_[0]);
}

}  // namespace cuclimb::analysis
