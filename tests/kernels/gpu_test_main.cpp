// SPDX-License-Identifier: Apache-2.0
// main() for GPU gtest binaries: exit 77 (Meson's SKIP) when no CUDA device is visible.
#include <cstdio>

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

// Static cudart loads the driver at run time, so this binary starts on a machine without one and
// can say so; a gtest skip would exit 0, hence the check before InitGoogleTest.
int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device visible (%s)\n",
                status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    return 77;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
