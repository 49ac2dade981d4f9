// SPDX-License-Identifier: Apache-2.0
// Writes the report tests' traces into a directory, for the CLI, main-job and browser tests:
//   hostile.trace  the long hostile trace (report_traces.h), 1500 iterations unless --iterations
//   climb.trace    the simulator's climb; flat.trace and flat2.trace its flat control (two seeds)
//   creep.trace    12.3 → 12.7 MiB of kept memory over 100 iterations, sampled GPU records
//   tangled.trace  a tangled timeline for the Perfetto export (report_traces.h)
// Usage: make_report_traces DIR [--iterations N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "report_traces.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_report_traces DIR [--iterations N]\n");
    return 2;
  }
  const std::string dir = argv[1];
  int iterations = 1500;
  if (argc == 4 && std::strcmp(argv[2], "--iterations") == 0)
    iterations = std::atoi(argv[3]);
  using namespace cuclimb::testing;
  HostileShape shape;
  shape.iterations = iterations;
  TraceBuilder climb, flat, flat2;
  Simulate(ClimbSim(iterations), &climb);
  Simulate(FlatSim(iterations), &flat);
  Simulate(FlatSim(iterations, 2), &flat2);
  const std::pair<const char*, const TraceBuilder*> outs[] = {
      {"climb.trace", &climb}, {"flat.trace", &flat}, {"flat2.trace", &flat2}};
  for (const auto& [name, b] : outs) {
    if (absl::Status s = b->WriteBinary(dir + "/" + name); !s.ok()) {
      std::fprintf(stderr, "%s: %s\n", name, std::string(s.message()).c_str());
      return 1;
    }
  }
  const TraceBuilder hostile = HostileTrace(shape);
  if (absl::Status s = hostile.WriteBinary(dir + "/hostile.trace"); !s.ok()) {
    std::fprintf(stderr, "hostile.trace: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  if (absl::Status s = TangledTrace(iterations).WriteBinary(dir + "/tangled.trace"); !s.ok()) {
    std::fprintf(stderr, "tangled.trace: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  if (absl::Status s = CreepTrace().WriteBinary(dir + "/creep.trace"); !s.ok()) {
    std::fprintf(stderr, "creep.trace: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
