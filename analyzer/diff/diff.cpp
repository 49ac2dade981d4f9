// SPDX-License-Identifier: Apache-2.0
// Two reports → aligned series → first divergences (diff.h).
#include "diff/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "report/text_report.h"

namespace cuclimb::analysis {
namespace {

using Pairs = std::vector<std::pair<int64_t, int64_t>>;  // (base iteration, other iteration)

double Median(std::vector<double> v) {
  if (v.empty())
    return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) {
    m = (m + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
  }
  return m;
}

SideLevels Levels(const Series& s) {
  SideLevels l;
  if (s.empty())
    return l;
  const size_t k = std::min(s.size(), std::max<size_t>(3, s.size() / 10));
  l.first = Median(Series(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(k)));
  l.last = Median(Series(s.end() - static_cast<std::ptrdiff_t>(k), s.end()));
  l.change_pct = l.first != 0 ? 100 * (l.last - l.first) / std::fabs(l.first) : 0;
  return l;
}

// Running median over [i − h, i + h].
Series Smooth(const Series& s, size_t h) {
  Series out(s.size());
  std::vector<double> w;
  for (size_t i = 0; i < s.size(); ++i) {
    const size_t a = i >= h ? i - h : 0, b = std::min(s.size(), i + h + 1);
    w.assign(s.begin() + static_cast<std::ptrdiff_t>(a),
             s.begin() + static_cast<std::ptrdiff_t>(b));
    out[i] = Median(w);
  }
  return out;
}

// Robust per-point noise: 1.4826 × MAD of first differences / √2.
double Noise(const Series& s) {
  if (s.size() < 3)
    return 0;
  std::vector<double> d(s.size() - 1);
  for (size_t i = 1; i < s.size(); ++i) d[i - 1] = s[i] - s[i - 1];
  const double med = Median(d);
  for (double& x : d) x = std::fabs(x - med);
  return 1.4826 * Median(d) / std::sqrt(2.0);
}

// How two runs' iterations correspond: by NVTX payload when both runs number their iterations
// (distinct payloads, at least half of base's found in other), else by index.
Pairs Align(const RankReport& base, const RankReport& other, std::string* how) {
  const auto& bs = base.iterations.spans;
  const auto& os = other.iterations.spans;
  const int64_t nb = base.iterations.count, no = other.iterations.count;
  auto distinct = [](const std::vector<IterationSpan>& spans) {
    std::set<int64_t> seen;
    for (const IterationSpan& s : spans) seen.insert(s.payload);
    return seen.size() == spans.size() && spans.size() > 1;
  };
  Pairs pairs;
  if (static_cast<int64_t>(bs.size()) == nb && static_cast<int64_t>(os.size()) == no &&
      distinct(bs) && distinct(os)) {
    absl::flat_hash_map<int64_t, int64_t> index;
    for (size_t j = 0; j < os.size(); ++j) index[os[j].payload] = static_cast<int64_t>(j);
    for (size_t i = 0; i < bs.size(); ++i) {
      if (auto it = index.find(bs[i].payload); it != index.end())
        pairs.emplace_back(static_cast<int64_t>(i), it->second);
    }
    // Payload alignment only when it is more than an identity on most iterations.
    if (pairs.size() * 2 >= bs.size()) {
      bool identity = true;
      for (const auto& [i, j] : pairs) identity &= i == j;
      *how =
          identity && static_cast<int64_t>(pairs.size()) == std::min(nb, no) ? "index" : "payload";
      return pairs;
    }
    pairs.clear();
  }
  *how = "index";
  for (int64_t i = 0; i < std::min(nb, no); ++i) pairs.emplace_back(i, i);
  return pairs;
}

Series Pick(const Series& s, const Pairs& pairs, bool first) {
  Series out;
  out.reserve(pairs.size());
  for (const auto& p : pairs) {
    const int64_t i = first ? p.first : p.second;
    out.push_back(i < static_cast<int64_t>(s.size()) ? s[static_cast<size_t>(i)] : 0.0);
  }
  return out;
}

// Builds one entry from the two aligned series (a side may be missing: `has_*` false).
DiffEntry Entry(std::string key, std::string metric, std::string unit, const Series* base,
                const Series* other, bool is_time, const Pairs& pairs, const DiffOptions& o,
                bool missing_is_zero) {
  DiffEntry e;
  e.key = std::move(key);
  e.metric = std::move(metric);
  e.unit = std::move(unit);
  e.status = base && other ? "both" : base ? "only_base" : "only_other";
  const Series zeros(pairs.size(), 0.0);
  if (base)
    e.base_series = Pick(*base, pairs, true);
  if (other)
    e.other_series = Pick(*other, pairs, false);
  if (missing_is_zero) {
    if (!base)
      e.base_series = zeros;
    if (!other)
      e.other_series = zeros;
  }
  if (base || missing_is_zero)
    e.base = Levels(base ? e.base_series : zeros);
  if (other || missing_is_zero)
    e.other = Levels(other ? e.other_series : zeros);
  const double bl = e.base ? e.base->last : 0, ol = e.other ? e.other->last : 0;
  e.delta_last = ol - bl;
  if (bl != 0)
    e.delta_pct = 100 * e.delta_last / std::fabs(bl);
  const Series& a = base ? e.base_series : zeros;
  const Series& b = other ? e.other_series : zeros;
  if ((base && other) || missing_is_zero) {
    e.diverges_at = FirstDivergence(a, b, is_time, o);
  } else {
    // Present in one run only, and no level to compare with: it differs from where it exists.
    const Series& present = base ? a : b;
    for (size_t i = 0; i < present.size(); ++i) {
      if (present[i] != 0) {
        e.diverges_at = static_cast<int64_t>(i);
        break;
      }
    }
  }
  if (e.diverges_at >= 0) {
    const size_t i = static_cast<size_t>(e.diverges_at);
    const bool has_a = base || missing_is_zero, has_b = other || missing_is_zero;
    e.what = absl::StrCat("from iteration ", e.diverges_at, ": base ",
                          has_a ? FormatQuantity(a[i], e.unit) : "absent", ", other ",
                          has_b ? FormatQuantity(b[i], e.unit) : "absent", "; at the end: base ",
                          has_a ? FormatQuantity(bl, e.unit) : "absent", ", other ",
                          has_b ? FormatQuantity(ol, e.unit) : "absent");
  }
  return e;
}

void Order(std::vector<DiffEntry>* v, size_t max_entries, const std::string& section,
           std::vector<std::string>* notes) {
  std::stable_sort(v->begin(), v->end(), [](const DiffEntry& x, const DiffEntry& y) {
    const bool dx = x.diverges_at >= 0, dy = y.diverges_at >= 0;
    if (dx != dy)
      return dx;
    if (dx && x.diverges_at != y.diverges_at)
      return x.diverges_at < y.diverges_at;
    const double px = x.delta_pct ? std::fabs(*x.delta_pct) : (x.delta_last != 0 ? 1e300 : 0);
    const double py = y.delta_pct ? std::fabs(*y.delta_pct) : (y.delta_last != 0 ? 1e300 : 0);
    if (px != py)
      return px > py;
    if (x.key != y.key)
      return x.key < y.key;
    return x.metric < y.metric;
  });
  if (v->size() > max_entries) {
    notes->push_back(absl::StrCat(section, ": ", v->size() - max_entries,
                                  " more entries left out (none of them diverges earlier)"));
    v->resize(max_entries);
  }
}

const StateSeries* FindState(const RankReport& r, const std::string& metric, const std::string& dim,
                             const std::string& key) {
  for (const StateSeries& s : r.state) {
    if (s.metric == metric && s.dimension == dim && s.key == key)
      return &s;
  }
  return nullptr;
}

RunSummary Summarize(const Report& r) {
  RunSummary s;
  if (r.ranks.empty())
    return s;
  const RankReport& k = r.ranks[0];
  s.path = k.trace.path;
  s.program = !k.process.cmd.empty() ? k.process.cmd : k.process.exe;
  s.verdict = r.verdict;
  s.iteration_source = k.iterations.source;
  s.iteration_name = k.iterations.name;
  s.iterations = k.iterations.count;
  for (const RangeReport& rr : k.ranges) {
    if (rr.climbing)
      s.climbing_ranges.push_back(rr.name);
  }
  return s;
}

}  // namespace

int64_t FirstDivergence(const Series& a, const Series& b, bool is_time, const DiffOptions& o) {
  const size_t n = std::min(a.size(), b.size());
  if (n == 0)
    return -1;
  size_t persist = o.persist > 0 ? static_cast<size_t>(o.persist) : std::max<size_t>(3, n / 50);
  persist = std::min(persist, n);
  std::vector<bool> apart(n);
  if (is_time) {
    const Series sa = Smooth(Series(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n)),
                             std::clamp<size_t>(n / 100, 2, 25));
    const Series sb = Smooth(Series(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n)),
                             std::clamp<size_t>(n / 100, 2, 25));
    const size_t w = 2 * std::clamp<size_t>(n / 100, 2, 25) + 1;
    const double na = Noise(a), nb = Noise(b);
    // Standard error of a difference of two running medians (median efficiency 1.2533).
    const double se = 1.2533 * std::sqrt((na * na + nb * nb) / static_cast<double>(w));
    for (size_t i = 0; i < n; ++i) {
      const double level = std::max(std::fabs(sa[i]), std::fabs(sb[i]));
      apart[i] = std::fabs(sb[i] - sa[i]) > std::max(o.time_tolerance_pct / 100 * level, 4 * se) &&
                 level > 0;
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      const double level = std::max(std::fabs(a[i]), std::fabs(b[i]));
      apart[i] =
          std::fabs(b[i] - a[i]) > std::max(o.count_tolerance, o.count_tolerance_pct / 100 * level);
    }
  }
  // The first run of `persist` apart iterations, or a shorter one that lasts to the end.
  size_t run = 0;
  for (size_t i = 0; i < n; ++i) {
    run = apart[i] ? run + 1 : 0;
    if (run >= persist)
      return static_cast<int64_t>(i + 1 - run);
  }
  if (run >= std::min<size_t>(3, persist))
    return static_cast<int64_t>(n - run);
  return -1;
}

