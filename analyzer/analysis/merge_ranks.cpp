// SPDX-License-Identifier: Apache-2.0
// The merge of several traces (ranks of one job) into one report: the top-level iterations,
// ranges and accumulators (docs/report-schema.md, "Several traces").
#include "analysis/merge_ranks.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "detect/accumulators.h"
#include "detect/trend.h"

namespace cuclimb::analysis {
namespace {

// Mean of the ranks' series over the iterations all of them have.
Series MeanSeries(const std::vector<const Series*>& series) {
  size_t n = SIZE_MAX;
  for (const Series* s : series) n = std::min(n, s->size());
  if (series.empty() || n == SIZE_MAX)
    return {};
  Series out(n, 0.0);
  for (const Series* s : series) {
    for (size_t i = 0; i < n; ++i) out[i] += (*s)[i] / static_cast<double>(series.size());
  }
  return out;
}

}  // namespace

void MergeRanks(const AnalyzeOptions& options, Report* report) {
  const std::vector<RankReport>& ranks = report->ranks;
  if (ranks.size() == 1) {
    report->iterations = ranks[0].iterations;
    report->ranges = ranks[0].ranges;
    report->accumulators = ranks[0].accumulators;
    for (const Accumulator& a : report->accumulators) report->accumulator_ranks[a.id] = {0};
    return;
  }
  // Iterations: the common source, or "mixed"; the smallest count.
  report->iterations = ranks[0].iterations;
  for (const RankReport& r : ranks) {
    if (r.iterations.source != report->iterations.source ||
        r.iterations.name != report->iterations.name) {
      report->iterations.source = "mixed";
    }
    report->iterations.count = std::min(report->iterations.count, r.iterations.count);
  }
  report->iterations.spans.clear();
  report->iterations.why = absl::StrCat("per rank; ", ranks.size(), " ranks, the shortest has ",
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
  for (const auto& [name, list] : by_name) {
    RangeReport m;
    m.name = name;
    std::vector<const Series*> totals, counts;
    const RangeReport* steepest = list[0].second;
    int steepest_rank = list[0].first;
    std::set<std::string> explained;
    for (const auto& [rank, r] : list) {
      totals.push_back(&r->total_ms);
      counts.push_back(&r->count);
      if (r->trend.change_pct > steepest->trend.change_pct) {
        steepest = r;
        steepest_rank = rank;
      }
      explained.insert(r->explained_by.begin(), r->explained_by.end());
    }
    m.tid = steepest->tid;
    m.total_ms = MeanSeries(totals);
    m.count = MeanSeries(counts);
    m.trend = ComputeTrend(m.total_ms, to);
    m.climbing =
        m.trend.tested && m.trend.rising && m.trend.change_pct >= options.thresholds.min_climb_pct;
    m.decomposition = steepest->decomposition;
    m.explained_by.assign(explained.begin(), explained.end());
    if (steepest->climbing) {
      m.where_time_goes =
          absl::StrCat("rank ", steepest_rank, " (steepest): ", steepest->where_time_goes);
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
  // Accumulators: one per id, from the first rank that has it; growth is the mean over ranks.
  std::map<std::string, std::vector<std::pair<int, const Accumulator*>>> by_id;
  for (const RankReport& r : ranks) {
    for (const Accumulator& a : r.accumulators) by_id[a.id].emplace_back(r.index, &a);
  }
  for (const auto& [id, list] : by_id) {
    Accumulator a = *list[0].second;
    double growth = 0, bytes = 0;
    std::set<std::string> explains;
    for (const auto& [rank, acc] : list) {
      growth += acc->growth_per_iter / static_cast<double>(list.size());
      bytes += acc->bytes_per_iter / static_cast<double>(list.size());
      a.p_value = std::max(a.p_value, acc->p_value);
      explains.insert(acc->explains.begin(), acc->explains.end());
      report->accumulator_ranks[id].push_back(rank);
    }
    a.growth_per_iter = growth;
    a.bytes_per_iter = bytes;
    a.explains.assign(explains.begin(), explains.end());
    report->accumulators.push_back(std::move(a));
  }
  RankAccumulators(&report->accumulators);
}

}  // namespace cuclimb::analysis
