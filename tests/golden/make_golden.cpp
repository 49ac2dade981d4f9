// SPDX-License-Identifier: Apache-2.0
// Writes the golden traces into a directory (scripts/update_golden.sh runs it). The traces are
// checked in; they change only when this file or the simulator does.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ddp_sim.h"
#include "training_sim.h"
#include "util/cli.h"

namespace {

using cuclimb::testing::SimOptions;

// Small runs keep the files tiny: 40 iterations of 2 steps.
SimOptions Small() {
  SimOptions o;
  o.iterations = 40;
  o.steps = 2;
  return o;
}

struct Golden {
  const char* file;
  std::function<void(SimOptions*)> shape;
  enum Form { kBinary, kJsonLines, kCut } form = kBinary;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_golden DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  const std::vector<Golden> goldens = {
      {"climb_cubecl.trace",
       [](SimOptions* o) {
         o->leak_device = 2;
         o->host_ns_per_leaked = 300;
       }},
      {"flat_control.trace", [](SimOptions*) {}},
      {"gpu_only_climb.trace",
       [](SimOptions* o) {
         o->leak_events = 1;
         o->gpu_slowdown_ns = 1000;
       }},
      {"warmup_stops.trace",
       [](SimOptions* o) {
         o->leak_device = 4;
         o->leak_until = 10;
         o->host_ns_per_leaked = 300;
       }},
      {"every_kind.trace",
       [](SimOptions* o) {
         o->leak_device = o->leak_pinned = o->leak_managed = o->leak_vmm = 1;
         o->leak_streams = o->leak_events = o->leak_modules = o->leak_graphs = o->leak_regions = 1;
         o->pool_growth_bytes = 2 << 20;
         o->host_fn_growth = 5;
       }},
      {"no_nvtx.trace",
       [](SimOptions* o) {
         o->nvtx = false;
         o->boundaries = SimOptions::Boundaries::kNone;
         o->leak_device = 2;
         o->host_ns_per_leaked = 300;
       }},
      {"marks.jsonl",
       [](SimOptions* o) {
         o->iterations = 16;  // JSON Lines are ten times larger than binary
         o->steps = 1;
         o->kernels_per_step = 2;
         o->samples = o->churn = o->loader_thread = false;
         o->nvtx = false;
         o->boundaries = SimOptions::Boundaries::kMark;
         o->leak_regions = 2;
         o->host_ns_per_region = 3000;
       },
       Golden::kJsonLines},
      {"truncated.trace",
       [](SimOptions* o) {
         o->leak_device = 2;
         o->host_ns_per_leaked = 300;
       },
       Golden::kCut},
      {"rank0.trace",
       [](SimOptions* o) {
         o->leak_device = 2;
         o->host_ns_per_leaked = 300;
         o->seed = 10;
       }},
      {"rank1.trace", [](SimOptions* o) { o->seed = 11; }},
  };
  for (const Golden& g : goldens) {
    SimOptions o = Small();
    g.shape(&o);
    cuclimb::testing::TraceBuilder b;
    cuclimb::testing::Simulate(o, &b);
    std::string bytes;
    switch (g.form) {
      case Golden::kBinary:
        bytes = b.ToBinary();
        break;
      case Golden::kJsonLines:
        bytes = b.ToJsonLines();
        break;
      case Golden::kCut:
        bytes = b.ToBinary(true, 3, 4096);  // small chunks, so the cut keeps most of the run
        bytes.resize(bytes.size() * 7 / 10);
        break;
    }
    if (absl::Status s = cuclimb::util::WriteFile(dir + "/" + g.file, bytes); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 1;
    }
    std::printf("%s: %zu bytes\n", g.file, bytes.size());
  }
  // A data-parallel job of two ranks where rank 1 keeps every loss tensor: rank 0 waits for it
  // inside the all-reduce (the straggler story).
  cuclimb::testing::DdpOptions ddp;
  ddp.iterations = 60;
  ddp.rank.resize(2);
  ddp.rank[1].keep_per_iter = 2;
  ddp.rank[1].host_ns_per_kept = 300;
  const std::vector<std::string> ranks = cuclimb::testing::SimulateDdp(ddp);
  for (size_t r = 0; r < ranks.size(); ++r) {
    const std::string file = "ddp_rank" + std::to_string(r) + ".trace";
    if (absl::Status s = cuclimb::util::WriteFile(dir + "/" + file, ranks[r]); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 1;
    }
    std::printf("%s: %zu bytes\n", file.c_str(), ranks[r].size());
  }
  return 0;
}
