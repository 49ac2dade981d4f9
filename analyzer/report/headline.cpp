// SPDX-License-Identifier: Apache-2.0
// What climbs, why, where and what next (headline.h): sentences built from the report's fields,
// never from its other sentences, so that they stay true when those change.
#include "report/headline.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "report/text_report.h"

namespace cuclimb::analysis {
namespace {

bool IsAllocationKind(const std::string& kind) {
  return kind == "device_allocations" || kind == "pinned_allocations" ||
         kind == "managed_allocations";
}

bool IsHandleKind(const std::string& kind) {
  return kind == "streams" || kind == "events" || kind == "modules" || kind == "graphs";
}

// "2", "1.5", "0.25": a per-iteration count as people say it.
std::string Count(double v) {
  if (std::fabs(v - std::round(v)) < 0.05)
    return absl::StrFormat("%.0f", std::round(v));
  return absl::StrFormat("%.2g", v);
}

// "(256 B, 512 B]" → "257–512 B"; other units keep both ends: "(1 KiB, 2 KiB]" → "1–2 KiB".
std::string SizeClassText(const std::string& size_class) {
  double lo = 0, hi = 0;
  char lo_unit[8] = {}, hi_unit[8] = {};
  if (std::sscanf(size_class.c_str(), "(%lf %7[A-Za-z], %lf %7[A-Za-z]]", &lo, lo_unit, &hi,
                  hi_unit) != 4) {
    return size_class;
  }
  const std::string lu = lo_unit, hu = hi_unit;
  if (lu == "B" && hu == "B")
    return absl::StrFormat("%g–%g B", lo + 1, hi);
  if (lu == hu)
    return absl::StrFormat("%g–%g %s", lo, hi, hu);
  return absl::StrFormat("%g %s–%g %s", lo, lu, hi, hu);
}

// "of 512 B", "of 257–512 B", or "" when the sizes are not known.
std::string SizePhrase(const Accumulator& a) {
  if (!a.examples.empty()) {
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const HandleExample& e : a.examples) {
      lo = std::min(lo, e.size_bytes);
      hi = std::max(hi, e.size_bytes);
    }
    if (hi > 0) {
      return lo == hi ? absl::StrCat("of ", FormatQuantity(static_cast<double>(lo), "bytes"))
                      : absl::StrCat("of ", FormatQuantity(static_cast<double>(lo), "bytes"), "–",
                                     FormatQuantity(static_cast<double>(hi), "bytes"));
    }
  }
  if (a.size_classes.size() == 1)
    return absl::StrCat("of ", SizeClassText(a.size_classes[0]));
  if (a.bytes_per_iter > 0 && a.growth_per_iter > 0) {
    return absl::StrCat("of about ", FormatQuantity(a.bytes_per_iter / a.growth_per_iter, "bytes"));
  }
  return "";
}

std::string ApiPrefix(const Accumulator& a) {
  return a.apis.size() == 1 ? a.apis[0] + " " : "";
}

// "cuclimb-adam --allocator cubecl ..." with the program's directory left out when the line
// would be long; "PROGRAM" when the trace did not record the command line.
std::string ProgramCommand(const Report& report) {
  if (report.ranks.empty())
    return "PROGRAM";
  const ProcessInfo& p = report.ranks[0].process;
  std::string cmd = !p.cmd.empty() ? p.cmd : p.exe;
  if (cmd.empty())
    return "PROGRAM";
  if (cmd.size() > 60 && cmd[0] == '/') {
    const size_t space = cmd.find(' ');
    const size_t slash = cmd.rfind('/', space);
    if (slash != std::string::npos)
      cmd = cmd.substr(slash + 1);
  }
  return cmd;
}

std::string TracePaths(const Report& report) {
  std::string out;
  for (const RankReport& r : report.ranks)
    absl::StrAppend(&out, out.empty() ? "" : " ", r.trace.path);
  return out.empty() ? "TRACE" : out;
}

const Accumulator* FindAccumulator(const Report& report, const std::string& id) {
  for (const Accumulator& a : report.accumulators) {
    if (a.id == id)
      return &a;
  }
  return nullptr;
}

// The accumulator behind a climbing range: the first that explains it, else the first whose
// growth it rises with (correlated only), else none.
const Accumulator* CauseOf(const Report& report, const RangeReport& r, bool* explains) {
  *explains = false;
  for (const std::string& id : r.explained_by) {
    if (const Accumulator* a = FindAccumulator(report, id)) {
      *explains = true;
      return a;
    }
  }
  for (const Accumulator& a : report.accumulators) {
    for (const Explanation& e : a.explanations) {
      if (e.range == r.name && e.verdict != "unrelated")
        return &a;
    }
  }
  return nullptr;
}

// The range the verdict is about: of the climbing ranges, the one whose time grows most.
const RangeReport* TopRange(const Report& report) {
  const RangeReport* top = nullptr;
  for (const RangeReport& r : report.ranges) {
    if (!r.climbing)
      continue;
    const double growth = r.decomposition.wall.delta_ms > 0 ? r.decomposition.wall.delta_ms
                                                            : r.trend.last - r.trend.first;
    const double top_growth = top == nullptr ? -1
                              : top->decomposition.wall.delta_ms > 0
                                  ? top->decomposition.wall.delta_ms
                                  : top->trend.last - top->trend.first;
    if (growth > top_growth)
      top = &r;
  }
  return top;
}

}  // namespace

