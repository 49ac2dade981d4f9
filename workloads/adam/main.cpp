// SPDX-License-Identifier: Apache-2.0
// cuclimb-adam: flags -> Options -> Train() -> Reporter; exit 0 ok, 2 usage, 3 CUDA error.
#include <cstdio>

#include "workloads/adam/options.h"
#include "workloads/adam/report.h"
#include "workloads/adam/trainer.h"

int main(int argc, char** argv) {
  using namespace cuclimb::workloads;  // NOLINT(google-build-using-namespace): main only
  const ParseResult parsed = ParseOptions(argc, argv);
  if (parsed.help) {
    std::fputs(Usage().c_str(), stdout);
    return 0;
  }
  if (!parsed.ok) {
    std::fprintf(stderr, "cuclimb-adam: %s\n", parsed.error.c_str());
    return 2;
  }
  const Options& options = parsed.options;
  const std::vector<std::string> names = PersistentNames(options);
  Reporter reporter(options, stdout);
  reporter.Header(names);
  const TrainResult result =
      Train(options, [&](const IterationRecord& record) { reporter.Iteration(names, record); });
  reporter.Final(Summarize(options, result.names, result.iterations));
  return 0;
}
