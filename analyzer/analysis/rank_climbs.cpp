// SPDX-License-Identifier: Apache-2.0
// Per-rank climbs of a range and the pattern across ranks.
#include "analysis/rank_climbs.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "detect/collectives.h"
#include "detect/stats.h"
#include "report/text_report.h"

namespace cuclimb::analysis::internal {
namespace {

// The straggler's own work carries at least this share of its range's growth.
constexpr double kOwnShare = 0.5;
// A rank waits for it when waiting carries at least this share of the rank's growth ...
constexpr double kWaitShare = 0.5;
// ... and amounts to at least this share of the straggler's own growth (a trace of jitter in the
// collectives is not waiting for anyone) ...
constexpr double kWaitOfStraggler = 0.25;
// ... and the rank's own work grows by at most this share of the straggler's.
constexpr double kOwnOfStraggler = 0.5;
// A rank's host waits for peers when its collectives' GPU time grows by at least this share of
// the host's wait.
constexpr double kGpuConfirms = 0.5;
// A range of a rank carries the rank's climb when it grows by at least this share of it.
constexpr double kCarriesClimb = 0.5;

double Slope(const Component& c) {
  return c.trend.tested ? c.trend.slope_per_iter : 0;
}

// Growth per iteration of a GPU time series, from iteration `from` on, over the timed iterations
// only: carrying levels across untimed ones would add ties that pull a Theil–Sen slope to zero.
// Every iteration timed: the usual trend (binned when long). Otherwise Theil–Sen on the timed
// points (binned into kMaxPoints when there are more). Sampled timing is dense at the start
// (iterations 1, 2, 4, …) and sparse after, so a long warm-up can leave too few points: then the
// points from the second iteration on are used, the first carrying the set-up.
double GpuSlope(const Series& s, const std::vector<bool>& timed, int64_t from,
                const TrendOptions& options) {
  constexpr size_t kMinTimedPoints = 5, kMaxPoints = 256;
  std::vector<double> x, y;
  auto collect = [&](size_t start) {
    x.clear();
    y.clear();
    for (size_t i = start; i < s.size(); ++i) {
      if (i < timed.size() && timed[i]) {
        x.push_back(static_cast<double>(i));
        y.push_back(s[i]);
      }
    }
  };
  collect(static_cast<size_t>(std::max<int64_t>(from, 0)));
  if (x.size() < kMinTimedPoints && from > 1) {
    from = 1;
    collect(1);
  }
  if (x.size() < kMinTimedPoints)
    return 0;
  if (x.size() + static_cast<size_t>(std::max<int64_t>(from, 0)) == s.size()) {
    TrendOptions o = options;
    o.warmup = from;
    const Trend t = ComputeTrend(s, o);
    return t.tested ? t.slope_per_iter : 0;
  }
  if (x.size() > kMaxPoints) {
    std::vector<double> bx(kMaxPoints, 0.0), by(kMaxPoints, 0.0), count(kMaxPoints, 0.0);
    for (size_t k = 0; k < x.size(); ++k) {
      const size_t b = k * kMaxPoints / x.size();
      bx[b] += x[k];
      by[b] += y[k];
      count[b] += 1;
    }
    for (size_t b = 0; b < kMaxPoints; ++b) {
      bx[b] /= count[b];
      by[b] /= count[b];
    }
    x = std::move(bx);
    y = std::move(by);
  }
  return stats::TheilSen(x, y).slope;
}

const RangeReport* FindRange(const RankReport& rank, const std::string& name) {
  for (const RangeReport& r : rank.ranges) {
    if (r.name == name)
      return &r;
  }
  return nullptr;
}

RankClimb Measure(const RangeReport& range, const RankGpuTime& gpu, const TrendOptions& options) {
  RankClimb c;
  c.present = true;
  c.trend = range.trend;
  c.climbing = range.climbing;
  const Decomposition& d = range.decomposition;
  c.wall_ms_per_iter = Slope(d.wall);
  c.host_ms_per_iter = Slope(d.host);
  c.api_ms_per_iter = Slope(d.api);
  c.sync_ms_per_iter = Slope(d.sync);
  // The range's own warm-up cut, so that the slopes compare.
  c.collectives = gpu.collectives;
  c.collectives_timed = gpu.collectives_timed;
  c.collective_ms_per_iter = GpuSlope(gpu.collective_ms, gpu.timed, range.trend.warmup, options);
  c.compute_ms_per_iter = GpuSlope(gpu.compute_ms, gpu.timed, range.trend.warmup, options);
  // Waiting for a peer shows twice: the collectives' GPU time grows (they spin) and the range's
  // host waits as long in synchronization or blocking calls, bounded by the range's own growth
  // (a rank whose collectives spin longer but whose range does not wait, because the wait lands
  // in another range, does not wait in this one). The host's wait is measured every iteration;
  // the GPU's only where kernels were timed, often a sample. So the GPU says whether the host
  // waits for peers (its collectives grow by at least kGpuConfirms of the host's wait, rather
  // than its own kernels getting slower) and the host says how long; a GPU growth short of that
  // bounds the wait. Without kernel timing the host's wait is all there is to go by.
  const double host_wait = std::min(std::max(0.0, c.sync_ms_per_iter + c.api_ms_per_iter),
                                    std::max(0.0, c.wall_ms_per_iter));
  if (!c.collectives)
    c.wait_ms_per_iter = 0;
  else if (!c.collectives_timed || c.collective_ms_per_iter >= kGpuConfirms * host_wait)
    c.wait_ms_per_iter = host_wait;
  else
    c.wait_ms_per_iter = std::max(0.0, c.collective_ms_per_iter);
  c.own_ms_per_iter = c.wall_ms_per_iter - c.wait_ms_per_iter;
  return c;
}

// Whether some accumulator of the rank explains its climb of the range.
bool AccumulatorExplains(const RankReport& rank, const std::string& range, double growth) {
  for (const Accumulator& a : rank.accumulators) {
    if (ExplainsClimb(rank, a, range, growth))
      return true;
  }
  return false;
}

// Without collective kernels (gloo and other host-side collectives, which wait in host code with
// no CUDA call to show it), waiting cannot be measured, but ranks in lock step still all climb
// alike. When exactly one of them has an accumulator that explains its climb and the others,
// which climb at least a quarter as much, have none, they are taken to wait for it: the
// straggler is inferred, and each waiting rank's whole growth of the range counts as waiting.
void InferStraggler(const std::string& name, const std::vector<RankReport>& ranks,
                    const std::vector<RankClimb*>& present, RangeByRank* b) {
  RankClimb* s = nullptr;
  std::vector<RankClimb*> others;
  for (RankClimb* c : present) {
    if (c->collectives)
      return;
    if (!c->climbing)
      continue;
    if (AccumulatorExplains(ranks[static_cast<size_t>(c->index)], name, c->wall_ms_per_iter)) {
      if (s != nullptr)
        return;
      s = c;
    } else {
      others.push_back(c);
    }
  }
  if (s == nullptr || s->wall_ms_per_iter <= 0)
    return;
  std::vector<RankClimb*> waiting;
  for (RankClimb* c : others) {
    if (c->wall_ms_per_iter >= kWaitOfStraggler * s->wall_ms_per_iter)
      waiting.push_back(c);
  }
  if (waiting.empty() || 2 * waiting.size() + 1 < present.size())
    return;
  b->pattern = "straggler";
  b->inferred = true;
  b->straggler = s->rank;
  s->role = "straggler";
  for (RankClimb* c : waiting) {
    c->role = "waits";
    c->wait_ms_per_iter = c->wall_ms_per_iter;
    c->own_ms_per_iter = 0;
    b->waiting.push_back(c->rank);
  }
}

std::string PerIter(double ms) {
  return absl::StrCat(ms >= 0 ? "+" : "-", FormatMs(std::fabs(ms)), "/iter");
}

std::string Summary(const RangeByRank& b, const std::vector<RankClimb*>& present) {
  std::vector<int> flat;
  for (const RankClimb* c : present) {
    if (!c->climbing)
      flat.push_back(c->rank);
  }
  if (b.pattern == "straggler") {
    const RankClimb* s = nullptr;
    double wait = 0;
    for (const RankClimb& c : b.ranks) {
      if (c.rank == b.straggler)
        s = &c;
      if (c.role == "waits")
        wait += c.wait_ms_per_iter / static_cast<double>(b.waiting.size());
    }
    if (b.inferred) {
      return absl::StrFormat(
          "%s is the straggler (inferred): an accumulator on it explains its climb (%s, %+.1f%%); "
          "%s %s as much with none of %s own, and no collective kernels to time the wait "
          "(host-side collectives such as gloo)",
          RankList({b.straggler}), PerIter(s->own_ms_per_iter), s->trend.change_pct,
          RankList(b.waiting), b.waiting.size() == 1 ? "climbs" : "climb about",
          b.waiting.size() == 1 ? "its" : "their");
    }
    return absl::StrFormat(
        "%s is the straggler: its own work grows %s (the range climbs %+.1f%% there); %s %s for "
        "it inside collectives, %s%s",
        RankList({b.straggler}), PerIter(s->own_ms_per_iter), s->trend.change_pct,
        RankList(b.waiting), b.waiting.size() == 1 ? "waits" : "wait", PerIter(wait),
        b.waiting.size() == 1 ? "" : " on average");
  }
  if (b.pattern == "none")
    return "flat on every rank";
  if (b.pattern == "all") {
    double own = 0, wait = 0, wall = 0;
    for (const RankClimb* c : present) {
      own += c->own_ms_per_iter;
      wait += c->wait_ms_per_iter;
      wall += c->wall_ms_per_iter / static_cast<double>(present.size());
    }
    bool collectives = false;
    for (const RankClimb* c : present) collectives |= c->collectives;
    if (!collectives) {
      return absl::StrFormat(
          "climbs on all %d ranks alike (%s on average); they launch no collective kernels "
          "(host-side collectives such as gloo, or none), so whether a rank waits for another "
          "cannot be measured",
          present.size(), PerIter(wall));
    }
    return absl::StrFormat(
        "climbs on all %d ranks alike (%s on average), %s", present.size(), PerIter(wall),
        own >= wait ? "in each rank's own work: a shared cause, no straggler"
                    : "waiting inside collectives on every rank: the rank they wait for is not "
                      "among these traces, or the collectives themselves got slower");
  }
  std::string out =
      absl::StrCat("climbs on ", RankList(b.climbing), b.climbing.size() == 1 ? " only" : "");
  if (b.climbing.size() == 1) {
    for (const RankClimb* c : present) {
      if (c->climbing)
        absl::StrAppendFormat(&out, " (%+.1f%%)", c->trend.change_pct);
    }
  }
  if (!flat.empty())
    absl::StrAppend(&out, "; flat on ", RankList(flat));
  return out;
}

}  // namespace

RankGpuTime GpuTimeOf(const RankReport& rank) {
  RankGpuTime g;
  const size_t n = static_cast<size_t>(std::max<int64_t>(rank.iterations.count, 0));
  g.collective_ms.assign(n, 0.0);
  g.compute_ms.assign(n, 0.0);
  g.timed.assign(n, false);
  for (const KernelRow& k : rank.kernels) {
    const bool collective = IsCollectiveKernel(k.name);
    g.collectives |= collective && k.launches > 0;
    g.collectives_timed |= collective && k.executions > 0;
    Series& into = collective ? g.collective_ms : g.compute_ms;
    for (size_t i = 0; i < n && i < k.gpu_ms_per_iter.size(); ++i) {
      into[i] += k.gpu_ms_per_iter[i];
      g.timed[i] = g.timed[i] || k.gpu_ms_per_iter[i] > 0;
    }
  }
  return g;
}

RangeByRank ClimbsByRank(const std::string& name, const std::vector<RankReport>& ranks,
                         const std::vector<int>& job_ranks, const std::vector<RankGpuTime>& gpu,
                         const TrendOptions& options) {
  RangeByRank b;
  for (size_t t = 0; t < ranks.size(); ++t) {
    const RangeReport* range = FindRange(ranks[t], name);
    RankClimb c = range != nullptr ? Measure(*range, gpu[t], options) : RankClimb{};
    c.rank = job_ranks[t];
    c.index = static_cast<int>(t);
    c.role = !c.present ? "absent" : (c.trend.tested ? "flat" : "untested");
    b.ranks.push_back(std::move(c));
  }
  std::sort(b.ranks.begin(), b.ranks.end(),
            [](const RankClimb& x, const RankClimb& y) { return x.rank < y.rank; });
  std::vector<RankClimb*> present;
  for (RankClimb& c : b.ranks) {
    if (c.present && c.trend.tested)
      present.push_back(&c);
    if (c.climbing) {
      c.role = "climbs";
      b.climbing.push_back(c.rank);
    }
  }
  // The straggler: the climbing rank whose own work grows most, when that is most of its growth
  // and at least half of the other ranks wait for it.
  RankClimb* s = nullptr;
  for (RankClimb* c : present) {
    if (c->climbing && (s == nullptr || c->own_ms_per_iter > s->own_ms_per_iter))
      s = c;
  }
  if (s != nullptr && s->own_ms_per_iter > 0 &&
      s->own_ms_per_iter >= kOwnShare * s->wall_ms_per_iter) {
    std::vector<RankClimb*> waiting;
    for (RankClimb* c : present) {
      if (c != s && c->wait_ms_per_iter >= kWaitShare * c->wall_ms_per_iter &&
          c->wait_ms_per_iter >= kWaitOfStraggler * s->own_ms_per_iter &&
          c->own_ms_per_iter <= kOwnOfStraggler * s->own_ms_per_iter) {
        waiting.push_back(c);
      }
    }
    if (!waiting.empty() && 2 * waiting.size() + 1 >= present.size()) {
      b.pattern = "straggler";
      b.straggler = s->rank;
      s->role = "straggler";
      for (RankClimb* c : waiting) {
        c->role = "waits";
        b.waiting.push_back(c->rank);
      }
    }
  }
  if (b.pattern.empty())
    InferStraggler(name, ranks, present, &b);
  if (b.pattern.empty()) {
    if (b.climbing.empty())
      b.pattern = "none";
    else if (present.size() >= 2 && b.climbing.size() == present.size())
      b.pattern = "all";
    else
      b.pattern = b.climbing.size() == 1 ? "one" : "some";
  }
  b.summary = Summary(b, present);
  return b;
}

bool ExplainsClimb(const RankReport& rank, const Accumulator& a, const std::string& range,
                   double growth_ms_per_iter) {
  // The part of the step where the extra work sits (the forward, where kept tensors cost host
  // time) follows the accumulator more cleanly than the whole step, whose time still has the
  // other ranks' stalls in it (rank 0's checkpoint stalls the next all-reduce everywhere).
  for (const Explanation& e : a.explanations) {
    if (e.verdict != kExplains && e.verdict != kLikelyCause)
      continue;
    if (e.range == range)
      return true;
    const RangeReport* part = FindRange(rank, e.range);
    if (part != nullptr && part->climbing &&
        part->trend.slope_per_iter >= kCarriesClimb * growth_ms_per_iter) {
      return true;
    }
  }
  return false;
}

std::string RankList(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    absl::StrAppend(&out, i ? ", " : "", ranks[i]);
    if (j >= i + 2)
      absl::StrAppend(&out, "–", ranks[j]);
    else if (j == i + 1)
      absl::StrAppend(&out, ", ", ranks[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace cuclimb::analysis::internal
