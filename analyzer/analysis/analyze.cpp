// SPDX-License-Identifier: Apache-2.0
// The analysis driver: one streaming pass per trace (two when the iteration source chosen on the
// first part of the trace turns out wrong), then assembly, then the merge across ranks.
//
// Why one pass: decoding is the dominant cost (≈20 M events/s on one core), so a separate
// segmentation pass would halve the throughput. Instead the first kPrefixEvents events are
// buffered while SegmentStats watches them; the iteration source is chosen from that prefix, the
// prefix is replayed and the rest streams. SegmentStats keeps watching the whole trace, and if
// the choice made from all of it differs (say the iteration range only appears later), the trace
// is read again with the right choice: correct always, fast in the common case.
#include "analysis/analyze.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analysis/assemble.h"
#include "detect/accumulators.h"
#include "series/aggregator.h"
#include "util/cli.h"
#include "util/status_macros.h"

namespace cuclimb::analysis {
namespace {

constexpr size_t kPrefixEvents = 1u << 17;  // 16 MiB of events
constexpr size_t kMaxPending = 1u << 20;    // events waiting for the boundary thread
constexpr uint64_t kProgressEvery = 1u << 20;

using ReaderFactory = std::function<absl::StatusOr<std::unique_ptr<trace::TraceReader>>()>;

struct PassState {
  std::unique_ptr<trace::TraceReader> reader;
  std::unique_ptr<Symbolizer> symbolizer;
  std::unique_ptr<Aggregator> aggregator;
  std::unique_ptr<Boundaries> boundaries;
  std::deque<trace::Event> pending;

