// SPDX-License-Identifier: Apache-2.0
// Float64 CPU references for the kernels, and the device-buffer helpers their tests share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/kernels.h"

namespace cuclimb::kernels::testing {

// ||out - ref|| / ||ref|| (or ||out|| when ref is all zeros); NaN if out has a NaN.
double RelativeError(const std::vector<float>& out, const std::vector<double>& ref);

// Row-major C = alpha op(A) op(B) + beta C in double.
std::vector<double> GemmReference(Transpose ta, Transpose tb, int m, int n, int k, double alpha,
                                  const std::vector<float>& a, const std::vector<float>& b,
                                  double beta, const std::vector<float>& c);

double ActivationReference(Activation act, double x);
double ActivationDerivativeReference(Activation act, double x);

// A device buffer for tests, uploaded from or downloaded to std::vector.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count);
  explicit DeviceBuffer(const std::vector<T>& host);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return data_; }
  std::size_t size() const { return count_; }
  void Upload(const std::vector<T>& host);
  // Fills every byte with 0xFF: NaN for floats, -1 for ints. Outputs are poisoned before each
  // launch so a test can prove that every element was written.
  void Poison();
  std::vector<T> Download() const;

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// Seeded from std::random_device, so every run draws fresh inputs; the seed is printed by the
// tests on failure.
std::mt19937_64& Rng();
uint64_t RngSeed();
std::vector<float> RandomVector(std::size_t n, float lo, float hi);

}  // namespace cuclimb::kernels::testing
