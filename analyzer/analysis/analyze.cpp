// SPDX-License-Identifier: Apache-2.0
// The analysis driver: one streaming pass per trace (two when the iteration source chosen on the
// first part of the trace turns out wrong), then assembly, then the merge across ranks
// (merge_ranks.h).
//
// Why one pass: decoding is the dominant cost (≈20 M events/s on one core), so a separate
// segmentation pass would halve the throughput. Instead the first kPrefixEvents events are
// buffered while SegmentStats watches them; the iteration source is chosen from that prefix, the
// prefix is replayed and the rest streams. SegmentStats keeps watching the whole trace, and if
// the choice made from all of it differs (say the iteration range only appears later), the trace
// is read again with the right choice: correct always, fast in the common case.
#include "analysis/analyze.h"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <optional>
#include <system_error>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analysis/assemble.h"
#include "analysis/event_pass.h"
#include "analysis/merge_ranks.h"
#include "analysis/thread_shares.h"
#include "series/aggregator.h"
#include "util/args.h"
#include "util/cli.h"
#include "util/parallel_for.h"
#include "util/status_macros.h"

namespace cuclimb::analysis {
namespace {

constexpr size_t kPrefixEvents = 1u << 17;  // 16 MiB of events
constexpr uint64_t kProgressEvery = 1u << 20;
constexpr size_t kBatchEvents = 256;  // 32 KiB of events: read, then handled while in cache

using ReaderFactory = std::function<absl::StatusOr<std::unique_ptr<trace::TraceReader>>()>;

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
  std::vector<std::string> names;
  for (const SegmentCandidate& c : choice.candidates) {
    if (c.source != IterationSource::kRange && c.source != IterationSource::kMark)
      continue;
    names.emplace_back(reader.Str(c.name));
    seen += absl::StrCat(seen.empty() ? "" : ", ", "\"", names.back(), "\" (", c.instances, ")");
  }
  std::string message =
      absl::StrCat("--iteration ", stats.user_name(), ": no NVTX range or mark has that name");
  if (const std::string near = util::ClosestMatch(stats.user_name(), names); !near.empty())
    absl::StrAppend(&message, "; did you mean '", near, "'?");
  absl::StrAppend(&message, seen.empty() ? std::string("; the trace has no repeating range or mark")
                                         : absl::StrCat("; ranges and marks that repeat: ", seen));
  return util::UsageError(message);
}

// Prefetch workers a trace borrows at most from the threads of its job that came free. The
// trace's own thread goes on reading and aggregating; what the workers can take from it is the
// checking, decompressing and decoding of the chunks ahead, which two keep up with.
constexpr int kMostBorrowed = 2;

// Threads that a trace under way borrows from its job's spare ones (thread_shares.h) as prefetch
// workers, and gives back once its reading is done.
class BorrowedWorkers {
 public:
  explicit BorrowedWorkers(SpareThreads* spare) : spare_(spare) {}
  ~BorrowedWorkers() { GiveBack(); }
  // From the reading thread, between two reads: a free thread of the job joins `reader`.
  void Borrow(trace::TraceReader* reader) {
    if (spare_ == nullptr || borrowed_ >= kMostBorrowed || spare_->free() == 0 ||
        !spare_->TryTake()) {
      return;
    }
    reader->Prefetch(1);
    ++borrowed_;
  }
  // The reading is done: the workers only wait now (they end with their reader).
  void GiveBack() {
    if (spare_ != nullptr)
      spare_->Give(borrowed_);
    borrowed_ = 0;
  }

