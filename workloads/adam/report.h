// SPDX-License-Identifier: Apache-2.0
// cuclimb-adam's output: `iter=<N> st=<X>ms` lines in the report's form (or JSON Lines with
// --json) and the first -> last summary.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "workloads/adam/options.h"
#include "workloads/adam/trainer.h"

namespace cuclimb::workloads {

// One persistent network's first -> last comparison: medians over a window of iterations right
// after the warm-up and over the last window, so single slow iterations do not decide it.
struct SummaryRow {
  std::string net;
  double st_first_ms = 0.0;
  double st_last_ms = 0.0;
  double st_change_pct = 0.0;
  double gpu_first_ms = 0.0;
  double gpu_last_ms = 0.0;
  double gpu_change_pct = 0.0;
  double loss_first = 0.0;  // means over the same windows
  double loss_last = 0.0;
  // --reference: medians of st / ref per iteration over the same windows.
  double rel_first = 0.0;
  double rel_last = 0.0;
  double rel_change_pct = 0.0;
};

struct Summary {
  int warmup = 0;
  int window = 0;
  std::vector<SummaryRow> rows;
  // --reference: the reference network's own st over the same windows, i.e. the machine's drift.
  bool reference = false;
  double ref_first_ms = 0.0;
  double ref_last_ms = 0.0;
  double ref_change_pct = 0.0;
};

// Pure function of the records; needs at least one record.
Summary Summarize(const Options& options, const std::vector<std::string>& names,
                  const std::vector<IterationRecord>& iterations);

class Reporter {
 public:
  Reporter(const Options& options, std::FILE* out) : options_(options), out_(out) {}

  // A comment line ("# cuclimb-adam ...") with the configuration; JSON: {"config": {...}}.
  void Header(const std::vector<std::string>& names);
  void Iteration(const std::vector<std::string>& names, const IterationRecord& record);
  void Final(const Summary& summary);

 private:
  std::string StatsText(const IterationRecord& record) const;
  std::string StatsJson(const IterationRecord& record) const;

  Options options_;
  std::FILE* out_;
  AllocatorStats previous_;
};

}  // namespace cuclimb::workloads
