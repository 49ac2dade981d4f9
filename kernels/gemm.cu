// SPDX-License-Identifier: Apache-2.0
// Tiled single-precision GEMM for any shape, with either operand transposed (forward, dX, dW).
#include "kernels/kernels.h"
#include "kernels/launch_util.h"

namespace cuclimb::kernels {
namespace {

constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 16;
constexpr int kThreadsPerSide = 16;                    // 16 x 16 = 256 threads
constexpr int kPerThreadM = kTileM / kThreadsPerSide;  // 4
constexpr int kPerThreadN = kTileN / kThreadsPerSide;  // 4

// Each thread owns a 4 x 4 block of C, strided by 16 rows and columns so a warp's stores to C
// and its reads of the shared panels are contiguous. Panels are stored k-major, padded by one
// float to keep the transposed fills off a single bank. Out-of-range elements load as zero,
// which is what makes partial tiles (any m, n, k) correct.
template <bool kTransA, bool kTransB>
__global__ void __launch_bounds__(256)
    GemmKernel(int m, int n, int k, float alpha, const float* __restrict__ a, int lda,
               const float* __restrict__ b, int ldb, float beta, float* __restrict__ c, int ldc) {
  __shared__ float a_panel[kTileK][kTileM + 1];
  __shared__ float b_panel[kTileK][kTileN + 1];

  const int tid = threadIdx.x;
  const int tr = tid / kThreadsPerSide;
  const int tc = tid % kThreadsPerSide;
  const int row0 = blockIdx.y * kTileM;
  const int col0 = blockIdx.x * kTileN;

  float acc[kPerThreadM][kPerThreadN] = {};

  for (int k0 = 0; k0 < k; k0 += kTileK) {
    for (int i = tid; i < kTileM * kTileK; i += blockDim.x) {
      // Walk the panel in the order A is laid out in memory so global loads coalesce.
      const int r = kTransA ? i % kTileM : i / kTileK;
      const int kk = kTransA ? i / kTileM : i % kTileK;
      const int gr = row0 + r;
      const int gk = k0 + kk;
      float value = 0.0f;
      if (gr < m && gk < k) {
        value =
            kTransA ? a[static_cast<size_t>(gk) * lda + gr] : a[static_cast<size_t>(gr) * lda + gk];
      }
      a_panel[kk][r] = value;
    }
    for (int i = tid; i < kTileN * kTileK; i += blockDim.x) {
      const int cc = kTransB ? i / kTileK : i % kTileN;
      const int kk = kTransB ? i % kTileK : i / kTileN;
      const int gc = col0 + cc;
      const int gk = k0 + kk;
      float value = 0.0f;
      if (gc < n && gk < k) {
        value =
            kTransB ? b[static_cast<size_t>(gc) * ldb + gk] : b[static_cast<size_t>(gk) * ldb + gc];
      }
      b_panel[kk][cc] = value;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      float a_reg[kPerThreadM];
      float b_reg[kPerThreadN];
#pragma unroll
      for (int i = 0; i < kPerThreadM; ++i) a_reg[i] = a_panel[kk][tr + i * kThreadsPerSide];
#pragma unroll
      for (int j = 0; j < kPerThreadN; ++j) b_reg[j] = b_panel[kk][tc + j * kThreadsPerSide];
#pragma unroll
      for (int i = 0; i < kPerThreadM; ++i) {
#pragma unroll
        for (int j = 0; j < kPerThreadN; ++j) acc[i][j] = fmaf(a_reg[i], b_reg[j], acc[i][j]);
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < kPerThreadM; ++i) {
    const int gr = row0 + tr + i * kThreadsPerSide;
    if (gr >= m)
      continue;
#pragma unroll
    for (int j = 0; j < kPerThreadN; ++j) {
      const int gc = col0 + tc + j * kThreadsPerSide;
      if (gc >= n)
        continue;
      float* out = c + static_cast<size_t>(gr) * ldc + gc;
      // beta == 0 must not read C: callers hand in fresh, uninitialised outputs.
      *out = beta == 0.0f ? alpha * acc[i][j] : fmaf(alpha, acc[i][j], beta * *out);
    }
  }
}

}  // namespace

void Gemm(Transpose trans_a, Transpose trans_b, int m, int n, int k, float alpha, const float* a,
          int lda, const float* b, int ldb, float beta, float* c, int ldc, cudaStream_t stream) {
  if (m <= 0 || n <= 0)
    return;
  const dim3 grid((n + kTileN - 1) / kTileN, (m + kTileM - 1) / kTileM);
  const dim3 block(kThreadsPerSide * kThreadsPerSide);
  const bool ta = trans_a == Transpose::kYes;
  const bool tb = trans_b == Transpose::kYes;
  if (!ta && !tb) {
    GemmKernel<false, false>
        <<<grid, block, 0, stream>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if (!ta && tb) {
    GemmKernel<false, true>
        <<<grid, block, 0, stream>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if (ta && !tb) {
    GemmKernel<true, false>
        <<<grid, block, 0, stream>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    GemmKernel<true, true>
        <<<grid, block, 0, stream>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  CUCLIMB_CHECK_LAUNCH("GemmKernel");
}

}  // namespace cuclimb::kernels
