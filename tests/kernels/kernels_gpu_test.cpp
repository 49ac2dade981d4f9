// SPDX-License-Identifier: Apache-2.0
// Every kernel against a float64 CPU reference on fresh random data, outputs poisoned first.
#include <cmath>
#include <tuple>

#include <gtest/gtest.h>

#include "kernels/kernels.h"
#include "tests/kernels/reference.h"

namespace cuclimb::kernels::testing {
namespace {

// float32 arithmetic: well under 1e-5 relative for these sizes (MSE, sums of up to 10^5 terms).
constexpr double kTolerance = 2e-5;

class KernelsTest : public ::testing::Test {
 protected:
  void SetUp() override { RecordProperty("rng_seed", std::to_string(RngSeed())); }
  void TearDown() override {
    CUCLIMB_CUDA_CHECK(cudaDeviceSynchronize());
    if (HasFailure())
      std::printf("rng seed: %llu\n", static_cast<unsigned long long>(RngSeed()));
  }
};

struct GemmShape {
  int m, n, k;
};

TEST_F(KernelsTest, GemmMatchesReferenceForEveryTransposeAndShape) {
  const GemmShape shapes[] = {{1, 1, 1},    {64, 256, 64}, {64, 8, 256}, {256, 8, 64},
                              {63, 65, 17}, {130, 7, 300}, {5, 129, 1},  {200, 200, 0},
                              {1, 300, 33}, {97, 1, 97}};
  const Transpose modes[] = {Transpose::kNo, Transpose::kYes};
  for (const GemmShape& s : shapes) {
    for (const Transpose ta : modes) {
      for (const Transpose tb : modes) {
        const auto a = RandomVector(static_cast<std::size_t>(s.m) * s.k, -1, 1);
        const auto b = RandomVector(static_cast<std::size_t>(s.k) * s.n, -1, 1);
        const auto c0 = RandomVector(static_cast<std::size_t>(s.m) * s.n, -1, 1);
        DeviceBuffer<float> da(a), db(b), dc(static_cast<std::size_t>(s.m) * s.n);
        const int lda = ta == Transpose::kNo ? s.k : s.m;
        const int ldb = tb == Transpose::kNo ? s.n : s.k;
        // beta = 0: C poisoned, must not be read and must be fully written.
        dc.Poison();
        Gemm(ta, tb, s.m, s.n, s.k, 1.5f, da.get(), lda, db.get(), ldb, 0.0f, dc.get(), s.n,
             nullptr);
        auto ref = GemmReference(ta, tb, s.m, s.n, s.k, 1.5, a, b, 0.0, c0);
        const double err0 = RelativeError(dc.Download(), ref);
        EXPECT_LT(err0, kTolerance) << s.m << "x" << s.n << "x" << s.k << " ta=" << int(ta)
                                    << " tb=" << int(tb) << " beta=0";
        // beta = 0.5 accumulates into C.
        dc.Upload(c0);
        Gemm(ta, tb, s.m, s.n, s.k, 1.0f, da.get(), lda, db.get(), ldb, 0.5f, dc.get(), s.n,
             nullptr);
        ref = GemmReference(ta, tb, s.m, s.n, s.k, 1.0, a, b, 0.5, c0);
        EXPECT_LT(RelativeError(dc.Download(), ref), kTolerance)
            << s.m << "x" << s.n << "x" << s.k << " ta=" << int(ta) << " tb=" << int(tb)
            << " beta=0.5";
      }
    }
  }
}

TEST_F(KernelsTest, AddBiasOutOfPlaceAndInPlace) {
  for (const auto& [rows, cols] : {std::pair{64, 256}, std::pair{3, 1}, std::pair{1000, 37}}) {
    const auto x = RandomVector(static_cast<std::size_t>(rows) * cols, -2, 2);
    const auto bias = RandomVector(cols, -1, 1);
    std::vector<double> ref(x.size());
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) ref[r * cols + c] = double(x[r * cols + c]) + bias[c];
    }
    DeviceBuffer<float> dx(x), dbias(bias), dy(x.size());
    dy.Poison();
    AddBias(dx.get(), dbias.get(), dy.get(), rows, cols, nullptr);
    EXPECT_LT(RelativeError(dy.Download(), ref), kTolerance);
    AddBias(dx.get(), dbias.get(), dx.get(), rows, cols, nullptr);
    EXPECT_LT(RelativeError(dx.Download(), ref), kTolerance);
  }
}