namespace {

// "2 … per iteration", or for slow growth "1 … every 4 iterations".
struct Rate {
  std::string count, per;
  bool one = false;
};

Rate RateOf(double n) {
  if (n > 0 && n < 0.95) {
    const double every = std::round(1 / n);
    return {"1", every <= 1 ? "per iteration" : absl::StrFormat("every %.0f iterations", every),
            true};
  }
  return {Count(n), "per iteration", std::fabs(n - 1) < 0.05};
}

std::string Noun(const Rate& r, const std::string& singular) {
  return r.one ? singular : singular + "s";
}

}  // namespace

std::string StatePhrase(const Accumulator& a) {
  const Rate r = RateOf(a.growth_per_iter);
  const char* is = r.one ? "is" : "are";
  if (IsAllocationKind(a.kind)) {
    const std::string memory = a.kind == "pinned_allocations"    ? "pinned "
                               : a.kind == "managed_allocations" ? "managed "
                                                                 : "";
    std::string s = absl::StrCat(r.count, " ", ApiPrefix(a), memory, Noun(r, "allocation"));
    if (const std::string size = SizePhrase(a); !size.empty())
      absl::StrAppend(&s, " ", size);
    // The examples are survivors of the loop: never freed (−2), or freed in the tear-down.
    bool never = !a.examples.empty(), teardown = !a.examples.empty();
    for (const HandleExample& e : a.examples) {
      never &= e.free_iteration == -2;
      teardown &= e.free_iteration >= 0;
    }
    return absl::StrCat(s, " ", r.per, " ", is,
                        never      ? " never freed"
                        : teardown ? " freed only after the loop ends"
                                   : " not freed before the loop ends");
  }
  if (a.kind == "vmm_mappings") {
    return absl::StrCat(r.count, " VMM ", Noun(r, "mapping"), " ", r.per, " ",
                        r.one ? "stays" : "stay", " mapped until the loop ends");
  }
  if (a.kind == "pool_reserved") {
    // The key names the pool already ("pool 0x1f1badc0").
    return absl::StrCat("memory ", a.key.rfind("pool", 0) == 0 ? "" : "pool ", a.key, " reserves ",
                        FormatQuantity(a.growth_per_iter, "bytes"),
                        " more every iteration and does not release it");
  }
  if (IsHandleKind(a.kind)) {
    const std::string singular = a.kind.substr(0, a.kind.size() - 1);
    return absl::StrCat(r.count, " ", Noun(r, singular), " ", r.per, " (", a.key, ") ", is,
                        " created and not destroyed before the loop ends");
  }
  if (a.kind == "nvtx_regions") {
    return absl::StrCat(r.count, " NVTX memory ", Noun(r, "region"), " ", r.per, " ", is,
                        " registered and not unregistered");
  }
  if (a.kind == "host_function") {
    return absl::StrCat("the host function ", a.key, " takes ", Count(a.growth_per_iter),
                        " more stack samples every iteration");
  }
  return absl::StrCat(a.kind, " ", a.key, " grows by ", FormatQuantity(a.growth_per_iter, a.unit),
                      " per iteration");
}

