// SPDX-License-Identifier: Apache-2.0
// The chain of functions at an address of one module's DWARF, inlined calls included, through
// an index of each compilation unit's functions by address range built on first use.
//
// Why not libdw's dwarf_getscopes: it walks the unit's whole DIE tree for every address, and
// again to find an inlined function's abstract origin; on a program built with -g that made
// first-sight symbolization about 700 addresses per CPU second (bench/symbolize_bench.cpp).
#pragma once

#include <elfutils/libdw.h>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace cuclimb::analysis {

class DwarfFunctions {
 public:
  // The DW_TAG_inlined_subroutine entries that contain pc in cu, innermost first, then the
  // DW_TAG_subprogram they are inlined into. Empty when no function of cu contains pc.
  std::vector<Dwarf_Die> ChainAt(Dwarf_Die* cu, Dwarf_Addr pc);

 private:
  struct Range {
    Dwarf_Addr low, high;
    Dwarf_Die die;
  };
  static void Index(Dwarf_Die* parent, bool in_function, std::vector<Range>* out);

  absl::flat_hash_map<Dwarf_Off, std::vector<Range>> by_unit_;  // by the unit DIE's offset
};

}  // namespace cuclimb::analysis
