// SPDX-License-Identifier: Apache-2.0
// The table of library NVTX ranges: what it recognizes and what it leaves to the program.
#include "iterations/range_origin.h"

#include <gtest/gtest.h>

namespace cuclimb::analysis {
namespace {

struct Case {
  const char* domain;
  const char* name;
  RangeOrigin origin;
  const char* library;
};

class Origin : public ::testing::TestWithParam<Case> {};

TEST_P(Origin, Classified) {
  const Case& c = GetParam();
  const RangeClass rc = ClassifyRange(c.domain, c.name);
  EXPECT_EQ(rc.origin, c.origin) << c.domain << " / " << c.name;
  EXPECT_EQ(rc.library, c.library);
}

INSTANTIATE_TEST_SUITE_P(
    Table, Origin,
    ::testing::Values(
        // Seen on the H200 (JAX 0.11): XLA through TSL.
        Case{"TSL", "XlaModule:#hlo_module=jit_train_step,program_id=7292#",
             RangeOrigin::kLibraryStep, "XLA"},
        Case{"TSL", "Thunk:#hlo_op=command_buffer_1#", RangeOrigin::kLibrary, "XLA"},
        Case{"TSL", "XlaPass:#name=algsimp,module=jit_train_step,program_id=7#",
             RangeOrigin::kLibrary, "XLA"},
        Case{"TSL", "XlaCompileBackend:#module=jit_train_step#", RangeOrigin::kLibrary, "XLA"},
        Case{"TSL", "train_epoch", RangeOrigin::kProgram, ""},  // jax.profiler.TraceAnnotation
        Case{"cuBLAS", "cublasSgemm_v2", RangeOrigin::kLibrary, "cuBLAS"},
        Case{"cuBLASLt", "matmul", RangeOrigin::kLibrary, "cuBLAS"},
        Case{"", "cublasLtMatmul", RangeOrigin::kLibrary, "cuBLAS"},
        Case{"cuDNN", "cudnnConvolutionForward", RangeOrigin::kLibrary, "cuDNN"},
        Case{"NCCL", "AllReduce", RangeOrigin::kLibrary, "NCCL"},
        Case{"", "ncclAllReduce", RangeOrigin::kLibrary, "NCCL"},
        Case{"CCCL", "cub::DeviceReduce::Sum", RangeOrigin::kLibrary, "CCCL"},
        Case{"", "thrust::sort", RangeOrigin::kLibrary, "CCCL"},
        Case{"", "aten::mm, seq = 12, op_id = 4", RangeOrigin::kLibrary, "PyTorch"},
        Case{"", "iteration", RangeOrigin::kProgram, ""},
        Case{"", "A/bwd", RangeOrigin::kProgram, ""},
        Case{"cuclimb-adam", "p0/step", RangeOrigin::kProgram, ""},
        Case{"", "cub", RangeOrigin::kProgram, ""},  // only "cub::" names are CCCL's
        Case{"", "Xla", RangeOrigin::kLibrary, "XLA"}));

TEST(Origin, Names) {
  EXPECT_STREQ(OriginName(RangeOrigin::kProgram), "program");
  EXPECT_STREQ(OriginName(RangeOrigin::kLibraryStep), "library_step");
  EXPECT_STREQ(OriginName(RangeOrigin::kLibrary), "library");
}

}  // namespace
}  // namespace cuclimb::analysis