std::string TimePhrase(const RangeReport& r) {
  const Decomposition& d = r.decomposition;
  struct Part {
    double delta;
    std::string what;
  };
  const Component* top_api = nullptr;
  for (const Component& c : d.by_api) {
    if (top_api == nullptr || c.delta_ms > top_api->delta_ms)
      top_api = &c;
  }
  const Component* top_sync = nullptr;
  for (const Component& c : d.by_sync) {
    if (top_sync == nullptr || c.delta_ms > top_sync->delta_ms)
      top_sync = &c;
  }
  const Component* top_kernel = nullptr;
  for (const Component& c : d.by_kernel) {
    if (top_kernel == nullptr || c.delta_ms > top_kernel->delta_ms)
      top_kernel = &c;
  }
  const std::vector<Part> parts = {
      {d.host.delta_ms, "host code between CUDA calls"},
      {d.api.delta_ms,
       top_api != nullptr ? absl::StrCat("time inside ", top_api->name) : "time inside CUDA calls"},
      {d.sync.delta_ms, top_sync != nullptr
                            ? absl::StrCat("waiting for the GPU in ", top_sync->name)
                            : "waiting for the GPU"},
      {d.gpu.delta_ms, top_kernel != nullptr ? absl::StrCat("GPU time of ", top_kernel->name)
                                             : "GPU time of its kernels"},
  };
  const Part* best = nullptr;
  for (const Part& p : parts) {
    if (p.delta > 0 && (best == nullptr || p.delta > best->delta))
      best = &p;
  }
  return best == nullptr ? "" : best->what;
}

std::string ShrankPhrase(const RangeReport& r) {
  const Decomposition& d = r.decomposition;
  const double wall = d.wall.delta_ms;
  if (wall <= 0)
    return "";
  std::string out;
  const std::pair<double, const char*> parts[] = {{d.host.delta_ms, "host code"},
                                                  {d.api.delta_ms, "CUDA calls"},
                                                  {d.sync.delta_ms, "waiting for the GPU"}};
  for (const auto& [delta, what] : parts) {
    if (delta < -0.05 * wall) {
      absl::StrAppend(&out, out.empty() ? "" : ", ", what, " −", FormatMs(-delta));
    }
  }
  return out;
}

namespace {

// Why a climbing range does not set the verdict: "it is 0.8% of the iteration's time", "the
// machine's speed changed, not the program", "it does not keep rising".
std::string WhyNotMaterial(const RangeReport& r) {
  if (r.cause.kind == kCauseMachine)
    return "the machine's speed changed, not the program";
  if (!r.material) {
    return absl::StrFormat("its growth is %.2g%% of the iteration's time",
                           std::max(0.0, r.iteration_share_pct));
  }
  if (!r.steady)
    return "it does not keep rising";
  return "";
}

}  // namespace