DiffReport DiffReports(const Report& base, const Report& other, const DiffOptions& o) {
  DiffReport d;
  d.options = o;
  d.base = Summarize(base);
  d.other = Summarize(other);
  if (base.ranks.empty() || other.ranks.empty()) {
    d.verdict = "same";
    d.summary = "nothing to compare: a report has no trace";
    return d;
  }
  const RankReport& rb = base.ranks[0];
  const RankReport& ro = other.ranks[0];
  if (base.ranks.size() > 1 || other.ranks.size() > 1)
    d.notes.push_back("several ranks: rank 0 of each run is compared");
  const Pairs pairs = Align(rb, ro, &d.alignment);
  d.aligned = static_cast<int64_t>(pairs.size());
  if (!pairs.empty()) {
    d.base_offset = pairs[0].first;
    d.other_offset = pairs[0].second;
  }
  if (rb.iterations.count != ro.iterations.count) {
    d.notes.push_back(absl::StrCat("the runs have ", rb.iterations.count, " and ",
                                   ro.iterations.count, " iterations; ", d.aligned,
                                   " are compared"));
  }
  if (rb.iterations.source != ro.iterations.source || rb.iterations.name != ro.iterations.name) {
    d.notes.push_back(absl::StrCat("iterations come from ", rb.iterations.source, " \"",
                                   rb.iterations.name, "\" in base and ", ro.iterations.source,
                                   " \"", ro.iterations.name, "\" in other"));
  }
  if (d.aligned < 8)
    d.notes.push_back("fewer than 8 aligned iterations: divergences are unreliable");
  if (base.partial || other.partial)
    d.notes.push_back("a trace is cut or damaged: compared up to the damage");

  // Ranges, by name.
  std::map<std::string, std::pair<const RangeReport*, const RangeReport*>> ranges;
  for (const RangeReport& r : rb.ranges) ranges[r.name].first = &r;
  for (const RangeReport& r : ro.ranges) ranges[r.name].second = &r;
  for (const auto& [name, p] : ranges) {
    d.ranges.push_back(Entry(name, "total_ms", "ms", p.first ? &p.first->total_ms : nullptr,
                             p.second ? &p.second->total_ms : nullptr, true, pairs, o, false));
  }
  // Accumulators, by id; a side without it is looked up in its call-site state (live handles).
  std::map<std::string, std::pair<const Accumulator*, const Accumulator*>> accs;
  for (const Accumulator& a : rb.accumulators) accs[a.id].first = &a;
  for (const Accumulator& a : ro.accumulators) accs[a.id].second = &a;
  for (const auto& [id, p] : accs) {
    const Accumulator& any = p.second ? *p.second : *p.first;
    const std::string site_key = absl::StrCat(any.kind, ": ", any.key);
    const Series* sb = p.first ? &p.first->values : nullptr;
    const Series* so = p.second ? &p.second->values : nullptr;
    if (!sb) {
      if (const StateSeries* s = FindState(rb, "live_handles", "call_site", site_key))
        sb = &s->values;
    }
    if (!so) {
      if (const StateSeries* s = FindState(ro, "live_handles", "call_site", site_key))
        so = &s->values;
    }
    DiffEntry e = Entry(id, "live", any.unit, sb, so, false, pairs, o, false);
    e.status = p.first && p.second ? "both" : p.first ? "only_base" : "only_other";
    if (!sb || !so) {
      // Nothing to compare with in the run without it: it differs from where it leaves its
      // starting level for good.
      const Series& present = sb ? e.base_series : e.other_series;
      e.diverges_at = present.empty()
                          ? -1
                          : FirstDivergence(present, Series(present.size(), present[0]), false, o);
    }
    e.base_growth = p.first ? p.first->growth_per_iter : 0;
    e.other_growth = p.second ? p.second->growth_per_iter : 0;
    e.explains = any.explains;
    if (e.status != "both") {
      absl::StrAppend(
          &e.what, e.what.empty() ? "" : "; ",
          e.status == "only_other" ? "new in other" : "gone in other", ": grows ",
          FormatQuantity(e.status == "only_other" ? e.other_growth : e.base_growth, any.unit), " ",
          any.unit, " per iteration");
    }
    d.accumulators.push_back(std::move(e));
  }
  // Allocation census and live state, by (metric, dimension, key); a key missing on one side is 0.
  auto state_section = [&](const std::set<std::string>& metrics, const std::set<std::string>& dims,
                           std::vector<DiffEntry>* out) {
    std::map<std::tuple<std::string, std::string, std::string>,
             std::pair<const StateSeries*, const StateSeries*>>
        m;
    for (const StateSeries& s : rb.state) {
      if (metrics.count(s.metric) && dims.count(s.dimension))
        m[{s.metric, s.dimension, s.key}].first = &s;
    }
    for (const StateSeries& s : ro.state) {
      if (metrics.count(s.metric) && dims.count(s.dimension))
        m[{s.metric, s.dimension, s.key}].second = &s;
    }
    for (const auto& [k, p] : m) {
      const auto& [metric, dim, key] = k;
      const std::string unit = p.first ? p.first->unit : p.second->unit;
      out->push_back(Entry(dim == "total" ? std::string("total") : absl::StrCat(dim, ": ", key),
                           metric, unit, p.first ? &p.first->values : nullptr,
                           p.second ? &p.second->values : nullptr, false, pairs, o, true));
    }
  };
  state_section({"allocs", "frees", "alloc_bytes"},
                {"total", "api", "call_site", "size_class", "memory_kind"}, &d.census);
  state_section({"live_handles", "live_bytes", "live_regions"},
                {"total", "memory_kind", "handle_type", "heap"}, &d.handles);
  // Kernels: launches per iteration (counts; missing = 0) and mean GPU duration (time).
  std::map<std::string, std::pair<const KernelRow*, const KernelRow*>> kernels;
  for (const KernelRow& k : rb.kernels) kernels[k.name].first = &k;
  for (const KernelRow& k : ro.kernels) kernels[k.name].second = &k;
  for (const auto& [name, p] : kernels) {
    d.kernels.push_back(
        Entry(name, "launches", "launches", p.first ? &p.first->launches_per_iter : nullptr,
              p.second ? &p.second->launches_per_iter : nullptr, false, pairs, o, true));
    if (p.first && p.second && p.first->executions > 0 && p.second->executions > 0) {
      d.kernels.push_back(Entry(name, "mean_us", "us", &p.first->mean_us, &p.second->mean_us, true,
                                pairs, o, false));
    }
  }
  Order(&d.ranges, o.max_entries, "ranges", &d.notes);
  Order(&d.accumulators, o.max_entries, "accumulators", &d.notes);
  Order(&d.census, o.max_entries, "census", &d.notes);
  Order(&d.handles, o.max_entries, "handles", &d.notes);
  Order(&d.kernels, o.max_entries, "kernels", &d.notes);

  // The first divergence: the earliest over every section, census and handles named first.
  const std::pair<const char*, const std::vector<DiffEntry>*> sections[] = {
      {"census", &d.census},
      {"handles", &d.handles},
      {"accumulators", &d.accumulators},
      {"ranges", &d.ranges},
      {"kernels", &d.kernels}};
  for (const auto& [name, list] : sections) {
    for (const DiffEntry& e : *list) {
      if (e.diverges_at >= 0 && (d.first_divergence < 0 || e.diverges_at < d.first_divergence)) {
        d.first_divergence = e.diverges_at;
      }
    }
  }
  for (const auto& [name, list] : sections) {
    for (const DiffEntry& e : *list) {
      if (e.diverges_at == d.first_divergence && d.first_divergence >= 0 &&
          d.first_items.size() < 12) {
        d.first_items.push_back({name, e.key, e.metric, e.what});
      }
    }
  }
  d.verdict = d.first_divergence >= 0 ? "diverged" : "same";
  if (d.first_divergence < 0) {
    d.summary = absl::StrFormat(
        "No divergence over %d aligned iterations (times within %g%% and their noise, counts "
        "within max(%g, %g%%)).",
        d.aligned, o.time_tolerance_pct, o.count_tolerance, o.count_tolerance_pct);
    return d;
  }
  const DiffReport::Item& first = d.first_items[0];
  d.summary = absl::StrCat("The runs diverge at iteration ", d.first_divergence);
  if (d.alignment == "payload" || d.base_offset != 0 || d.other_offset != 0) {
    absl::StrAppend(&d.summary, " (base ", d.first_divergence + d.base_offset, ", other ",
                    d.first_divergence + d.other_offset, ")");
  }
  absl::StrAppend(&d.summary, ": ", first.section, " ", first.metric, " ", first.key, ".");
  std::vector<std::string> climbs;
  for (const DiffEntry& e : d.ranges) {
    if (e.diverges_at < 0 || !e.base || !e.other)
      continue;
    climbs.push_back(absl::StrFormat(
        "%s %s → %s (%+.1f%%) in base, %s → %s (%+.1f%%) in other, apart from iteration %d", e.key,
        FormatMs(e.base->first), FormatMs(e.base->last), e.base->change_pct,
        FormatMs(e.other->first), FormatMs(e.other->last), e.other->change_pct, e.diverges_at));
    if (climbs.size() == 3)
      break;
  }
  if (!climbs.empty())
    absl::StrAppend(&d.summary, " Ranges: ", absl::StrJoin(climbs, "; "), ".");
  std::vector<std::string> fresh;
  for (const DiffEntry& e : d.accumulators) {
    if (e.status == "only_other")
      fresh.push_back(e.key);
  }
  if (!fresh.empty())
    absl::StrAppend(&d.summary, " New accumulators: ", absl::StrJoin(fresh, ", "), ".");
  return d;
}

}  // namespace cuclimb::analysis
