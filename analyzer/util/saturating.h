// SPDX-License-Identifier: Apache-2.0
// Integer arithmetic on values read from a trace, which may be anything a field can hold: sums
// and differences saturate at the int64 limits instead of overflowing (undefined behaviour; a
// wrapped live-byte count or span would also be a wrong answer that looks right).
#pragma once

#include <cstdint>
#include <limits>

namespace cuclimb::util {

inline constexpr int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out))
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return out;
}

inline constexpr int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_sub_overflow(a, b, &out))
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return out;
}

// A byte count or other unsigned field as int64, at most INT64_MAX.
inline constexpr int64_t SaturatingInt64(uint64_t v) {
  return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(v);
}

// A double (a mean, a scaled time) as int64 without the undefined behaviour of an out-of-range
// cast: NaN → 0, beyond the limits → the limit.
inline constexpr int64_t SaturatingInt64(double v) {
  if (!(v == v))
    return 0;
  if (v >= 9223372036854775807.0)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

// A non-negative double (a sum of counts) as uint64: NaN and negatives → 0, beyond → the limit.
inline constexpr uint64_t SaturatingUInt64(double v) {
  if (!(v > 0))
    return 0;
  if (v >= 18446744073709551615.0)
    return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(v);
}

}  // namespace cuclimb::util
