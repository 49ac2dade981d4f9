// SPDX-License-Identifier: Apache-2.0
// The straggler of a job and its evidence.
#include "analysis/straggler.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/rank_climbs.h"
#include "detect/collectives.h"
#include "report/text_report.h"

namespace cuclimb::analysis::internal {
namespace {

// An accumulator is the straggler's when its growth there exceeds the waiting ranks' mean by at
// least this share of it: it lives on the straggler alone, or mostly.
constexpr double kMostlyThere = 0.5;

std::string PerIter(double ms) {
  return absl::StrCat(ms >= 0 ? "+" : "-", FormatMs(std::fabs(ms)), "/iter");
}

// "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)" → the name only.
std::string ShortKernel(const std::string& name) {
  return name.substr(0, name.find('('));
}

const RangeReport* FindRange(const RankReport& rank, const std::string& name) {
  for (const RangeReport& r : rank.ranges) {
    if (r.name == name)
      return &r;
  }
  return nullptr;
}

// GPU time per iteration a kernel gains per iteration (ms/iter): the slope of its mean duration
// times its launches per iteration.
double KernelGrowth(const KernelRow& k) {
  if (k.executions == 0 || !k.duration_trend.tested)
    return 0;
  double launches = 0;
  for (double l : k.launches_per_iter) launches += l;
  if (!k.launches_per_iter.empty())
    launches /= static_cast<double>(k.launches_per_iter.size());
  return k.duration_trend.slope_per_iter * launches * 1e-3;
}

const KernelRow* FastestGrowing(const RankReport& rank, bool collective) {
  const KernelRow* best = nullptr;
  for (const KernelRow& k : rank.kernels) {
    if (IsCollectiveKernel(k.name) == collective && KernelGrowth(k) > 0 &&
        (best == nullptr || KernelGrowth(k) > KernelGrowth(*best))) {
      best = &k;
    }
  }
  return best;
}

const Component* FastestGrowing(const std::vector<Component>& parts) {
  const Component* best = nullptr;
  for (const Component& c : parts) {
    if (c.trend.tested && c.trend.slope_per_iter > 0 &&
        (best == nullptr || c.trend.slope_per_iter > best->trend.slope_per_iter)) {
      best = &c;
    }
  }
  return best;
}

// Where the straggler's own growth sits: host code, a CUDA call, or its kernels on the GPU.
void OwnGrowth(const RankReport& rank, const RangeReport& range, const RankClimb& climb,
               Straggler* s) {
  const double host = climb.host_ms_per_iter, api = climb.api_ms_per_iter,
               gpu = climb.compute_ms_per_iter;
  if (gpu > host && gpu > api) {
    s->where = "gpu";
    s->where_detail = "the GPU time of its own kernels";
    if (const KernelRow* k = FastestGrowing(rank, false); k != nullptr) {
      absl::StrAppend(&s->where_detail, " (", ShortKernel(k->name), " ", PerIter(KernelGrowth(*k)),
                      ")");
    }
  } else if (api > host) {
    s->where = "api";
    const Component* c = FastestGrowing(range.decomposition.by_api);
    s->where_detail = c != nullptr ? absl::StrCat("CUDA calls (", c->name, ")") : "CUDA calls";
  } else {
    s->where = "host";
    s->where_detail = "host code between CUDA calls";
  }
}

// The accumulators that grow on the straggler more than on the ranks that wait, and explain its
// climb.
void Accumulators(const Report& report, const RankReport& rank, const std::string& range,
                  const std::vector<int>& waiting, Straggler* s) {
  for (const Accumulator& merged : report.accumulators) {
    const AccumulatorOnRank* there = nullptr;
    double others = 0;
    for (const AccumulatorOnRank& on : merged.by_rank) {
      if (on.rank == s->rank)
        there = &on;
      else if (std::find(waiting.begin(), waiting.end(), on.rank) != waiting.end())
        others += std::max(0.0, on.growth_per_iter) / static_cast<double>(waiting.size());
    }
    if (there == nullptr || !there->lives ||
        there->growth_per_iter - others < kMostlyThere * there->growth_per_iter) {
      continue;
    }
    bool explains = false;
    for (const Accumulator& own : rank.accumulators) {
      if (own.id == merged.id)
        explains |= ExplainsClimb(rank, own, range, s->own_ms_per_iter);
    }
    if (!explains)
      continue;
    if (s->accumulators.empty()) {
      s->extra_growth_per_iter = there->growth_per_iter - others;
      s->unit = merged.unit;
    }
    s->accumulators.push_back(merged.id);
  }
}

StragglerWait Wait(const RankReport& rank, const RangeReport* range, const RankClimb& climb) {
  StragglerWait w;
  w.rank = climb.rank;
  w.index = climb.index;
  w.climb_pct = climb.trend.change_pct;
  w.wait_ms_per_iter = climb.wait_ms_per_iter;
  w.collective_ms_per_iter = climb.collective_ms_per_iter;
  w.sync_ms_per_iter = climb.sync_ms_per_iter;
  w.collectives_timed = climb.collectives_timed;
  if (const KernelRow* k = FastestGrowing(rank, true); k != nullptr)
    w.collective = k->name;
  if (range != nullptr) {
    const Component* sync = FastestGrowing(range->decomposition.by_sync);
    const Component* api = FastestGrowing(range->decomposition.by_api);
    if (sync != nullptr &&
        (api == nullptr || sync->trend.slope_per_iter >= api->trend.slope_per_iter))
      w.wait_call = sync->name;
    else if (api != nullptr)
      w.wait_call = api->name;
  }
  return w;
}

std::string Growth(double v, const std::string& unit) {
  if (unit == "bytes")
    return absl::StrCat("+", FormatQuantity(v, unit), "/iter");
  return absl::StrFormat("%+.3g %s/iter", v, unit);
}

std::string Story(const Straggler& s) {
  std::string out;
  if (!s.accumulators.empty()) {
    const std::string& id = s.accumulators[0];
    absl::StrAppendFormat(&out, "rank %d %s %s more (%s)", s.rank,
                          s.unit == "handles" ? "keeps" : "grows by",
                          Growth(s.extra_growth_per_iter, s.unit), id);
    if (s.accumulators.size() > 1)
      absl::StrAppendFormat(&out, " and %d more accumulators", s.accumulators.size() - 1);
    absl::StrAppend(&out, "; its ");
  } else {
    absl::StrAppendFormat(
        &out, "rank %d is the straggler, with no accumulator on it to explain it; its ", s.rank);
  }
  absl::StrAppendFormat(&out, "%s climbs %+.1f%% (%s of its own work, in %s); ", s.range,
                        s.climb_pct, PerIter(s.own_ms_per_iter), s.where_detail);
  std::vector<int> ranks;
  double coll = 0;
  std::string kernel, call;
  bool timed = false;
  for (const StragglerWait& w : s.waiting) {
    ranks.push_back(w.rank);
    coll += w.collective_ms_per_iter / static_cast<double>(s.waiting.size());
    if (kernel.empty())
      kernel = ShortKernel(w.collective);
    if (call.empty())
      call = w.wait_call;
    timed |= w.collectives_timed;
  }
  const bool one = ranks.size() == 1;
  if (s.inferred) {
    absl::StrAppendFormat(
        &out,
        "%s %s as much (%s%s) with no accumulator of %s own: taken to wait for it, though no "
        "collective kernels time the wait (a host-side collective such as gloo)",
        RankList(ranks), one ? "climbs" : "climb about", PerIter(s.wait_share * s.own_ms_per_iter),
        one ? "" : " on average", one ? "its" : "their");
    return out;
  }
  absl::StrAppend(&out, RankList(ranks), one ? " waits" : " wait", " for it inside collectives");
  if (timed) {
    absl::StrAppendFormat(&out, ": %s %s GPU time rises %s%s (%.0f%% of rank %d's growth)",
                          one ? "its" : "their", kernel.empty() ? "collective" : kernel,
                          PerIter(coll), one ? "" : " on average", 100 * s.wait_share, s.rank);
  } else {
    absl::StrAppendFormat(&out,
                          ": %s host's wait rises %s%s (%.0f%% of rank %d's growth; the "
                          "collective kernels were not timed)",
                          one ? "its" : "their", PerIter(s.wait_share * s.own_ms_per_iter),
                          one ? "" : " on average", 100 * s.wait_share, s.rank);
  }
  if (!call.empty())
    absl::StrAppend(&out, ", and ", one ? "its host waits" : "their hosts wait", " in ", call);
  return out;
}

}  // namespace

void FindStraggler(Report* report) {
  const RangeReport* found = nullptr;
  for (const RangeReport& r : report->ranges) {
    if (r.by_rank.pattern != "straggler")
      continue;
    const bool iteration = r.name == "(iteration)" || r.name == report->iterations.name;
    if (found == nullptr || iteration)
      found = &r;
    if (iteration)
      break;
  }
  if (found == nullptr)
    return;
  Straggler& s = report->straggler;
  s.found = true;
  s.inferred = found->by_rank.inferred;
  s.rank = found->by_rank.straggler;
  s.range = found->name;
  const RankClimb* climb = nullptr;
  for (const RankClimb& c : found->by_rank.ranks) {
    if (c.rank == s.rank)
      climb = &c;
  }
  s.index = climb->index;
  s.climb_pct = climb->trend.change_pct;
  s.own_ms_per_iter = climb->own_ms_per_iter;
  const RankReport& rank = report->ranks[static_cast<size_t>(s.index)];
  OwnGrowth(rank, *FindRange(rank, found->name), *climb, &s);
  Accumulators(*report, rank, found->name, found->by_rank.waiting, &s);
  double wait = 0;
  for (const RankClimb& c : found->by_rank.ranks) {
    if (c.role != "waits")
      continue;
    const RankReport& other = report->ranks[static_cast<size_t>(c.index)];
    s.waiting.push_back(Wait(other, FindRange(other, found->name), c));
    wait += c.wait_ms_per_iter;
  }
  if (!s.waiting.empty() && s.own_ms_per_iter > 0)
    s.wait_share = wait / static_cast<double>(s.waiting.size()) / s.own_ms_per_iter;
  s.summary = Story(s);
}

}  // namespace cuclimb::analysis::internal
