// SPDX-License-Identifier: Apache-2.0
// Fills: constants and counter-based uniform/normal random numbers for weights and data.
#include "kernels/kernels.h"
#include "kernels/launch_util.h"

namespace cuclimb::kernels {
namespace {

using internal::GridFor;
using internal::kThreads;

// splitmix64 finaliser: a counter-based generator, so element i's value does not depend on the
// grid shape and a re-run with the same seed reproduces the data exactly.
__device__ uint64_t Mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) from the top 24 bits (exactly representable in float).
__device__ float Uniform(uint64_t seed, uint64_t counter) {
  return static_cast<float>(Mix(seed ^ Mix(counter)) >> 40) * (1.0f / 16777216.0f);
}

__global__ void FillKernel(float* x, size_t n, float value) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    x[i] = value;
  }
}

__global__ void FillUniformKernel(float* x, size_t n, float lo, float hi, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    x[i] = lo + (hi - lo) * Uniform(seed, i);
  }
}

__global__ void FillNormalKernel(float* x, size_t n, float mean, float stddev, uint64_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    // 1 - U keeps the logarithm's argument in (0, 1].
    const float u1 = 1.0f - Uniform(seed, 2 * i);
    const float u2 = Uniform(seed, 2 * i + 1);
    x[i] = mean + stddev * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
  }
}

}  // namespace

void Fill(float* x, size_t n, float value, cudaStream_t stream) {
  if (n == 0)
    return;
  FillKernel<<<GridFor(n), kThreads, 0, stream>>>(x, n, value);
  CUCLIMB_CHECK_LAUNCH("FillKernel");
}

void FillUniform(float* x, size_t n, float lo, float hi, uint64_t seed, cudaStream_t stream) {
  if (n == 0)
    return;
  FillUniformKernel<<<GridFor(n), kThreads, 0, stream>>>(x, n, lo, hi, seed);
  CUCLIMB_CHECK_LAUNCH("FillUniformKernel");
}

void FillNormal(float* x, size_t n, float mean, float stddev, uint64_t seed, cudaStream_t stream) {
  if (n == 0)
    return;
  FillNormalKernel<<<GridFor(n), kThreads, 0, stream>>>(x, n, mean, stddev, seed);
  CUCLIMB_CHECK_LAUNCH("FillNormalKernel");
}

}  // namespace cuclimb::kernels
