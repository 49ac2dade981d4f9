// SPDX-License-Identifier: Apache-2.0
// The per-slot store of every aggregated series: paged, split by slot parity, zero pages absent.
//
// Slots alternate: 2i+1 is iteration i, 2i+2 the gap after it (iterations/segmenter.h). A long
// run has hundreds of thousands of iterations and hundreds of series (every range, kernel, API,
// allocation key, range × API pair...), so a dense, doubling std::vector<double> per series
// peaked at 2 × 8 bytes × slots × series: 2.5 GiB for 10^9 events (docs/performance.md). Here:
// - pages of kPageSlots values, allocated on the first write to one of their slots; a full
//   page never moves, so a long series costs what it holds, not up to twice that;
// - odd (iteration) and even (gap) slots live on separate pages: most series have nothing in
//   the gaps between iterations, and their gap pages are never allocated;
// - a page nothing was written to reads as zeros: a key seen in a few iterations costs a page
//   or two, not every slot up to the last one it was seen in.
// Values stay doubles, so sums and their order are those of the dense vector it replaces.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

namespace cuclimb::analysis {

class SlotVec {
 public:
  // Values per page: 4 KiB, 512 iterations (or gaps) of one series.
  static constexpr uint32_t kPageBits = 9;
  static constexpr uint32_t kPageSlots = 1u << kPageBits;
  // A page starts this small and doubles up to kPageSlots as its slots are written: a series
  // with a few values (a kernel seen once among a million names) stays a few dozen bytes.
  static constexpr uint32_t kFirstPageSlots = 4;

  SlotVec() = default;
  // Slots 0, 1, 2, ... set to `values` (tests and small fixed series).
  SlotVec(std::initializer_list<double> values);
  SlotVec(SlotVec&& other) noexcept;
  SlotVec& operator=(SlotVec&& other) noexcept;
  SlotVec(const SlotVec& other);
  SlotVec& operator=(const SlotVec& other);
  ~SlotVec() = default;

  void Add(uint32_t slot, double x) { *Cell(slot) += x; }
  // True, with *cell the slot's cell, if the slot lies on the page last written; changes nothing
  // else. For a
  // caller's path without calls (and so without registers to save): it tests that every series
  // it writes is hot, writes them through these cells, and otherwise takes its general path.
  bool HotCell(uint32_t slot, double** cell) {
    const uint32_t i = std::rotr(slot - hot_first_, 1);
    if (i >= hot_capacity_)
      return false;
    *cell = hot_ + i;
    return true;
  }
  void Max(uint32_t slot, double x) {
    double* c = Cell(slot);
    if (*c < x)  // std::max(*c, x): keeps *c unless x is greater
      *c = x;
  }
  // The value of a slot; 0 for slots never written.
  double operator[](uint32_t slot) const {
    const size_t t = TableIndex(slot);
    const uint32_t o = Offset(slot);
    if (t >= pages_.size() || o >= pages_[t].capacity)
      return 0.0;
    return pages_[t].values[o];
  }

  // True until a slot is written (an Add of 0 writes).
  bool empty() const { return pages_.empty(); }
  // Slots [0, size()) cover every slot written; reads beyond are 0. A multiple of 2 kPageSlots.
  size_t size() const { return (pages_.size() + 1) / 2 * 2 * kPageSlots; }
  // Calls f(slot, value) for every slot held, slot ascending. Slots skipped are zero (never
  // written), so a sum or maximum over the visited slots equals one over all slots.
  template <class F>
  void ForEach(F&& f) const;
  // Heap bytes held: pages and the page table.
  size_t bytes() const;
  size_t pages() const;  // pages allocated, whatever their capacity

 private:
  struct Page {
    std::unique_ptr<double[]> values;
    uint32_t capacity = 0;  // values allocated: 0, or a power of two up to kPageSlots
  };
  // Page table: [2g] holds the odd (iteration) slots of slot group g (2 kPageSlots slots),
  // [2g + 1] its even (gap) slots.
  static size_t TableIndex(uint32_t slot) {
    return (static_cast<size_t>(slot >> (kPageBits + 1)) << 1) | ((slot & 1) ^ 1);
  }
  static uint32_t Offset(uint32_t slot) { return (slot >> 1) & (kPageSlots - 1); }
  // The aggregator writes one series mostly in the current iteration's slot: the page last
  // written (hot_) answers that with a subtraction, a rotation and a compare, the table
  // otherwise. The slots of the hot page are hot_first_ + 2i: rotating the distance right by one
  // halves an even one and makes an odd one (a slot of the other parity) at least 2^31.
  double* Cell(uint32_t slot) {
    const uint32_t i = std::rotr(slot - hot_first_, 1);
    if (i < hot_capacity_) [[likely]]
      return hot_ + i;
    return TableCell(slot);
  }
  double* TableCell(uint32_t slot) {
    const size_t t = TableIndex(slot);
    const uint32_t o = Offset(slot);
    if (t < pages_.size()) [[likely]] {
      if (Page& p = pages_[t]; o < p.capacity) [[likely]] {
        Heat(slot, p);
        return &p.values[o];
      }
    }
    return NewCell(slot);
  }
  void Heat(uint32_t slot, const Page& p) {
    hot_ = p.values.get();
    hot_first_ = (slot >> (kPageBits + 1) << (kPageBits + 1)) | (slot & 1);
    hot_capacity_ = p.capacity;
  }
  void Cool() { hot_ = nullptr, hot_first_ = 0, hot_capacity_ = 0; }
  double* NewCell(uint32_t slot);  // allocates or grows the slot's page (and the table)

  std::vector<Page> pages_;
  double* hot_ = nullptr;  // values of the page last written (pages_ owns them)
  uint32_t hot_first_ = 0, hot_capacity_ = 0;
};

template <class F>
void SlotVec::ForEach(F&& f) const {
  for (size_t t = 0; t < pages_.size(); t += 2) {
    const Page& odd = pages_[t];
    const double* even = t + 1 < pages_.size() ? pages_[t + 1].values.get() : nullptr;
    const uint32_t even_capacity = even != nullptr ? pages_[t + 1].capacity : 0;
    const uint32_t n = odd.capacity > even_capacity ? odd.capacity : even_capacity;
    const uint32_t base = static_cast<uint32_t>(t / 2) << (kPageBits + 1);
    for (uint32_t i = 0; i < n; ++i) {
      if (i < even_capacity)
        f(base + 2 * i, even[i]);
      if (i < odd.capacity)
        f(base + 2 * i + 1, odd.values[i]);
    }
  }
}

}  // namespace cuclimb::analysis
