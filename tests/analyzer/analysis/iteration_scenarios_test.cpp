// SPDX-License-Identifier: Apache-2.0
// The program's own iterations, end to end on simulated loops with jitter, late GPU records, a
// loader thread and the writer's batch order: cuBLAS's ranges under the program's own range and
// without one (CuPy), XLA's per-thunk ranges and step module (JAX), each with its control; and
// --iteration naming nothing.
#include <gtest/gtest.h>

#include "scenario_util.h"
#include "util/cli.h"

namespace cuclimb::testing {
namespace {

using analysis::Report;
using Library = SimOptions::LibraryRanges;

SimOptions Realistic(Library library, bool program_nvtx) {
  SimOptions o;
  o.library_ranges = library;
  o.nvtx = program_nvtx;
  o.noise = 0.05;
  o.spike_rate = 0.02;
  o.writer_batch_ns = 2'000'000;
  o.leak_device = 2;  // something to find, whatever the iterations
  o.host_ns_per_leaked = 60;
  return o;
}

const analysis::IterationCandidate* Candidate(const Report& r, const std::string& name) {
  for (const analysis::IterationCandidate& c : r.ranks[0].iterations.candidates) {
    if (c.name == name)
      return &c;
  }
  return nullptr;
}

void ExpectLeakFound(const Report& r) {
  const analysis::Accumulator* a = FindKind(r, "device_allocations");
  ASSERT_NE(a, nullptr) << Text(r);
  EXPECT_NE(a->key.find("Adam::step_retain"), std::string::npos);
}

TEST(IterationScenarios, CublasRangesUnderTheProgramsRange) {
  const Report r = AnalyzeSim(Realistic(Library::kCublas, true));
  EXPECT_EQ(r.iterations.source, "nvtx_range");
  EXPECT_EQ(r.iterations.name, "iteration");
  EXPECT_EQ(r.iterations.count, 120);
  const auto* cublas = Candidate(r, "cuBLAS::cublasSgemm_v2");
  ASSERT_NE(cublas, nullptr) << Text(r);
  EXPECT_EQ(cublas->origin, "library");
  EXPECT_EQ(cublas->library, "cuBLAS");
  EXPECT_EQ(cublas->instances, 960u);  // 8 per iteration
  ExpectLeakFound(r);
  // Control: the same loop without cuBLAS's ranges.
  const Report c = AnalyzeSim(Realistic(Library::kNone, true));
  EXPECT_EQ(c.iterations.name, "iteration");
  EXPECT_EQ(c.iterations.count, 120);
}

TEST(IterationScenarios, CupyWithoutNvtxIteratesOnTheLaunchPeriodNotOnCublas) {
  const Report r = AnalyzeSim(Realistic(Library::kCublas, false));
  EXPECT_EQ(r.iterations.source, "launch_period") << r.iterations.why;
  EXPECT_NEAR(static_cast<double>(r.iterations.count), 120, 2);
  EXPECT_NE(r.iterations.why.find("cuBLAS's own ranges"), std::string::npos) << r.iterations.why;
  const auto* cublas = Candidate(r, "cuBLAS::cublasSgemm_v2");
  ASSERT_NE(cublas, nullptr);
  EXPECT_FALSE(cublas->chosen);
  ExpectLeakFound(r);
  // Control: no NVTX at all, the same launch period.
  const Report c = AnalyzeSim(Realistic(Library::kNone, false));
  EXPECT_EQ(c.iterations.source, "launch_period");
  EXPECT_EQ(c.iterations.count, r.iterations.count);
  EXPECT_EQ(c.iterations.period_launches, r.iterations.period_launches);
}

TEST(IterationScenarios, JaxIteratesOnTheJittedStepNotOnThunksOrTheConvertModule) {
  const Report r = AnalyzeSim(Realistic(Library::kXla, false));
  EXPECT_EQ(r.iterations.source, "nvtx_range");
  EXPECT_EQ(r.iterations.name, "XlaModule:#hlo_module=jit_train_step,program_id=72#")
      << r.iterations.why;
  EXPECT_EQ(r.iterations.count, 120);
  const auto* convert =
      Candidate(r, "TSL::XlaModule:#prefix=args[0],hlo_module=jit_convert_element_type#");
  ASSERT_NE(convert, nullptr) << Text(r);
  EXPECT_EQ(convert->origin, "library_step");
  EXPECT_GT(convert->instances, 120u);
  EXPECT_EQ(convert->coverage, 0);
  const auto* thunk = Candidate(r, "TSL::Thunk:#hlo_op=gemm_kernel#");
  ASSERT_NE(thunk, nullptr) << Text(r);
  EXPECT_EQ(thunk->origin, "library");
  ExpectLeakFound(r);
  // With the program's own range as well, that one wins.
  const Report own = AnalyzeSim(Realistic(Library::kXla, true));
  EXPECT_EQ(own.iterations.name, "iteration");
  EXPECT_EQ(own.iterations.count, 120);
}

TEST(IterationScenarios, IterationNameThatMatchesNothingIsAUsageError) {
  const std::string bytes = SimulateBinary(Realistic(Library::kNone, true));
  analysis::AnalyzeOptions o;
  o.iteration = "P/stpe";
  auto r = analysis::AnalyzeBuffers({bytes}, {"sim.trace"}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(util::ExitCodeFor(r.status()), util::kExitUsage);
  EXPECT_NE(r.status().message().find("\"P/step\" ("), std::string::npos) << r.status();
  o.iteration = "P/step";  // the control: a name the trace has
  r = analysis::AnalyzeBuffers({bytes}, {"sim.trace"}, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->iterations.user_chosen);
  EXPECT_EQ(r->iterations.count, 480);
}

}  // namespace
}  // namespace cuclimb::testing
