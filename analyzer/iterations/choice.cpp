// SPDX-License-Identifier: Apache-2.0
// Choosing the iteration source: every candidate gets a place in one order of preference, the
// first one wins, and each of the others is told why it lost.
#include "iterations/choice.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace cuclimb::analysis {
namespace {

constexpr uint64_t kMinAuto = 8;  // instances for a confident automatic choice
constexpr uint64_t kMinAny = 2;   // instances for any choice
// A range encloses a "substantial" part of its thread's work when its coverage is at least this
// share of the best coverage among its peers (same tier, same thread group): "iteration" (99 %)
// against "log_metrics" (0 %), XLA's module of the training step (95 %) against the module that
// converts the step counter (0 %).
constexpr double kSubstantial = 0.5;

// Tiers, in order of preference. Within a tier the busiest CUDA thread comes first.
enum Tier : int {
  kProgramRange = 1,  // the program's range, ≥ kMinAuto instances
  kProgramMark,       // the program's mark, ≥ kMinAuto
  kLibraryStep,       // a library's range around one run of the program's step, ≥ kMinAuto
  kLaunchPeriod,      // the period of the launch sequence
  kFewProgramRange,   // the same three with ≥ kMinAny instances
  kFewProgramMark,
  kFewLibraryStep,
  kLibraryRange,  // a library's own per-call or per-op range: the last resort
  kFewLibraryRange,
  kNotEligible,  // no launch period found: listed, never chosen
};

int TierOf(IterationSource source, RangeOrigin origin, uint64_t count) {
  const bool many = count >= kMinAuto;
  switch (origin) {
    case RangeOrigin::kProgram:
      if (source == IterationSource::kRange)
        return many ? kProgramRange : kFewProgramRange;
      return many ? kProgramMark : kFewProgramMark;
    case RangeOrigin::kLibraryStep:
      return many ? kLibraryStep : kFewLibraryStep;
    case RangeOrigin::kLibrary:
      break;
  }
  return many ? kLibraryRange : kFewLibraryRange;
}

struct Ranked {
  SegmentCandidate c;
  int tier = kNotEligible;
  int group = 1;  // 0: the busiest CUDA thread
  bool substantial = true;
  int64_t first_ts = 0;
  const char* basis = "launches";  // what coverage is measured on