TEST_F(KernelsTest, ColumnSumAndReduceSum) {
  for (const auto& [rows, cols] :
       {std::pair{64, 256}, std::pair{1, 8}, std::pair{513, 33}, std::pair{0, 5}}) {
    const auto x = RandomVector(static_cast<std::size_t>(rows) * cols, -1, 1);
    std::vector<double> ref(cols, 0.0);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) ref[c] += x[static_cast<std::size_t>(r) * cols + c];
    }
    DeviceBuffer<float> dx(x), dout(cols);
    dout.Poison();
    ColumnSum(dx.get(), rows, cols, dout.get(), nullptr);
    EXPECT_LT(RelativeError(dout.Download(), ref), kTolerance) << rows << "x" << cols;
  }
  for (const std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{100000}}) {
    const auto x = RandomVector(n, 0, 1);
    double ref = 0.0;
    for (const float v : x) ref += v;
    DeviceBuffer<float> dx(x), dout(1);
    dout.Poison();
    ReduceSum(dx.get(), n, dout.get(), nullptr);
    EXPECT_LT(RelativeError(dout.Download(), {ref}), kTolerance) << n;
  }
}

TEST_F(KernelsTest, ActivationsAndTheirGradients) {
  for (const Activation act : {Activation::kRelu, Activation::kGelu, Activation::kTanh}) {
    const std::size_t n = 70001;
    const auto x = RandomVector(n, -4, 4);
    const auto dy = RandomVector(n, -1, 1);
    std::vector<double> ref_y(n), ref_dx(n);
    for (std::size_t i = 0; i < n; ++i) {
      ref_y[i] = ActivationReference(act, x[i]);
      ref_dx[i] = dy[i] * ActivationDerivativeReference(act, x[i]);
    }
    DeviceBuffer<float> dxs(x), ddy(dy), dyo(n), ddx(n);
    dyo.Poison();
    ddx.Poison();
    ActivationForward(act, dxs.get(), dyo.get(), n, nullptr);
    ActivationBackward(act, ddy.get(), dxs.get(), ddx.get(), n, nullptr);
    EXPECT_LT(RelativeError(dyo.Download(), ref_y), kTolerance) << int(act);
    EXPECT_LT(RelativeError(ddx.Download(), ref_dx), kTolerance) << int(act);
  }
}

TEST_F(KernelsTest, MseLossAndGradient) {
  for (const auto& [rows, cols] : {std::pair{64, 8}, std::pair{1, 1}, std::pair{3000, 17}}) {
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    const auto pred = RandomVector(n, -1, 1);
    const auto target = RandomVector(n, -1, 1);
    double loss = 0.0;
    std::vector<double> grad(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double d = double(pred[i]) - target[i];
      loss += d * d;
      grad[i] = 2.0 * d / double(n);
    }
    loss /= double(n);
    DeviceBuffer<float> dp(pred), dt(target), dl(1), dg(n);
    dl.Poison();
    dg.Poison();
    MseLoss(dp.get(), dt.get(), rows, cols, dl.get(), dg.get(), nullptr);
    EXPECT_LT(RelativeError(dl.Download(), {loss}), kTolerance);
    EXPECT_LT(RelativeError(dg.Download(), grad), kTolerance);
  }
}