Headline MakeHeadline(const Report& report, const HeadlineOptions& options) {
  Headline h;
  const int64_t iterations = report.iterations.count;
  const std::string traces = TracePaths(report);
  // The range the verdict rests on (the analysis names it), else the climbing range that grows
  // most (it climbs, but not enough to set the verdict).
  // A flat run's cause (the machine drifting) names a range that does not climb: not this one.
  const RangeReport* top = nullptr;
  for (const RangeReport& r : report.ranges) {
    if (!report.cause.range.empty() && r.name == report.cause.range && r.climbing)
      top = &r;
  }
  const bool sets_verdict = top != nullptr;
  if (top == nullptr)
    top = TopRange(report);
  h.range = top;
  int climbing = 0;
  for (const RangeReport& r : report.ranges) climbing += r.climbing && r.sets_verdict;

  // The state behind the climb: the accumulator the analysis names as its cause (explains or
  // likely_cause), else one that only rises alongside (correlated_only), else none.
  bool explains = false;
  const Accumulator* acc = nullptr;
  if (top != nullptr && top->cause.kind == kCauseAccumulator) {
    acc = FindAccumulator(report, top->cause.accumulator);
    explains = acc != nullptr;
  }
  if (top != nullptr && acc == nullptr)
    acc = CauseOf(report, *top, &explains);
  const Accumulator* grows = acc;  // some state that grows, named even when unrelated
  if (grows == nullptr && !report.accumulators.empty())
    grows = &report.accumulators.front();
  if (top == nullptr)
    acc = grows;
  h.accumulator = acc;

  if (top != nullptr && sets_verdict) {
    h.what = absl::StrFormat("%s climbs %+.0f%% over %d iterations (%s → %s)", top->name,
                             top->trend.change_pct, iterations, FormatMs(top->trend.first),
                             FormatMs(top->trend.last));
    if (climbing > 1)
      absl::StrAppendFormat(&h.what, "; %d ranges climb", climbing);
  } else if (top != nullptr) {
    h.what = absl::StrFormat(
        "no material climb: %s climbs %+.0f%% over %d iterations (%s → %s), "
        "but %s",
        top->name, top->trend.change_pct, iterations, FormatMs(top->trend.first),
        FormatMs(top->trend.last), WhyNotMaterial(*top));
  } else if (iterations > 0) {
    h.what = absl::StrFormat(
        "nothing climbs: no range's time per iteration grows by %g%% or more over %d iterations",
        report.thresholds.min_climb_pct, iterations);
  } else {
    h.what = "no iterations found: nothing to compare over time";
  }

  const std::string time = top != nullptr ? TimePhrase(*top) : "";
  const bool likely = top != nullptr && top->cause.verdict == kLikelyCause;
  if (top != nullptr && acc != nullptr && explains) {
    h.cause = absl::StrCat(likely ? "Most likely: " : "", StatePhrase(*acc));
    if (!time.empty()) {
      absl::StrAppend(&h.cause, "; the extra time is ", time,
                      time == "host code between CUDA calls" ? ", next to that growing state" : "");
    }
    absl::StrAppend(&h.cause, ".");
  } else if (top != nullptr) {
    // Lead with what is known (where the time goes); a state that grows but does not move with
    // the range comes second and is not called the cause.
    std::string lead = !top->cause.summary.empty() && top->cause.kind != kCauseAccumulator
                           ? top->cause.summary
                       : time.empty() ? "The extra time is spread over the range"
                                      : absl::StrCat("The extra time is ", time);
    h.cause = absl::StrCat(lead, ".");
    if (acc != nullptr) {
      absl::StrAppend(&h.cause, " ", StatePhrase(*acc), ", but ", top->name,
                      " does not follow the shape of that growth, so it is probably not the "
                      "cause.");
    } else if (grows != nullptr) {
      absl::StrAppend(&h.cause, " ", StatePhrase(*grows), ", but the climb does not move with it.");
    } else if (top->cause.summary.empty() || top->cause.kind == kCauseAccumulator) {
      absl::StrAppend(&h.cause, " No state grows per iteration.");
    }
  } else if (acc != nullptr) {
    h.cause = absl::StrCat(StatePhrase(*acc),
                           ", but step time does not climb (yet): memory or handles creep.");
  } else if (report.cause.kind == kCauseMachine && !report.cause.summary.empty()) {
    // The iteration time changed, but with everything else on the machine: say so, so that a
    // user who saw it change does not read "nothing climbs" as a contradiction.
    h.cause = absl::StrCat(report.cause.summary, ".");
  }
  // Capitalize the sentence, unless it starts with a name (a range's, an API's).
  const bool starts_with_name = top != nullptr && h.cause.rfind(top->name, 0) == 0;
  if (!h.cause.empty() && !starts_with_name && h.cause[0] >= 'a' && h.cause[0] <= 'z')
    h.cause[0] = static_cast<char>(h.cause[0] - 'a' + 'A');

  const std::string program = ProgramCommand(report);
  const std::string first_trace = report.ranks.empty() ? "TRACE" : report.ranks[0].trace.path;
  // Where: the call site of the state that explains the climb (a state that only rises alongside
  // is not pointed at), or of the state that grows when nothing climbs.
  if (acc != nullptr && (explains || top == nullptr)) {
    const bool has_stack = !acc->site.frames.empty();
    if (has_stack) {
      h.where = acc->site.label;
    } else {
      h.where = "no call stack was recorded, so the call site is unknown";
      h.next.push_back({"record again with call stacks to see where that state is kept alive",
                        absl::StrCat("cuclimb record --stacks fp -- ", program)});
    }
  }
  if (!options.html_path.empty()) {
    h.next.push_back({"open the charts and the evidence in a browser",
                      absl::StrCat("xdg-open ", options.html_path)});
  } else {
    h.next.push_back({"write the charts and the evidence as one HTML page",
                      absl::StrCat("cuclimb analyze ", traces, " --html cuclimb-report.html")});
  }
  if (top != nullptr || acc != nullptr) {
    h.next.push_back({"compare with a run that does not climb (before the change, or a fix)",
                      absl::StrCat("cuclimb diff GOOD.trace ", first_trace)});
  }
  std::string check = absl::StrCat("cuclimb check ", traces, " --max-climb ",
                                   absl::StrFormat("%g", report.thresholds.min_climb_pct));
  if (acc != nullptr && acc->kind != "host_function")
    absl::StrAppend(&check, " --max-growth ", acc->kind, "=0");
  h.next.push_back(
      {top != nullptr ? "fail CI when it comes back" : "fail CI if it starts to climb", check});
  return h;
}

}  // namespace cuclimb::analysis