  void Init(std::unique_ptr<trace::TraceReader> r, const SegmentChoice& choice,
            const AnalyzeOptions& options) {
    reader = std::move(r);
    symbolizer = std::make_unique<Symbolizer>(options.symbol_dirs);
    const bool pseudo =
        choice.source == IterationSource::kMark || choice.source == IterationSource::kLaunch;
    aggregator = std::make_unique<Aggregator>(reader.get(), symbolizer.get(),
                                              pseudo ? choice.tid : 0, choice.tid);
    boundaries = std::make_unique<Boundaries>(choice);
  }
  void Feed(const trace::Event& ev) {
    boundaries->Observe(ev);
    if (pending.empty() && boundaries->Ready(ev.ts)) {
      aggregator->Process(ev, boundaries->Slot(ev.ts));
      return;
    }
    pending.push_back(ev);
    Drain(false);
  }
  void Drain(bool all) {
    while (!pending.empty() &&
           (all || pending.size() > kMaxPending || boundaries->Ready(pending.front().ts))) {
      aggregator->Process(pending.front(), boundaries->Slot(pending.front().ts));
      pending.pop_front();
    }
  }
  void Finish() {
    boundaries->Finish();
    Drain(true);
    aggregator->Finish();
  }
};

void Report(const AnalyzeOptions& o, const trace::TraceReader& r, int index, int count, int pass,
            uint64_t events) {
  if (!o.progress)
    return;
  Progress p;
  p.trace_index = index;
  p.trace_count = count;
  p.pass = pass;
  p.bytes_done = r.bytes_consumed();
  p.bytes_total = r.total_bytes();
  p.events = events;
  o.progress(p);
}

// --iteration NAME that names nothing in the trace is the user's mistake, not a reason to
// silently segment some other way: a usage error that lists what repeats instead.
absl::Status UnmatchedIteration(const SegmentStats& stats, const SegmentChoice& choice,
                                const trace::TraceReader& reader) {
  std::string seen;
  for (const SegmentCandidate& c : choice.candidates) {
    if (c.source != IterationSource::kRange && c.source != IterationSource::kMark)
      continue;
    seen += absl::StrCat(seen.empty() ? "" : ", ", "\"", std::string(reader.Str(c.name)), "\" (",
                         c.instances, ")");
  }
  return util::UsageError(
      absl::StrCat("--iteration \"", stats.user_name(), "\": no NVTX range or mark has that name",
                   seen.empty() ? std::string("; the trace has no repeating range or mark")
                                : absl::StrCat("; ranges and marks that repeat: ", seen)));
}

absl::StatusOr<RankReport> AnalyzeOne(const ReaderFactory& open, const std::string& name, int index,
                                      int count, const AnalyzeOptions& options) {
  CUCLIMB_ASSIGN_OR_RETURN(std::unique_ptr<trace::TraceReader> reader, open());
  SegmentStats stats(reader.get(), options.iteration);
  std::vector<trace::Event> prefix;
  trace::Event ev{};
  const size_t prefix_cap = options.prefix_events > 0 ? options.prefix_events : kPrefixEvents;
  while (prefix.size() < prefix_cap && reader->Next(&ev)) {
    stats.Observe(ev);
    prefix.push_back(ev);
  }
  LaunchPeriod launch;
  if (const uint32_t tid = stats.BusiestLaunchThread(); tid != 0) {
    launch = FindLaunchPeriod(stats.threads().at(tid).launch_names);
    launch.tid = tid;
  }
  const SegmentChoice choice = ChooseSegmentation(stats, launch, *reader);
  PassState pass;
  trace::TraceReader* raw = reader.get();
  pass.Init(std::move(reader), choice, options);
  uint64_t events = 0;
  for (const trace::Event& e : prefix) {
    pass.Feed(e);
    if ((++events & (kProgressEvery - 1)) == 0)
      Report(options, *raw, index, count, 1, events);
  }
  prefix = std::vector<trace::Event>();
  stats.EndPrefix();
  while (raw->Next(&ev)) {
    stats.Observe(ev);
    pass.Feed(ev);
    if ((++events & (kProgressEvery - 1)) == 0)
      Report(options, *raw, index, count, 1, events);
  }
  pass.Finish();
  Report(options, *raw, index, count, 1, events);
  SegmentChoice final_choice = ChooseSegmentation(stats, launch, *raw);
  if (final_choice.user_unmatched)
    return UnmatchedIteration(stats, final_choice, *raw);
  bool repassed = false;
  if (!final_choice.SameBoundaries(choice)) {
    repassed = true;
    CUCLIMB_ASSIGN_OR_RETURN(std::unique_ptr<trace::TraceReader> again, open());
    PassState second;
    trace::TraceReader* raw2 = again.get();
    second.Init(std::move(again), final_choice, options);
    events = 0;
    while (raw2->Next(&ev)) {
      second.Feed(ev);
      if ((++events & (kProgressEvery - 1)) == 0)
        Report(options, *raw2, index, count, 2, events);
    }
    second.Finish();
    Report(options, *raw2, index, count, 2, events);
    pass = std::move(second);
  }
  // Same boundaries: final_choice differs from choice only in `why`, which now counts the whole
  // trace rather than the prefix.
  AssemblyInput in;
  in.reader = pass.reader.get();
  in.aggregates = &pass.aggregator->data();
  in.boundaries = pass.boundaries.get();
  in.choice = &final_choice;
  in.symbolizer = pass.symbolizer.get();
  in.options = &options;
  in.path = name;
  in.index = index;
  in.repassed = repassed;
  return Assemble(in);
}

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

void MergeRanks(const AnalyzeOptions& options, analysis::Report* report) {
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
  report->iterations.candidates.clear();  // per rank
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

absl::StatusOr<analysis::Report> AnalyzeAll(const std::vector<ReaderFactory>& factories,
                                            const std::vector<std::string>& names,
                                            const AnalyzeOptions& options) {
  if (factories.empty())
    return absl::InvalidArgumentError("no trace to analyse");
  analysis::Report report;
  report.thresholds = options.thresholds;
  const int count = static_cast<int>(factories.size());
  for (int i = 0; i < count; ++i) {
    auto rank = AnalyzeOne(factories[static_cast<size_t>(i)], names[static_cast<size_t>(i)], i,
                           count, options);
    if (!rank.ok()) {
      absl::Status named(rank.status().code(), absl::StrCat(names[static_cast<size_t>(i)], ": ",
                                                            rank.status().message()));
      // Payloads (the CLI's error kind: usage, output) survive the renaming.
      rank.status().ForEachPayload([&named](absl::string_view url, const absl::Cord& payload) {
        named.SetPayload(url, payload);
      });
      return named;
    }
    report.ranks.push_back(std::move(*rank));
  }
  MergeRanks(options, &report);
  bool climbing = false;
  for (const RangeReport& r : report.ranges) climbing |= r.climbing;
  for (const RankReport& r : report.ranks) {
    climbing |= r.climbing;
    report.partial |= r.trace.partial;
    for (const std::string& n : r.notes) {
      report.notes.push_back(count > 1 ? absl::StrCat("rank ", r.index, ": ", n) : n);
    }
  }
  report.verdict = climbing ? "climbing" : "flat";
  return report;
}

}  // namespace

absl::StatusOr<analysis::Report> Analyze(const std::vector<std::string>& paths,
                                         const AnalyzeOptions& options) {
  std::vector<ReaderFactory> factories;
  for (const std::string& p : paths) {
    factories.push_back([p]() { return trace::TraceReader::Open(p); });
  }
  return AnalyzeAll(factories, paths, options);
}

absl::StatusOr<analysis::Report> AnalyzeBuffers(const std::vector<std::string_view>& traces,
                                                const std::vector<std::string>& names,
                                                const AnalyzeOptions& options) {
  if (names.size() != traces.size())
    return absl::InvalidArgumentError("one name per trace");
  std::vector<ReaderFactory> factories;
  for (std::string_view t : traces) {
    factories.push_back([t]() { return trace::TraceReader::FromBuffer(t); });
  }
  return AnalyzeAll(factories, names, options);
}

}  // namespace cuclimb::analysis
