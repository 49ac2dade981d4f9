// SPDX-License-Identifier: Apache-2.0
// Launch-sequence period detection.
#include "iterations/launch_period.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "detect/stats.h"

namespace cuclimb::analysis {
namespace {

constexpr size_t kMaxCompare = 200000;
constexpr int kMaxStride = 8;
constexpr double kMinMatch = 0.6;
constexpr double kTolerance = 0.02;

double Match(absl::Span<const uint32_t> s, size_t from, int64_t p) {
  const size_t n = s.size();
  const size_t up = static_cast<size_t>(p);
  if (from + up >= n)
    return 0;
  const size_t end = std::min(n - up, from + kMaxCompare);
  size_t same = 0;
  for (size_t i = from; i < end; ++i) same += s[i] == s[i + up];
  return static_cast<double>(same) / static_cast<double>(end - from);
}

struct AnchorCandidate {
  uint64_t key = 0;
  std::vector<size_t> positions;
};

// Picks the key that occurs about once per period with the steadiest spacing.
bool PickAnchor(const absl::flat_hash_map<uint64_t, AnchorCandidate>& occ, size_t span,
                int64_t period, uint64_t* key_out, double* spread_out) {
  const double expected = static_cast<double>(span) / static_cast<double>(period);
  bool found = false;
  double best_spread = 0;
  size_t best_first = 0;
  uint64_t best_key = 0;
  for (const auto& [key, c] : occ) {
    const double count = static_cast<double>(c.positions.size());
    if (count < 2 || count < 0.9 * expected || count > 1.1 * expected)
      continue;
    std::vector<double> gaps;
    for (size_t i = 1; i < c.positions.size(); ++i) {
      gaps.push_back(static_cast<double>(c.positions[i] - c.positions[i - 1]));
    }
    const double med = stats::Median(gaps);
    if (std::fabs(med - static_cast<double>(period)) > 0.1 * static_cast<double>(period))
      continue;
    const double spread = stats::Mad(gaps) / med;
    const size_t first = c.positions.front();
    if (!found || spread < best_spread ||
        (spread == best_spread &&
         (first < best_first || (first == best_first && key < best_key)))) {
      found = true;
      best_spread = spread;
      best_first = first;
      best_key = key;
    }
  }
  *key_out = best_key;
  *spread_out = best_spread;
  return found;
}

}  // namespace

LaunchPeriod FindLaunchPeriod(absl::Span<const uint32_t> names) {
  LaunchPeriod out;
  const size_t n = names.size();
  if (n < 8) {
    out.why = absl::StrFormat("only %d kernel launches", n);
    return out;
  }
  const size_t from = n / 10;
  const absl::Span<const uint32_t> s = names;
  // Occurrences of each name after the set-up part.
  absl::flat_hash_map<uint64_t, AnchorCandidate> occ;
  for (size_t i = from; i < n; ++i) occ[s[i]].positions.push_back(i);
  std::set<int64_t> candidates;
  const int64_t max_period = static_cast<int64_t>((n - from) / 3);
  for (const auto& [name, c] : occ) {
    const auto& pos = c.positions;
    if (pos.size() < 3)
      continue;
    for (int j = 1; j <= kMaxStride && static_cast<size_t>(j) < pos.size(); ++j) {
      std::vector<double> d;
      for (size_t i = 0; i + j < pos.size(); ++i)
        d.push_back(static_cast<double>(pos[i + j] - pos[i]));
      const int64_t p = std::llround(stats::Median(d));
      if (p >= 1 && p <= max_period)
        candidates.insert(p);
    }
  }
  if (candidates.empty()) {
    out.why = "no kernel repeats often enough to show a period";
    return out;
  }
  std::vector<std::pair<int64_t, double>> matches;
  double best = 0;
  for (int64_t p : candidates) {
    const double m = Match(s, from, p);
    matches.emplace_back(p, m);
    best = std::max(best, m);
  }
  if (best < kMinMatch) {
    out.why = absl::StrFormat("the launch sequence is not periodic (best match %.2f)", best);
    return out;
  }
  for (const auto& [p, m] : matches) {
    if (m >= best - kTolerance) {
      out.period = p;
      out.match = m;
      break;
    }
  }
  uint64_t key = 0;
  double spread = 0;
  const size_t span = n - from;
  if (PickAnchor(occ, span, out.period, &key, &spread)) {
    out.found = true;
    out.anchor = static_cast<uint32_t>(key);
  } else {
    absl::flat_hash_map<uint64_t, AnchorCandidate> pairs;
    for (size_t i = from; i + 1 < n; ++i) {
      pairs[(uint64_t{s[i]} << 32) | s[i + 1]].positions.push_back(i);
    }
    if (PickAnchor(pairs, span, out.period, &key, &spread)) {
      out.found = true;
      out.anchor = static_cast<uint32_t>(key >> 32);
      out.anchor_next = static_cast<uint32_t>(key);
    }
  }
  out.why = out.found
                ? absl::StrFormat("launch sequence repeats every %d launches (match %.3f)",
                                  out.period, out.match)
                : absl::StrFormat("period %d launches, but no kernel marks it once per period",
                                  out.period);
  return out;
}

}  // namespace cuclimb::analysis