TEST_F(KernelsTest, SoftmaxCrossEntropyAndGradient) {
  for (const auto& [rows, cols] : {std::pair{64, 8}, std::pair{1, 2}, std::pair{2049, 100}}) {
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    const auto logits = RandomVector(n, -6, 6);
    std::vector<int32_t> labels(rows);
    std::uniform_int_distribution<int32_t> pick(0, cols - 1);
    for (auto& l : labels) l = pick(Rng());
    double loss = 0.0;
    std::vector<double> grad(n);
    for (int r = 0; r < rows; ++r) {
      const float* row = &logits[static_cast<std::size_t>(r) * cols];
      double mx = row[0];
      for (int c = 1; c < cols; ++c) mx = std::max<double>(mx, row[c]);
      double denom = 0.0;
      for (int c = 0; c < cols; ++c) denom += std::exp(row[c] - mx);
      loss += std::log(denom) - (row[labels[r]] - mx);
      for (int c = 0; c < cols; ++c) {
        grad[static_cast<std::size_t>(r) * cols + c] =
            (std::exp(row[c] - mx) / denom - (c == labels[r] ? 1.0 : 0.0)) / rows;
      }
    }
    loss /= rows;
    DeviceBuffer<float> dlog(logits), dl(1), dg(n);
    DeviceBuffer<int32_t> dlab(labels);
    dl.Poison();
    dg.Poison();
    SoftmaxCrossEntropy(dlog.get(), dlab.get(), rows, cols, dl.get(), dg.get(), nullptr);
    EXPECT_LT(RelativeError(dl.Download(), {loss}), kTolerance) << rows << "x" << cols;
    EXPECT_LT(RelativeError(dg.Download(), grad), kTolerance) << rows << "x" << cols;
  }
}

TEST_F(KernelsTest, ArgmaxRowsFindsTheFirstMaximum) {
  const int rows = 777;
  const int cols = 13;
  auto x = RandomVector(static_cast<std::size_t>(rows) * cols, -1, 1);
  x[5 * cols + 3] = 7.0f;  // a tie: the first one wins
  x[5 * cols + 9] = 7.0f;
  std::vector<int32_t> ref(rows);
  for (int r = 0; r < rows; ++r) {
    int best = 0;
    for (int c = 1; c < cols; ++c) {
      if (x[r * cols + c] > x[r * cols + best])
        best = c;
    }
    ref[r] = best;
  }
  DeviceBuffer<float> dx(x);
  DeviceBuffer<int32_t> dl(rows);
  dl.Poison();
  ArgmaxRows(dx.get(), rows, cols, dl.get(), nullptr);
  EXPECT_EQ(dl.Download(), ref);
  EXPECT_EQ(ref[5], 3);
}