  auto Order() const {
    return std::make_tuple(tier, group, !substantial, c.depth, -static_cast<int64_t>(c.instances),
                           -c.coverage, first_ts, c.tid, c.domain, c.name);
  }
};

std::string Quoted(const trace::TraceReader& reader, uint32_t id) {
  return absl::StrCat("\"", std::string(reader.Str(id)), "\"");
}

std::string Percent(double share) {
  return absl::StrFormat("%.0f%%", 100 * share);
}

// One sentence for a winning range or mark.
std::string Describe(const Ranked& r, const trace::TraceReader& reader, uint32_t busiest) {
  const SegmentCandidate& c = r.c;
  std::string s = absl::StrFormat("%s %s on thread %d (%d instances",
                                  c.source == IterationSource::kRange ? "NVTX range" : "NVTX mark",
                                  Quoted(reader, c.name), c.tid, c.instances);
  if (c.source == IterationSource::kRange) {
    absl::StrAppend(&s, ", depth ", c.depth, ", ", Percent(c.coverage), " of the thread's ",
                    r.basis, " inside");
  }
  absl::StrAppend(&s, ")");
  if (c.tid == busiest)
    absl::StrAppend(&s, ", the busiest CUDA thread");
  if (c.origin.origin == RangeOrigin::kLibraryStep) {
    absl::StrAppend(&s, "; ", c.origin.library,
                    "'s range around one run of the program's compiled step (the program has no "
                    "range of its own)");
  } else if (c.origin.origin == RangeOrigin::kLibrary) {
    absl::StrAppend(&s, "; a range ", c.origin.library,
                    " emits on its own, used because nothing else repeats");
  }
  return s;
}

// Why `r` lost to `w`.
std::string WhyNot(const Ranked& r, const Ranked& w, bool user, const trace::TraceReader& reader) {
  const SegmentCandidate& c = r.c;
  if (user)
    return r.tier == kNotEligible && c.source == IterationSource::kLaunch
               ? c.reason
               : "not named by --iteration";
  if (c.source == IterationSource::kLaunch && w.tier < kLaunchPeriod) {
    return w.c.origin.origin == RangeOrigin::kProgram
               ? "not needed: the program marks its iterations with NVTX"
               : absl::StrCat("not needed: ", w.c.origin.library,
                              "'s range around the program's step repeats");
  }
  if (r.tier == kNotEligible)
    return c.reason;
  if (r.tier != w.tier) {
    if (c.origin.origin == RangeOrigin::kLibrary)
      return absl::StrCat("a range ", c.origin.library,
                          " emits on its own: not the program's loop");
    if (c.origin.origin == RangeOrigin::kLibraryStep && w.c.origin.origin == RangeOrigin::kProgram)
      return absl::StrCat("a range ", c.origin.library, " emits: the program has its own");
    if (c.instances < kMinAuto)
      return absl::StrCat("only ", c.instances, " instances");
    if (c.source == IterationSource::kMark && w.c.source == IterationSource::kRange)
      return "a repeating range is preferred to a mark";
    return "less preferred kind of source";
  }
  if (r.group != w.group)
    return absl::StrCat("on thread ", c.tid, ", not the busiest CUDA thread");
  if (!r.substantial)
    return absl::StrCat("encloses ", Percent(c.coverage), " of its thread's ", r.basis,
                        ", against ", Percent(w.c.coverage), " for ", Quoted(reader, w.c.name));
  if (c.depth > w.c.depth)
    return absl::StrCat("nested (depth ", c.depth, ") in a repeating range");
  if (c.instances < w.c.instances)
    return absl::StrCat("fewer instances (", c.instances, ")");
  if (c.coverage < w.c.coverage)
    return absl::StrCat("encloses less of its thread's ", r.basis, " (", Percent(c.coverage), ")");
  return "seen later";
}

void AddRanked(const SegmentStats::CandidateMap& from, IterationSource source,
               const SegmentStats& stats, const trace::TraceReader& reader, uint32_t busiest,
               uint64_t min_count, std::vector<Ranked>* out) {
  for (const auto& [k, cand] : from) {
    if (cand.count < min_count)
      continue;
    Ranked r;
    r.c.source = source;
    r.c.tid = k.tid;
    r.c.domain = k.domain;
    r.c.name = k.name;
    r.c.origin = ClassifyRange(k.domain != 0 ? reader.Str(k.domain) : std::string_view(),
                               reader.Str(k.name));
    r.c.instances = cand.count;
    r.c.depth = source == IterationSource::kRange ? cand.min_depth : 0;
    r.c.coverage = source == IterationSource::kRange ? stats.Coverage(k, cand, &r.basis) : 1.0;
    r.tier = TierOf(source, r.c.origin.origin, cand.count);
    r.group = busiest != 0 && k.tid == busiest ? 0 : 1;
    r.first_ts = cand.first_ts;
    out->push_back(std::move(r));
  }
}

// Marks each candidate substantial or not against the best coverage of its tier and group.
void MarkSubstantial(std::vector<Ranked>* all) {
  absl::flat_hash_map<int, double> best;  // tier * 2 + group → best coverage
  for (const Ranked& r : *all) {
    double& b = best[r.tier * 2 + r.group];
    b = std::max(b, r.c.coverage);
  }
  for (Ranked& r : *all) r.substantial = r.c.coverage >= kSubstantial * best[r.tier * 2 + r.group];
}

// --iteration: the range, else the mark, of that name with the most instances (any thread).
const Ranked* UserPick(const std::vector<Ranked>& all, const SegmentStats& stats,
                       IterationSource source) {
  const Ranked* best = nullptr;
  for (const Ranked& r : all) {
    if (r.c.source != source || !stats.MatchesUser(r.c.name))
      continue;
    if (best == nullptr || r.c.instances > best->c.instances ||
        (r.c.instances == best->c.instances && r.Order() < best->Order()))
      best = &r;
  }
  return best;
}

}  // namespace

const char* SourceName(IterationSource source) {
  switch (source) {
    case IterationSource::kRange:
      return "nvtx_range";
    case IterationSource::kMark:
      return "nvtx_mark";
    case IterationSource::kLaunch:
      return "launch_period";
    case IterationSource::kNone:
      break;
  }
  return "none";
}

