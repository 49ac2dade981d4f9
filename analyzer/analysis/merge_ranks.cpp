// SPDX-License-Identifier: Apache-2.0
// The merge of several traces (ranks of one job) into one report: the top-level iterations,
// ranges and accumulators, each rank's part in them, and the straggler (docs/report-schema.md,
// "Several traces").
#include "analysis/merge_ranks.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "analysis/rank_climbs.h"
#include "analysis/ranking.h"
#include "analysis/straggler.h"
#include "detect/accumulator_kind.h"
#include "detect/trend.h"

namespace cuclimb::analysis {
namespace {

// Job ranks: the recorded ones (RANK, OMPI_COMM_WORLD_RANK, ...) when every trace has one and no
// two agree, so that the report does not depend on the order of the command line; otherwise
// the traces' positions.
std::vector<int> JobRanks(Report* report) {
  const std::vector<RankReport>& ranks = report->ranks;
  std::vector<int> ids;
  std::set<int64_t> seen;
  int recorded = 0;
  for (const RankReport& r : ranks) {
    recorded += r.process.rank >= 0;
    seen.insert(r.process.rank);
  }
  const bool usable = recorded == static_cast<int>(ranks.size()) && seen.size() == ranks.size();
  for (const RankReport& r : ranks)
    ids.push_back(usable ? static_cast<int>(r.process.rank) : r.index);
  if (!usable && recorded > 0 && ranks.size() > 1) {
    report->notes.push_back(
        recorded < static_cast<int>(ranks.size())
            ? "some traces record no job rank: ranks are numbered by their position on the "
              "command line"
            : "several traces record the same job rank: ranks are numbered by their position on "
              "the command line");
  }
  return ids;
}

// Which iteration of each trace is the job's aligned iteration 0, and how many are common to all.
// By the iterations' NVTX payloads (the program's own step number) when each trace numbers its
// iterations consecutively, so that a rank whose recording began later lines up; otherwise by
// index from the first.
struct Alignment {
  std::vector<size_t> offset;
  size_t count = 0;
  bool by_payload = false;
};

Alignment Align(const std::vector<RankReport>& ranks) {
  Alignment a;
  a.offset.assign(ranks.size(), 0);
  a.count = SIZE_MAX;
  for (const RankReport& r : ranks)
    a.count = std::min(a.count, static_cast<size_t>(std::max<int64_t>(r.iterations.count, 0)));
  int64_t start = INT64_MIN, end = INT64_MAX;
  for (const RankReport& r : ranks) {
    const std::vector<IterationSpan>& s = r.iterations.spans;
    if (s.empty() || static_cast<int64_t>(s.size()) != r.iterations.count)
      return a;
    for (size_t i = 1; i < s.size(); ++i) {
      if (s[i].payload != s[0].payload + static_cast<int64_t>(i))
        return a;
    }
    start = std::max(start, s[0].payload);
    end = std::min(end, s[0].payload + static_cast<int64_t>(s.size()));
  }
  if (end <= start)
    return a;
  for (size_t t = 0; t < ranks.size(); ++t)
    a.offset[t] = static_cast<size_t>(start - ranks[t].iterations.spans[0].payload);
  a.count = static_cast<size_t>(end - start);
  a.by_payload = true;
  return a;
}

// Mean of the ranks' series over the aligned iterations; `series` are (trace index, series).
Series MeanSeries(const std::vector<std::pair<int, const Series*>>& series, const Alignment& al) {
  if (series.empty())
    return {};
  size_t n = al.count;
  for (const auto& [t, s] : series) {
    const size_t off = al.offset[static_cast<size_t>(t)];
    n = std::min(n, s->size() > off ? s->size() - off : 0);
  }
  Series out(n, 0.0);
  for (const auto& [t, s] : series) {
    const size_t off = al.offset[static_cast<size_t>(t)];
    for (size_t i = 0; i < n; ++i) out[i] += (*s)[off + i] / static_cast<double>(series.size());
  }
  return out;
}

// The series a rank keeps for an accumulator candidate of `kind` and `key`, or null (handle kinds
// have none per call site).
const StateSeries* CandidateSeries(const RankReport& r, const std::string& kind,
                                   const std::string& key, bool bytes) {
  const auto known = AccumulatorKindNamed(kind);
  if (!known)
    return nullptr;
  const CandidateSeriesNames& names = Info(*known).series;
  const std::string_view metric = bytes ? names.bytes_metric : names.metric;
  if (metric.empty())
    return nullptr;
  const std::string dimension = names.dimension,
                    k = names.key_has_kind ? absl::StrCat(kind, ": ", key) : key;
  for (const StateSeries& s : r.state) {
    if (s.metric == metric && s.dimension == dimension && s.key == k)
      return &s;
  }
  return nullptr;
}

// Where the accumulator `merged` lives, rank by rank; on a rank where it was not accepted, the
// growth of its candidate series there (usually none).
std::vector<AccumulatorOnRank> AccumulatorByRank(const Accumulator& merged,
                                                 const std::vector<RankReport>& ranks,
                                                 const std::vector<int>& job_ranks) {
  std::vector<AccumulatorOnRank> out;
  for (size_t t = 0; t < ranks.size(); ++t) {
    AccumulatorOnRank on;
    on.rank = job_ranks[t];
    on.index = static_cast<int>(t);
    for (const Accumulator& a : ranks[t].accumulators) {
      if (a.id != merged.id)
        continue;
      on.lives = on.measured = true;
      on.growth_per_iter = a.growth_per_iter;
      on.bytes_per_iter = a.bytes_per_iter;
      on.p_value = a.p_value;
      on.explains = a.explains;
    }
    if (!on.lives) {
      if (const StateSeries* s = CandidateSeries(ranks[t], merged.kind, merged.key, false)) {
        on.measured = true;
        on.growth_per_iter = s->trend.tested ? s->trend.slope_per_iter : 0;
        on.p_value = s->trend.p_value;
        if (const StateSeries* b = CandidateSeries(ranks[t], merged.kind, merged.key, true))
          on.bytes_per_iter = b->trend.tested ? b->trend.slope_per_iter : 0;
      }
    }
    out.push_back(std::move(on));
  }
  std::sort(out.begin(), out.end(),
            [](const AccumulatorOnRank& x, const AccumulatorOnRank& y) { return x.rank < y.rank; });
  return out;
}

}  // namespace

void MergeRanks(const AnalyzeOptions& options, Report* report) {
  const std::vector<RankReport>& ranks = report->ranks;
  if (ranks.size() == 1) {
    report->job_ranks = {0};
    report->iterations = ranks[0].iterations;
    report->ranges = ranks[0].ranges;
    report->accumulators = ranks[0].accumulators;
    for (const Accumulator& a : report->accumulators) report->accumulator_ranks[a.id] = {0};
    return;
  }
  report->job_ranks = JobRanks(report);
  const std::vector<int>& job_ranks = report->job_ranks;
  // Iterations: the common source, or "mixed"; the iterations common to all ranks.
  const Alignment al = Align(ranks);
  report->iterations = ranks[0].iterations;
  for (const RankReport& r : ranks) {
    if (r.iterations.source != report->iterations.source ||
        r.iterations.name != report->iterations.name) {
      report->iterations.source = "mixed";
    }
  }
  report->iterations.count = static_cast<int64_t>(al.count);
  report->iterations.spans.clear();
  report->iterations.candidates.clear();  // per rank
  bool shifted = false;
  for (size_t t = 0; t < ranks.size(); ++t)
    shifted |= al.offset[t] != 0 || ranks[t].iterations.count != ranks[0].iterations.count;
  report->iterations.why =
      al.by_payload && shifted
          ? absl::StrCat("per rank; ", ranks.size(),
                         " ranks aligned by their iterations' NVTX payloads: ", al.count,
                         " iterations are common to all")
          : absl::StrCat("per rank; ", ranks.size(), " ranks, the shortest has ",
                         report->iterations.count, " iterations");
  // Ranges: the mean over the ranks that have the range.
  std::map<std::string, std::vector<std::pair<int, const RangeReport*>>> by_name;
  for (const RankReport& r : ranks) {
    for (const RangeReport& rr : r.ranges) by_name[rr.name].emplace_back(r.index, &rr);
  }
  TrendOptions to;
  to.alpha = options.thresholds.alpha;
  to.min_iterations = options.thresholds.min_iterations;
  to.warmup = options.thresholds.warmup;
  to.max_points = 256;
  to.max_warmup_share = options.thresholds.max_warmup_share;
  std::vector<internal::RankGpuTime> gpu;
  for (const RankReport& r : ranks) gpu.push_back(internal::GpuTimeOf(r));
  for (const auto& [name, list] : by_name) {
    RangeReport m;
    m.name = name;
    std::vector<std::pair<int, const Series*>> totals, counts;
    const RangeReport* steepest = list[0].second;
    int steepest_rank = list[0].first;
    std::set<std::string> explained;
    for (const auto& [index, r] : list) {
      totals.emplace_back(index, &r->total_ms);
      counts.emplace_back(index, &r->count);
      if (r->trend.change_pct > steepest->trend.change_pct) {
        steepest = r;
        steepest_rank = index;
      }
      explained.insert(r->explained_by.begin(), r->explained_by.end());
    }
    // The rank that speaks for the range: the straggler, whose own work the others wait for,
    // when there is one; otherwise the rank where the range climbs most.
    m.by_rank = internal::ClimbsByRank(name, ranks, job_ranks, gpu, to);
    const char* why = "steepest";
    if (m.by_rank.pattern == "straggler") {
      for (const auto& [index, r] : list) {
        if (job_ranks[static_cast<size_t>(index)] == m.by_rank.straggler) {
          steepest = r;
          steepest_rank = index;
          why = "the straggler";
        }
      }
    }
    m.tid = steepest->tid;
    m.total_ms = MeanSeries(totals, al);
    m.count = MeanSeries(counts, al);
    m.trend = ComputeTrend(m.total_ms, to);
    m.climbing =
        m.trend.tested && m.trend.rising && m.trend.change_pct >= options.thresholds.min_climb_pct;
    // Materiality, steadiness and cause come from that rank.
    m.iteration_share_pct = steepest->iteration_share_pct;
    m.material = steepest->material;
    m.steady = steepest->steady;
    m.climb_start_iteration = steepest->climb_start_iteration;
    m.cause = steepest->cause;
    if (!m.cause.summary.empty() && ranks.size() > 1) {
      m.cause.summary = absl::StrCat("on rank ", job_ranks[static_cast<size_t>(steepest_rank)],
                                     " (", why, "): ", m.cause.summary);
    }
    m.sets_verdict = m.climbing && steepest->sets_verdict;
    m.decomposition = steepest->decomposition;
    m.explained_by.assign(explained.begin(), explained.end());
    if (steepest->climbing) {
      m.where_time_goes = absl::StrCat("rank ", job_ranks[static_cast<size_t>(steepest_rank)], " (",
                                       why, "): ", steepest->where_time_goes);
    }
    report->ranges.push_back(std::move(m));
  }
  std::sort(report->ranges.begin(), report->ranges.end(),
            [](const RangeReport& x, const RangeReport& y) {
              if (x.climbing != y.climbing)
                return x.climbing;
              if (x.trend.first != y.trend.first)
                return x.trend.first > y.trend.first;
              return x.name < y.name;
            });
  // Accumulators: one per id, from the first rank that has it; growth is the mean over the
  // ranks where it lives, and by_rank says where that is.
  std::map<std::string, std::vector<std::pair<int, const Accumulator*>>> by_id;
  for (const RankReport& r : ranks) {
    for (const Accumulator& a : r.accumulators) by_id[a.id].emplace_back(r.index, &a);
  }
  for (const auto& [id, list] : by_id) {
    Accumulator a = *list[0].second;
    double growth = 0, bytes = 0;
    std::set<std::string> explains, likely;
    for (const auto& [index, acc] : list) {
      growth += acc->growth_per_iter / static_cast<double>(list.size());
      bytes += acc->bytes_per_iter / static_cast<double>(list.size());
      a.p_value = std::max(a.p_value, acc->p_value);
      explains.insert(acc->explains.begin(), acc->explains.end());
      likely.insert(acc->likely_cause_of.begin(), acc->likely_cause_of.end());
      report->accumulator_ranks[id].push_back(job_ranks[static_cast<size_t>(index)]);
    }
    std::sort(report->accumulator_ranks[id].begin(), report->accumulator_ranks[id].end());
    a.growth_per_iter = growth;
    a.bytes_per_iter = bytes;
    a.explains.assign(explains.begin(), explains.end());
    for (const std::string& x : explains) likely.erase(x);
    a.likely_cause_of.assign(likely.begin(), likely.end());
    a.by_rank = AccumulatorByRank(a, ranks, job_ranks);
    report->accumulators.push_back(std::move(a));
  }
  RankAccumulators(&report->accumulators);
  internal::FindStraggler(report);
}

}  // namespace cuclimb::analysis
