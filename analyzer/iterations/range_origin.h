// SPDX-License-Identifier: Apache-2.0
// Whose NVTX range is it: the program's, or one a library emits on its own (cuBLAS, cuDNN, NCCL,
// XLA, ...)? The automatic choice of iterations prefers the program's ranges; a library's
// per-call or per-op ranges repeat just as regularly but cut the program's loop into pieces.
#pragma once

#include <string>
#include <string_view>

namespace cuclimb::analysis {

enum class RangeOrigin {
  kProgram,      // not in the table: the program's own range
  kLibraryStep,  // a library range that wraps one call of the program's compiled step (XlaModule)
  kLibrary,      // a library's range around one of its own calls, ops or thunks
};

// "program" | "library_step" | "library" (report-schema.md, iterations.candidates[].origin).
const char* OriginName(RangeOrigin origin);

struct RangeClass {
  RangeOrigin origin = RangeOrigin::kProgram;
  std::string library;  // "cuBLAS", "XLA", ...; empty for the program's ranges
};

// Classifies a range by its NVTX domain name ("" for the default domain) and its name, with the
// table in range_origin.cpp (first matching row wins; matching is case-insensitive, a pattern
// ending in '*' matches by prefix, "*" alone matches anything).
RangeClass ClassifyRange(std::string_view domain, std::string_view name);

}  // namespace cuclimb::analysis
