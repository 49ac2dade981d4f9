// SPDX-License-Identifier: Apache-2.0
// The first thing a report says, in plain words: what climbs, why (one sentence), where in the
// program (the call site, when one was recorded) and what to do next, as commands. The terminal
// report prints it first, the JSON report carries it as "headline" and the HTML page shows it
// under the verdict, so all three say the same thing (docs/report-schema.md "headline").
#pragma once

#include <string>
#include <vector>

#include "report/report.h"

namespace cuclimb::analysis {

struct NextStep {
  std::string why;      // "see where those allocations are made"
  std::string command;  // "cuclimb record --stacks fp -- ./train --iters 500"
};

struct Headline {
  std::string what;   // "cuclimb-adam::iter climbs +50% over 500 iterations: 11.5 → 17.2 ms"
  std::string cause;  // one sentence: the state that grows and where the extra time goes
  std::string where;  // the call site that keeps the state alive, or why none is known; "" = n/a
  const Accumulator* accumulator = nullptr;  // the state the cause names, when it names one
  const RangeReport* range = nullptr;        // the range `what` is about, when something climbs
  std::vector<NextStep> next;
};

struct HeadlineOptions {
  std::string html_path;  // the page written by this run, if any: "open it" instead of "write it"
};

Headline MakeHeadline(const Report& report, const HeadlineOptions& options = {});

// The plain-words description of an accumulator's growth, e.g. "2 cuMemAllocAsync allocations
// of 257–512 B per iteration are not freed before the loop ends".
std::string StatePhrase(const Accumulator& a);

// Where a range's extra time goes, from its decomposition: "host code between CUDA calls",
// "inside cuMemAllocAsync", "waiting for the GPU in cuStreamSynchronize", "GPU time of k".
// Empty when the range does not grow.
std::string TimePhrase(const RangeReport& r);

// What shrank while the range grew, for growth shares above 100 %: "CUDA calls −0.66 ms,
// synchronization −0.05 ms"; empty when nothing shrank materially.
std::string ShrankPhrase(const RangeReport& r);

}  // namespace cuclimb::analysis