 private:
  SpareThreads* spare_;
  int borrowed_ = 0;
};

// helpers: threads this trace may use besides the calling one. The first runs the aggregation
// (AggregationThread), the second the allocation family's aggregation, the others check,
// decompress and decode chunks ahead (TraceReader::Prefetch, TakeBatch). More prefetch workers
// may join from `spare` while the trace is read.
absl::StatusOr<RankReport> AnalyzeOne(const ReaderFactory& open, const std::string& name, int index,
                                      int count, int helpers, SpareThreads* spare,
                                      const AnalyzeOptions& options,
                                      const FrameClassifier& classifier) {
  const int aggregation_threads = std::min(helpers, 2);
  const int prefetch = helpers - aggregation_threads;
  CUCLIMB_ASSIGN_OR_RETURN(std::unique_ptr<trace::TraceReader> reader, open());
  reader->Prefetch(prefetch);
  SegmentStats stats(reader.get(), options.iteration);
  // Events are read in batches: one virtual call and one decoder entry per batch, not per event.
  std::vector<trace::Event> prefix;
  const size_t prefix_cap = options.prefix_events > 0 ? options.prefix_events : kPrefixEvents;
  while (prefix.size() < prefix_cap) {
    const size_t have = prefix.size();
    prefix.resize(have + std::min(kBatchEvents, prefix_cap - have));
    const size_t n = reader->Read(prefix.data() + have, prefix.size() - have);
    prefix.resize(have + n);
    if (n == 0)
      break;
  }
  for (const trace::Event& e : prefix) stats.Observe(e);
  LaunchPeriod launch;
  if (const uint32_t tid = stats.BusiestLaunchThread(); tid != 0) {
    launch = FindLaunchPeriod(stats.threads().at(tid).launch_names);
    launch.tid = tid;
  }
  const SegmentChoice choice = ChooseSegmentation(stats, launch, *reader);
  trace::TraceReader* raw = reader.get();
  auto pass = std::make_unique<EventPass>(std::move(reader), choice, options, classifier,
                                          aggregation_threads);
  uint64_t events = 0;
  for (size_t i = 0; i < prefix.size(); i += kBatchEvents) {
    const size_t n = std::min(kBatchEvents, prefix.size() - i);
    pass->Feed(prefix.data() + i, n);
    const uint64_t before = events;
    events += n;
    if ((before ^ events) >= kProgressEvery)  // crossed a multiple of kProgressEvery
      Report(options, *raw, index, count, 1, events);
  }
  prefix = std::vector<trace::Event>();
  stats.EndPrefix();
  BorrowedWorkers borrowed(spare);
  while (const size_t n = pass->Read(&stats)) {
    borrowed.Borrow(raw);
    const uint64_t before = events;
    events += n;
    if ((before ^ events) >= kProgressEvery)
      Report(options, *raw, index, count, 1, events);
  }
  pass->Finish();
  borrowed.GiveBack();
  Report(options, *raw, index, count, 1, events);
  SegmentChoice final_choice = ChooseSegmentation(stats, launch, *raw);
  if (final_choice.user_unmatched)
    return UnmatchedIteration(stats, final_choice, *raw);
  bool repassed = false;
  if (!final_choice.SameBoundaries(choice)) {
    repassed = true;
    CUCLIMB_ASSIGN_OR_RETURN(std::unique_ptr<trace::TraceReader> again, open());
    again->Prefetch(prefetch);
    trace::TraceReader* raw2 = again.get();
    pass.reset();  // one pass's threads and batches at a time
    pass = std::make_unique<EventPass>(std::move(again), final_choice, options, classifier,
                                       aggregation_threads);
    events = 0;
    while (const size_t n = pass->Read(nullptr)) {
      borrowed.Borrow(raw2);
      const uint64_t before = events;
      events += n;
      if ((before ^ events) >= kProgressEvery)
        Report(options, *raw2, index, count, 2, events);
    }
    pass->Finish();
    borrowed.GiveBack();
    Report(options, *raw2, index, count, 2, events);
  }
  // Same boundaries: final_choice differs from choice only in `why`, which now counts the whole
  // trace rather than the prefix.
  if (options.footprint)
    options.footprint(index, MeasureFootprint(pass->aggregator().data()));
  AssemblyInput in;
  in.reader = pass->reader();
  in.aggregates = &pass->aggregator().data();
  in.boundaries = &pass->boundaries();
  in.choice = &final_choice;
  in.symbolizer = pass->symbolizer();
  in.options = &options;
  in.path = name;
  in.index = index;
  in.repassed = repassed;
  in.jobs = helpers + 1;
  return Assemble(in);
}

// Analyses every trace into (*ranks)[i]: on the calling thread, or with options.jobs > 1 on up to
// that many threads, each taking the next trace not yet taken, the largest first (`bytes`, 0 where
// unknown); threads beyond the number of traces run the traces' aggregation and prefetch chunks
// for their readers (AnalyzeOne, thread_shares.h). Each trace is analysed alone (its own reader,
// symbolizer and aggregator), so the order in which they are taken or finish changes nothing.
void AnalyzeRanks(const std::vector<ReaderFactory>& factories,
                  const std::vector<std::string>& names, const std::vector<uint64_t>& bytes,
                  const AnalyzeOptions& options, const FrameClassifier& classifier,
                  std::vector<std::optional<absl::StatusOr<RankReport>>>* ranks) {
  const int count = static_cast<int>(factories.size());
  const int jobs = std::max(1, options.jobs);
  const int workers = std::min(jobs, count);
  AnalyzeOptions shared = options;
  std::mutex progress_mutex;
  if (workers > 1 && options.progress) {
    shared.progress = [&options, &progress_mutex](const Progress& p) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      options.progress(p);
    };
  }
  if (workers > 1 && options.footprint) {
    shared.footprint = [&options, &progress_mutex](int index, const SeriesFootprint& f) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      options.footprint(index, f);
    };
  }
  SpareThreads spare;
  ForEachTrace(bytes, jobs, &spare, [&](size_t k, int helpers) {
    (*ranks)[k].emplace(AnalyzeOne(factories[k], names[k], static_cast<int>(k), count, helpers,
                                   count > 1 ? &spare : nullptr, shared, classifier));
  });
}

