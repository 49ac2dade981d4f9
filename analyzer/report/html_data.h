// SPDX-License-Identifier: Apache-2.0
// Building blocks of the data embedded in HTML pages (the report and the diff): rounded numbers
// and per-iteration series under a byte budget. Internal to report/ and diff/.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "report/json_report.h"
#include "report/report.h"

namespace cuclimb::analysis::html {

using Json = nlohmann::ordered_json;

// Numbers on the page are rounded exactly as in the JSON report.
inline Json Num(double v) {
  return JsonNumber(v);
}

// Hands out series while the embedded data stays under a budget. A series is an array of
// numbers (one per iteration, exact), or {"bin": k, "v": [...]} when longer than max_points
// (v[j] is the mean of iterations [j·k, (j+1)·k)); null once the budget is spent.
class SeriesBudget {
 public:
  SeriesBudget(size_t budget_bytes, size_t max_points)
      : left_(budget_bytes), max_points_(max_points < 16 ? 16 : max_points) {}

  // A NaN element is an iteration without a value (a gap): it stays null, and a bin of gaps only
  // is null; other bins are the mean of their values.
  Json Add(const Series& s) {
    if (s.empty())
      return Json::array();
    size_t bin = 1;
    if (s.size() > max_points_)
      bin = (s.size() + max_points_ - 1) / max_points_;
    Json values = Json::array();
    size_t bytes = 2;
    for (size_t i = 0; i < s.size(); i += bin) {
      double sum = 0;
      size_t n = 0;
      for (size_t j = i; j < s.size() && j < i + bin; ++j) {
        if (std::isnan(s[j]))
          continue;
        sum += s[j];
        ++n;
      }
      Json v = n == 0 ? Json(nullptr) : Num(sum / static_cast<double>(n));
      bytes += EstimateBytes(v);
      values.push_back(std::move(v));
    }
    if (bytes > left_) {
      ++dropped_;
      left_ = 0;  // first come, first served: later (less important) series are dropped too
      return nullptr;
    }
    left_ -= bytes;
    if (bin == 1)
      return values;
    return Json{{"bin", bin}, {"v", std::move(values)}};
  }
  // The same for a series already in JSON (numbers, null for gaps).
  Json Add(const Json& series) {
    Series s;
    s.reserve(series.size());
    for (const Json& v : series) s.push_back(v.is_number() ? v.get<double>() : std::nan(""));
    return Add(s);
  }
  // Charges other data (tables, strings) to the same budget.
  void Charge(size_t bytes) { left_ = bytes > left_ ? 0 : left_ - bytes; }
  int dropped() const { return dropped_; }

 private:
  static size_t EstimateBytes(const Json& v) {
    if (v.is_null())
      return 5;
    if (v.is_number_integer()) {
      const int64_t i = v.get<int64_t>();
      size_t n = i < 0 ? 2 : 1;
      for (int64_t a = i < 0 ? -i : i; a >= 10; a /= 10) ++n;
      return n + 1;
    }
    return 13;  // "%.6g" with a point and maybe an exponent, plus the comma
  }

  size_t left_;
  size_t max_points_;
  int dropped_ = 0;
};

}  // namespace cuclimb::analysis::html
