// SPDX-License-Identifier: Apache-2.0
// Function chains at an address from a per-unit index of function address ranges.
#include "symbols/dwarf_functions.h"

#include <algorithm>

#include <dwarf.h>

namespace cuclimb::analysis {
namespace {

constexpr int kMaxDepth = 64;  // nesting of lexical blocks and inlined calls followed

bool IsScopeWithFunctions(int tag) {
  switch (tag) {
    case DW_TAG_namespace:
    case DW_TAG_module:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_lexical_block:
      return true;
    default:
      return false;
  }
}

}  // namespace

void DwarfFunctions::Index(Dwarf_Die* parent, bool in_function, std::vector<Range>* out) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0)
    return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) {
      Dwarf_Addr base = 0, start = 0, end = 0;
      for (ptrdiff_t off = 0; (off = dwarf_ranges(&child, off, &base, &start, &end)) > 0;) {
        if (end > start)
          out->push_back({start, end, child});
      }
      Index(&child, true, out);  // local classes (C++ lambdas) define functions inside
    } else if (IsScopeWithFunctions(tag) && (!in_function || tag != DW_TAG_namespace)) {
      Index(&child, in_function, out);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

std::vector<Dwarf_Die> DwarfFunctions::ChainAt(Dwarf_Die* cu, Dwarf_Addr pc) {
  auto [it, fresh] = by_unit_.try_emplace(dwarf_dieoffset(cu));
  std::vector<Range>& ranges = it->second;
  if (fresh) {
    Index(cu, false, &ranges);
    std::sort(ranges.begin(), ranges.end(),
              [](const Range& a, const Range& b) { return a.low < b.low; });
  }
  // The smallest range that holds pc: nested functions sit inside no other's range in
  // practice, but a few candidates before pc are compared to be sure.
  auto r = std::upper_bound(ranges.begin(), ranges.end(), pc,
                            [](Dwarf_Addr v, const Range& x) { return v < x.low; });
  const Range* best = nullptr;
  for (int seen = 0; r != ranges.begin() && seen < 16; ++seen) {
    --r;
    if (pc < r->high && (best == nullptr || r->high - r->low < best->high - best->low))
      best = &*r;
  }
  std::vector<Dwarf_Die> chain;
  if (best == nullptr)
    return chain;
  chain.push_back(best->die);
  // Down through the lexical blocks and inlined calls that hold pc.
  Dwarf_Die scope = best->die;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    Dwarf_Die child;
    bool found = false;
    if (dwarf_child(&scope, &child) == 0) {
      do {
        const int tag = dwarf_tag(&child);
        if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) &&
            dwarf_haspc(&child, pc) == 1) {
          if (tag == DW_TAG_inlined_subroutine)
            chain.push_back(child);
          scope = child;
          found = true;
          break;
        }
      } while (dwarf_siblingof(&child, &child) == 0);
    }
    if (!found)
      break;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

}  // namespace cuclimb::analysis