TEST_F(KernelsTest, AdamAndAdamWStepOutOfPlaceAndInPlace) {
  for (const bool decoupled : {false, true}) {
    for (const bool in_place : {false, true}) {
      const std::size_t n = 65537;
      const auto p = RandomVector(n, -1, 1);
      const auto g = RandomVector(n, -1, 1);
      const auto m = RandomVector(n, -0.1f, 0.1f);
      const auto v = RandomVector(n, 0.0f, 0.01f);
      AdamHyper h;
      h.lr = 1e-2f;
      h.weight_decay = 0.05f;
      h.decoupled = decoupled;
      const int step = 7;
      h.bias_correction1 = static_cast<float>(1.0 - std::pow(0.9, step));
      h.bias_correction2 = static_cast<float>(1.0 - std::pow(0.999, step));
      std::vector<double> rp(n), rm(n), rv(n), ru(n);
      for (std::size_t i = 0; i < n; ++i) {
        double grad = g[i];
        if (!decoupled)
          grad += double(h.weight_decay) * p[i];
        rm[i] = 0.9 * m[i] + 0.1 * grad;
        rv[i] = 0.999 * v[i] + 0.001 * grad * grad;
        ru[i] = (rm[i] / h.bias_correction1) / (std::sqrt(rv[i] / h.bias_correction2) + 1e-8);
        if (decoupled)
          ru[i] += double(h.weight_decay) * p[i];
        rp[i] = p[i] - double(h.lr) * ru[i];
      }
      DeviceBuffer<float> dp(p), dg(g), dm(m), dv(v), dpo(n), dmo(n), dvo(n), duo(n);
      if (in_place) {
        AdamUpdate(h, n, dp.get(), dg.get(), dm.get(), dv.get(), dp.get(), dm.get(), dv.get(),
                   nullptr, nullptr);
        EXPECT_LT(RelativeError(dp.Download(), rp), kTolerance);
        EXPECT_LT(RelativeError(dm.Download(), rm), kTolerance);
        EXPECT_LT(RelativeError(dv.Download(), rv), kTolerance);
      } else {
        dpo.Poison();
        dmo.Poison();
        dvo.Poison();
        duo.Poison();
        AdamUpdate(h, n, dp.get(), dg.get(), dm.get(), dv.get(), dpo.get(), dmo.get(), dvo.get(),
                   duo.get(), nullptr);
        EXPECT_LT(RelativeError(dpo.Download(), rp), kTolerance);
        EXPECT_LT(RelativeError(dmo.Download(), rm), kTolerance);
        EXPECT_LT(RelativeError(dvo.Download(), rv), kTolerance);
        EXPECT_LT(RelativeError(duo.Download(), ru), 1e-4);  // u divides by sqrt(v): touchier
        EXPECT_EQ(dp.Download(), p);                         // inputs untouched out of place
      }
    }
  }
}

TEST_F(KernelsTest, FillsWriteEveryElementAndAreDeterministic) {
  const std::size_t n = 1 << 20;
  DeviceBuffer<float> a(n), b(n), c(n);
  a.Poison();
  Fill(a.get(), n, 3.25f, nullptr);
  for (const float x : a.Download()) ASSERT_EQ(x, 3.25f);

  const uint64_t seed = Rng()();
  a.Poison();
  b.Poison();
  c.Poison();
  FillUniform(a.get(), n, -2.0f, 3.0f, seed, nullptr);
  FillUniform(b.get(), n, -2.0f, 3.0f, seed, nullptr);
  FillUniform(c.get(), n, -2.0f, 3.0f, seed + 1, nullptr);
  const auto ua = a.Download();
  const auto ub = b.Download();
  const auto uc = c.Download();
  EXPECT_EQ(ua, ub);
  EXPECT_NE(ua, uc);
  double mean = 0.0;
  for (const float x : ua) {
    ASSERT_GE(x, -2.0f);
    ASSERT_LT(x, 3.0f);
    mean += x;
  }
  mean /= n;
  EXPECT_NEAR(mean, 0.5, 0.01);  // U(-2, 3): mean 0.5, std of the mean ~ 0.0014

  a.Poison();
  FillNormal(a.get(), n, 1.0f, 2.0f, seed, nullptr);
  double sum = 0.0;
  double sum_sq = 0.0;
  for (const float x : a.Download()) {
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sum_sq += double(x) * x;
  }
  const double nm = sum / n;
  EXPECT_NEAR(nm, 1.0, 0.01);
  EXPECT_NEAR(std::sqrt(sum_sq / n - nm * nm), 2.0, 0.01);
}

TEST_F(KernelsTest, LaunchesOnAStreamAreOrdered) {
  cudaStream_t stream = nullptr;
  CUCLIMB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int n = 4096;
  DeviceBuffer<float> x(n), y(n);
  Fill(x.get(), n, -1.5f, stream);
  ActivationForward(Activation::kRelu, x.get(), y.get(), n, stream);
  AddBias(y.get(), x.get(), y.get(), 1, n, stream);  // 0 + (-1.5)
  CUCLIMB_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (const float v : y.Download()) ASSERT_EQ(v, -1.5f);
  CUCLIMB_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace cuclimb::kernels::testing
