// SPDX-License-Identifier: Apache-2.0
// Float64 references and device-buffer helpers for the kernel tests.
#include "tests/kernels/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <cuda_runtime_api.h>

namespace cuclimb::kernels::testing {

double RelativeError(const std::vector<float>& out, const std::vector<double>& ref) {
  double diff = 0.0;
  double norm = 0.0;
  double out_norm = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (std::isnan(out[i]))
      return std::numeric_limits<double>::quiet_NaN();
    const double d = static_cast<double>(out[i]) - ref[i];
    diff += d * d;
    norm += ref[i] * ref[i];
    out_norm += static_cast<double>(out[i]) * out[i];
  }
  if (norm == 0.0)
    return std::sqrt(out_norm);
  return std::sqrt(diff / norm);
}

std::vector<double> GemmReference(Transpose ta, Transpose tb, int m, int n, int k, double alpha,
                                  const std::vector<float>& a, const std::vector<float>& b,
                                  double beta, const std::vector<float>& c) {
  std::vector<double> out(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int p = 0; p < k; ++p) {
        const double av = ta == Transpose::kNo ? a[static_cast<std::size_t>(i) * k + p]
                                               : a[static_cast<std::size_t>(p) * m + i];
        const double bv = tb == Transpose::kNo ? b[static_cast<std::size_t>(p) * n + j]
                                               : b[static_cast<std::size_t>(j) * k + p];
        sum += av * bv;
      }
      const std::size_t idx = static_cast<std::size_t>(i) * n + j;
      out[idx] = alpha * sum + (beta != 0.0 ? beta * c[idx] : 0.0);
    }
  }
  return out;
}

double ActivationReference(Activation act, double x) {
  switch (act) {
    case Activation::kRelu:
      return x > 0.0 ? x : 0.0;
    case Activation::kGelu:
      return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::kTanh:
      return std::tanh(x);
  }
  return x;
}

double ActivationDerivativeReference(Activation act, double x) {
  switch (act) {
    case Activation::kRelu:
      return x > 0.0 ? 1.0 : 0.0;
    case Activation::kGelu: {
      const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
      return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * pdf;
    }
    case Activation::kTanh: {
      const double t = std::tanh(x);
      return 1.0 - t * t;
    }
  }
  return 1.0;
}

template <typename T>
DeviceBuffer<T>::DeviceBuffer(std::size_t count) : count_(count) {
  CUCLIMB_CUDA_CHECK(
      cudaMalloc(reinterpret_cast<void**>(&data_), std::max<std::size_t>(1, count) * sizeof(T)));
}

template <typename T>
DeviceBuffer<T>::DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
  Upload(host);
}

template <typename T>
DeviceBuffer<T>::~DeviceBuffer() {
  cudaFree(data_);
}

template <typename T>
void DeviceBuffer<T>::Upload(const std::vector<T>& host) {
  CUCLIMB_CUDA_CHECK(
      cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

template <typename T>
void DeviceBuffer<T>::Poison() {
  CUCLIMB_CUDA_CHECK(cudaMemset(data_, 0xFF, count_ * sizeof(T)));
}

template <typename T>
std::vector<T> DeviceBuffer<T>::Download() const {
  CUCLIMB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> host(count_);
  CUCLIMB_CUDA_CHECK(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

template class DeviceBuffer<float>;
template class DeviceBuffer<int32_t>;

uint64_t RngSeed() {
  static const uint64_t seed =
      (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  return seed;
}

std::mt19937_64& Rng() {
  static std::mt19937_64 rng(RngSeed());
  return rng;
}

std::vector<float> RandomVector(std::size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(Rng());
  return v;
}

}  // namespace cuclimb::kernels::testing
