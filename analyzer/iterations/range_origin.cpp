// SPDX-License-Identifier: Apache-2.0
// The table of NVTX ranges that libraries emit on their own.
#include "iterations/range_origin.h"

#include <cctype>

namespace cuclimb::analysis {
namespace {

struct Row {
  const char* library;
  const char* domain;  // pattern for the domain name (the default domain's is "")
  const char* name;    // pattern for the range name
  RangeOrigin origin;
};

// First match wins. Rows come from what these libraries emit (seen on the H200 for XLA; from
// their documentation and sources for the rest). XLA (through TSL, its profiler layer) names one
// range per executable run "XlaModule:#hlo_module=jit_<fn>,...#" — one call of the user's jitted
// step — one per thunk "Thunk:#hlo_op=...#", and ranges around its compiler's passes
// ("XlaPass", "XlaCompile", ...); any other TSL range is the program's own
// (jax.profiler.TraceAnnotation). To extend: add a row here and a case to range_origin_test.
constexpr Row kRows[] = {
    {"XLA", "*", "XlaModule:*", RangeOrigin::kLibraryStep},
    {"XLA", "*", "Thunk:*", RangeOrigin::kLibrary},
    {"XLA", "*", "Xla*", RangeOrigin::kLibrary},  // XlaPass, XlaCompile, XlaEmitLlvmIr, ...
    {"cuBLAS", "cublas*", "*", RangeOrigin::kLibrary},
    {"cuBLAS", "*", "cublas*", RangeOrigin::kLibrary},
    {"cuDNN", "cudnn*", "*", RangeOrigin::kLibrary},
    {"cuDNN", "*", "cudnn*", RangeOrigin::kLibrary},
    {"NCCL", "nccl*", "*", RangeOrigin::kLibrary},
    {"NCCL", "*", "nccl*", RangeOrigin::kLibrary},
    {"NVSHMEM", "nvshmem*", "*", RangeOrigin::kLibrary},
    {"CCCL", "cccl*", "*", RangeOrigin::kLibrary},
    {"CCCL", "cub*", "*", RangeOrigin::kLibrary},
    {"CCCL", "thrust*", "*", RangeOrigin::kLibrary},
    {"CCCL", "*", "cub::*", RangeOrigin::kLibrary},
    {"CCCL", "*", "thrust::*", RangeOrigin::kLibrary},
    {"cuFFT", "*", "cufft*", RangeOrigin::kLibrary},
    {"cuSPARSE", "*", "cusparse*", RangeOrigin::kLibrary},
    {"cuSOLVER", "*", "cusolver*", RangeOrigin::kLibrary},
    {"cuRAND", "*", "curand*", RangeOrigin::kLibrary},
    {"cuTENSOR", "*", "cutensor*", RangeOrigin::kLibrary},
    {"TensorRT", "tensorrt*", "*", RangeOrigin::kLibrary},
    {"RAPIDS", "libraft*", "*", RangeOrigin::kLibrary},
    {"RAPIDS", "libcudf*", "*", RangeOrigin::kLibrary},
    {"RAPIDS", "cuml*", "*", RangeOrigin::kLibrary},
    {"RAPIDS", "rmm*", "*", RangeOrigin::kLibrary},
    // PyTorch's per-operator ranges (torch.autograd.profiler.emit_nvtx): "aten::mm, seq = 12".
    {"PyTorch", "*", "aten::*", RangeOrigin::kLibrary},
    {"PyTorch", "*", "autograd::*", RangeOrigin::kLibrary},
};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

bool Matches(std::string_view p, std::string_view text) {
  if (p == "*")
    return true;
  if (!p.empty() && p.back() == '*') {
    p.remove_suffix(1);
    return text.size() >= p.size() && EqualsIgnoreCase(text.substr(0, p.size()), p);
  }
  return EqualsIgnoreCase(text, p);
}

}  // namespace

const char* OriginName(RangeOrigin origin) {
  switch (origin) {
    case RangeOrigin::kLibraryStep:
      return "library_step";
    case RangeOrigin::kLibrary:
      return "library";
    case RangeOrigin::kProgram:
      break;
  }
  return "program";
}

RangeClass ClassifyRange(std::string_view domain, std::string_view name) {
  for (const Row& row : kRows) {
    if (Matches(row.domain, domain) && Matches(row.name, name))
      return {row.origin, row.library};
  }
  return {};
}

}  // namespace cuclimb::analysis