SegmentChoice ChooseSegmentation(const SegmentStats& stats, const LaunchPeriod& launch,
                                 const trace::TraceReader& reader) {
  const uint32_t busiest = stats.BusiestThread();
  std::vector<Ranked> all;
  AddRanked(stats.ranges(), IterationSource::kRange, stats, reader, busiest, kMinAny, &all);
  AddRanked(stats.marks(), IterationSource::kMark, stats, reader, busiest, kMinAny, &all);
  // --iteration matches any number of instances, even one.
  if (!stats.user_name().empty()) {
    for (const auto* from : {&stats.ranges(), &stats.marks()}) {
      for (const auto& [k, cand] : *from) {
        if (cand.count < kMinAny && stats.MatchesUser(k.name)) {
          SegmentStats::CandidateMap one{{k, cand}};
          AddRanked(one, from == &stats.ranges() ? IterationSource::kRange : IterationSource::kMark,
                    stats, reader, busiest, 1, &all);
          all.back().tier = kNotEligible;  // only by name
          all.back().c.reason = "named by --iteration";
        }
      }
    }
  }
  if (launch.found || !launch.why.empty()) {
    Ranked r;
    r.c.source = IterationSource::kLaunch;
    r.c.tid = launch.tid;
    r.c.name = launch.anchor;
    r.c.coverage = 1;
    r.tier = launch.found ? kLaunchPeriod : kNotEligible;
    r.group = 0;
    r.c.reason = launch.found
                     ? absl::StrCat(launch.why, ", anchored at ", Quoted(reader, launch.anchor),
                                    launch.anchor_next
                                        ? absl::StrCat(" + ", Quoted(reader, launch.anchor_next))
                                        : std::string(),
                                    " on thread ", launch.tid)
                     : absl::StrCat("no launch period: ", launch.why);
    all.push_back(std::move(r));
  }
  MarkSubstantial(&all);
  std::sort(all.begin(), all.end(),
            [](const Ranked& a, const Ranked& b) { return a.Order() < b.Order(); });

  SegmentChoice choice;
  const Ranked* winner = nullptr;
  if (!stats.user_name().empty()) {
    winner = UserPick(all, stats, IterationSource::kRange);
    if (winner == nullptr)
      winner = UserPick(all, stats, IterationSource::kMark);
    choice.user = winner != nullptr;
    choice.user_unmatched = winner == nullptr;
  }
  if (winner == nullptr && !all.empty() && all.front().tier != kNotEligible)
    winner = &all.front();

  const std::string unmatched =
      choice.user_unmatched
          ? absl::StrCat("; no range or mark is named \"", stats.user_name(), "\"")
          : std::string();
  if (winner == nullptr) {
    choice.why = absl::StrCat("no repeating NVTX range or mark and no periodic launch sequence (",
                              launch.why.empty() ? "no launches" : launch.why,
                              "): the whole trace is one iteration", unmatched);
  } else {
    choice.source = winner->c.source;
    choice.tid = winner->c.tid;
    choice.domain = winner->c.domain;
    choice.name = winner->c.name;
    if (choice.source == IterationSource::kLaunch) {
      choice.launch = launch;
      std::string passed;
      for (const Ranked& r : all) {
        if (r.c.origin.origin == RangeOrigin::kLibrary && r.c.source == IterationSource::kRange) {
          passed = absl::StrCat(" (", r.c.origin.library, "'s own ranges such as ",
                                Quoted(reader, r.c.name), " are not the program's loop)");
          break;
        }
      }
      choice.why = absl::StrCat("no repeating NVTX range or mark of the program's own", passed,
                                "; ", winner->c.reason, unmatched);
    } else {
      choice.why = absl::StrCat(Describe(*winner, reader, busiest),
                                choice.user ? ", from --iteration" : "", unmatched);
    }
  }
  // The candidates: the winner first, then the rest in order of preference; the launch period
  // stays in the list when it is cut.
  std::vector<SegmentCandidate> others;
  const SegmentCandidate* launch_entry = nullptr;
  for (const Ranked& r : all) {
    if (&r == winner)
      continue;
    SegmentCandidate c = r.c;
    if (winner != nullptr)
      c.reason = WhyNot(r, *winner, choice.user, reader);
    // A launch period that was not needed is listed without its anchor: that comes from the
    // first part of the trace only, and the report must not depend on how long that part was.
    if (c.source == IterationSource::kLaunch && winner != nullptr && winner->tier < kLaunchPeriod)
      c.name = 0;
    others.push_back(std::move(c));
  }
  if (winner != nullptr) {
    SegmentCandidate w = winner->c;
    w.chosen = true;
    w.reason = choice.user ? "named by --iteration" : "chosen: first in the order of preference";
    choice.candidates.push_back(std::move(w));
  }
  for (const SegmentCandidate& c : others) {
    if (c.source == IterationSource::kLaunch)
      launch_entry = &c;
  }
  for (const SegmentCandidate& c : others) {
    if (choice.candidates.size() == kMaxCandidates)
      break;
    if (choice.candidates.size() + 1 == kMaxCandidates && launch_entry != nullptr &&
        &c != launch_entry) {
      choice.candidates.push_back(*launch_entry);
      break;
    }
    if (&c == launch_entry)
      launch_entry = nullptr;  // listed in its place
    choice.candidates.push_back(c);
  }
  return choice;
}

}  // namespace cuclimb::analysis