absl::StatusOr<analysis::Report> AnalyzeAll(const std::vector<ReaderFactory>& factories,
                                            const std::vector<std::string>& names,
                                            const std::vector<uint64_t>& bytes,
                                            const AnalyzeOptions& options) {
  if (factories.empty())
    return absl::InvalidArgumentError("no trace to analyse");
  CUCLIMB_ASSIGN_OR_RETURN(const FrameClassifier classifier,
                           FrameClassifier::Create(options.frames_internal));
  analysis::Report report;
  report.thresholds = options.thresholds;
  const int count = static_cast<int>(factories.size());
  std::vector<std::optional<absl::StatusOr<RankReport>>> ranks(factories.size());
  AnalyzeRanks(factories, names, bytes, options, classifier, &ranks);
  // Errors are reported in trace order, whichever thread met them first.
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<RankReport>& rank = *ranks[static_cast<size_t>(i)];
    if (!rank.ok()) {
      // The reader's errors already start with the path; say it once. Payloads (the CLI's
      // error kind: usage, output) survive the renaming.
      const std::string& name = names[static_cast<size_t>(i)];
      if (absl::StartsWith(rank.status().message(), absl::StrCat(name, ": ")))
        return rank.status();
      absl::Status named(rank.status().code(), absl::StrCat(name, ": ", rank.status().message()));
      rank.status().ForEachPayload([&named](absl::string_view url, const absl::Cord& payload) {
        named.SetPayload(url, payload);
      });
      return named;
    }
    report.ranks.push_back(std::move(*rank));
  }
  MergeRanks(options, &report);
  // The verdict: a range that sets it, across ranks or in one. The cause: with one trace, the
  // rank's (the strongest of its ranges'); with several, the first merged range that sets the
  // verdict (it speaks for the rank that carries the climb), else a rank's, else machine drift.
  bool climbing = false;
  for (const RangeReport& r : report.ranges) {
    if (r.sets_verdict && !climbing && count > 1) {
      report.cause = r.cause;
      report.cause.range = r.name;
    }
    climbing |= r.sets_verdict;
  }
  for (const RankReport& r : report.ranks) {
    if (count == 1 || (r.climbing && !climbing) ||
        (report.cause.kind.empty() && !r.cause.kind.empty())) {
      report.cause = r.cause;
    }
    climbing |= r.climbing;
    report.partial |= r.trace.partial;
    for (const std::string& n : r.notes) {
      report.notes.push_back(
          count > 1 ? absl::StrCat("rank ", report.job_ranks[static_cast<size_t>(r.index)], ": ", n)
                    : n);
    }
  }
  report.verdict = climbing ? "climbing" : "flat";
  return report;
}

}  // namespace

absl::StatusOr<analysis::Report> Analyze(const std::vector<std::string>& paths,
                                         const AnalyzeOptions& options) {
  std::vector<ReaderFactory> factories;
  std::vector<uint64_t> bytes;
  for (const std::string& p : paths) {
    factories.push_back([p]() { return trace::TraceReader::Open(p); });
    std::error_code error;  // not a regular file: size unknown, the reader says what is wrong
    const std::uintmax_t size = std::filesystem::file_size(p, error);
    bytes.push_back(error ? 0 : static_cast<uint64_t>(size));
  }
  return AnalyzeAll(factories, paths, bytes, options);
}

absl::StatusOr<analysis::Report> AnalyzeBuffers(const std::vector<std::string_view>& traces,
                                                const std::vector<std::string>& names,
                                                const AnalyzeOptions& options) {
  if (names.size() != traces.size())
    return absl::InvalidArgumentError("one name per trace");
  std::vector<ReaderFactory> factories;
  std::vector<uint64_t> bytes;
  for (std::string_view t : traces) {
    factories.push_back([t]() { return trace::TraceReader::FromBuffer(t); });
    bytes.push_back(t.size());
  }
  return AnalyzeAll(factories, names, bytes, options);
}

}  // namespace cuclimb::analysis
