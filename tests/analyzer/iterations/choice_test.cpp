// SPDX-License-Identifier: Apache-2.0
// The choice of iteration source when libraries emit NVTX ranges of their own, when ranges
// differ in how much of their thread's work they enclose, and with --iteration.
#include "iterations/choice.h"

#include <string>

#include <gtest/gtest.h>

#include "iterations/segmenter.h"
#include "trace_builder.h"

namespace cuclimb::analysis {
namespace {

using testing::TraceBuilder;

struct Chosen {
  SegmentChoice choice;
  std::string name;
  std::vector<std::string> names;  // of choice.candidates
};

Chosen Choose(const TraceBuilder& b, const std::string& user = "") {
  const std::string bytes = b.ToBinary();
  auto reader = trace::TraceReader::FromBuffer(bytes);
  EXPECT_TRUE(reader.ok());
  SegmentStats stats(reader->get(), user);
  trace::Event ev{};
  while ((*reader)->Next(&ev)) stats.Observe(ev);
  LaunchPeriod launch;
  if (uint32_t tid = stats.BusiestLaunchThread()) {
    launch = FindLaunchPeriod(stats.threads().at(tid).launch_names);
    launch.tid = tid;
  }
  Chosen c;
  c.choice = ChooseSegmentation(stats, launch, **reader);
  c.name = std::string((*reader)->Str(c.choice.name));
  for (const SegmentCandidate& sc : c.choice.candidates)
    c.names.emplace_back((*reader)->Str(sc.name));
  return c;
}

const SegmentCandidate* Find(const Chosen& c, const std::string& name) {
  for (size_t i = 0; i < c.names.size(); ++i) {
    if (c.choice.candidates[i].source != IterationSource::kLaunch && c.names[i] == name)
      return &c.choice.candidates[i];
  }
  return nullptr;
}

// A CuPy-like loop: per iteration an elementwise kernel, then `gemms` matrix products, each
// inside a range cuBLAS emits itself, then a synchronization. `program_range` wraps the loop
// body in the program's own range; `periodic` = false gives every iteration other kernels, so
// that no launch period exists.
void CupyLoop(TraceBuilder* b, int iterations, int gemms, bool program_range, bool periodic) {
  int64_t t = 1000;
  uint64_t corr = 0;
  for (int i = 0; i < iterations; ++i) {
    if (program_range)
      b->Push(t += 50, "train_step");
    b->Launch(t += 900, 700, periodic ? "cupy_multiply" : "k" + std::to_string(i % 97), ++corr);
    for (int g = 0; g < gemms; ++g) {
      b->Push(t += 300, "cublasSgemm_v2").domain = b->Str("cuBLAS");
      b->Launch(t += 400, 900, g % 2 ? "sm90_xmma_gemm_nn" : "sm90_xmma_gemm_tn", ++corr);
      b->Pop(t += 1200).domain = b->Str("cuBLAS");
      b->Launch(t += 600, 600, periodic ? "cupy_maximum" : "m" + std::to_string((i * 7 + g) % 89),
                ++corr);
    }
    b->Sync(t += 500, 20000 + 37 * (i % 11), format::SyncKind::kContext, "cuCtxSynchronize");
    t += 20000;
    if (program_range)
      b->Pop(t += 50);
    t += 3000 + 211 * (i % 5);  // Python between iterations
  }
}

TEST(Choice, ProgramRangeBeatsTheLibraryRangesInsideIt) {
  TraceBuilder b;
  CupyLoop(&b, 40, 8, /*program_range=*/true, /*periodic=*/true);
  const Chosen c = Choose(b);
  EXPECT_EQ(c.choice.source, IterationSource::kRange);
  EXPECT_EQ(c.name, "train_step");
  const SegmentCandidate* cublas = Find(c, "cublasSgemm_v2");
  ASSERT_NE(cublas, nullptr);
  EXPECT_EQ(cublas->origin.origin, RangeOrigin::kLibrary);
  EXPECT_EQ(cublas->origin.library, "cuBLAS");
  EXPECT_EQ(cublas->instances, 320u);
  EXPECT_NE(cublas->reason.find("cuBLAS emits on its own"), std::string::npos) << cublas->reason;
  ASSERT_FALSE(c.choice.candidates.empty());
  EXPECT_TRUE(c.choice.candidates[0].chosen);
  EXPECT_NEAR(c.choice.candidates[0].coverage, 1.0, 1e-9);
}

TEST(Choice, WithoutAProgramRangeTheLaunchPeriodBeatsLibraryRanges) {
  TraceBuilder b;
  CupyLoop(&b, 40, 8, /*program_range=*/false, /*periodic=*/true);
  const Chosen c = Choose(b);
  EXPECT_EQ(c.choice.source, IterationSource::kLaunch) << c.choice.why;
  EXPECT_EQ(c.choice.launch.period, 17);
  EXPECT_NE(c.choice.why.find("cuBLAS's own ranges"), std::string::npos) << c.choice.why;
  ASSERT_NE(Find(c, "cublasSgemm_v2"), nullptr);
}

TEST(Choice, ALibraryRangeIsTheLastResort) {
  TraceBuilder b;
  CupyLoop(&b, 40, 8, /*program_range=*/false, /*periodic=*/false);
  const Chosen c = Choose(b);
  EXPECT_EQ(c.choice.source, IterationSource::kRange) << c.choice.why;
  EXPECT_EQ(c.name, "cublasSgemm_v2");
  EXPECT_NE(c.choice.why.find("used because nothing else repeats"), std::string::npos)
      << c.choice.why;
}

// A JAX-like step: the program has no range; XLA wraps each run of the jitted step in
// "XlaModule:#hlo_module=jit_train_step...#" with a thunk range per fused op, and, once per
// iteration and a few times more, the tiny module that converts the step counter.
TEST(Choice, TheModuleOfTheJittedStepBeatsXlaThunksAndTinyModules) {
  TraceBuilder b;
  const uint32_t tsl = b.Str("TSL");
  int64_t t = 1000;
  uint64_t corr = 0;
  auto push = [&](const std::string& name) { b.Push(t += 200, name).domain = tsl; };
  auto pop = [&]() { b.Pop(t += 200).domain = tsl; };
  for (int i = 0; i < 60; ++i) {
    const int converts = i % 20 == 0 ? 2 : 1;  // a few extra conversions, as in set-up code
    for (int k = 0; k < converts; ++k) {
      push("XlaModule:#prefix=args[0],hlo_module=jit_convert_element_type,program_id=39#");
      push("Thunk:#hlo_op=copy.1,unique_hlo_op_id=4294967297#");
      format::Event& copy = b.Add(format::EventType::kCopy, t += 300);
      copy.tid = 1;
      copy.dur = 900;
      copy.size = 4;
      copy.api = b.Str("cuMemcpyHtoDAsync_v2");
      pop();
      pop();
    }
    push("XlaModule:#hlo_module=jit_train_step,program_id=72#");
    for (const char* op : {"loop_add_fusion", "input_reduce_fusion", "command_buffer_1"}) {
      push(std::string("Thunk:#hlo_op=") + op + "#");
      for (int l = 0; l < 4; ++l) b.Launch(t += 500, 300, op, ++corr);
      pop();
    }
    pop();
    b.Sync(t += 400, 5000, format::SyncKind::kStream, "cuStreamSynchronize");
    t += 6000;
  }
  const Chosen c = Choose(b);
  EXPECT_EQ(c.choice.source, IterationSource::kRange);
  EXPECT_EQ(c.name, "XlaModule:#hlo_module=jit_train_step,program_id=72#") << c.choice.why;
  EXPECT_NE(c.choice.why.find("XLA's range around one run of the program's compiled step"),
            std::string::npos);
  const SegmentCandidate* convert =
      Find(c, "XlaModule:#prefix=args[0],hlo_module=jit_convert_element_type,program_id=39#");
  ASSERT_NE(convert, nullptr);
  EXPECT_EQ(convert->instances, 63u);  // more instances than the step, but it encloses nothing
  EXPECT_EQ(convert->coverage, 0.0);
  EXPECT_NE(convert->reason.find("encloses 0%"), std::string::npos) << convert->reason;
}

TEST(Choice, ARangeThatEnclosesTheWorkBeatsAFrequentTinyOne) {
  TraceBuilder b;
  int64_t t = 1000;
  uint64_t corr = 0;
  for (int i = 0; i < 30; ++i) {
    for (int k = 0; k < 2; ++k) {  // logging, twice an iteration, at the outermost level
      b.Push(t += 100, "log_metrics");
      b.Api(t += 100, 50, "cuEventQuery");
      b.Pop(t += 200);
    }
    b.Push(t += 100, "step");
    for (int l = 0; l < 6; ++l) b.Launch(t += 400, 200, l % 2 ? "a" : "b", ++corr);
    b.Pop(t += 300);
  }
  const Chosen c = Choose(b);
  EXPECT_EQ(c.name, "step") << c.choice.why;
  const SegmentCandidate* log = Find(c, "log_metrics");
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->instances, 60u);
  EXPECT_NE(log->reason.find("encloses 0% of its thread's launches"), std::string::npos)
      << log->reason;
}

TEST(Choice, CoverageFallsBackToCallsThenTime) {
  TraceBuilder b;
  int64_t t = 1000;
  for (int i = 0; i < 10; ++i) {  // no launches: calls decide
    b.Push(t += 100, "alloc_phase");
    b.Alloc(t += 100, 0x1000 + 0x100 * i, 256);
    b.Pop(t += 100);
    b.Push(t += 100, "idle");
    b.Pop(t += 100);
  }
  for (int i = 0; i < 10; ++i) {  // a thread with no CUDA call: time decides
    b.Push(t += 100, "ui", 9);
    b.Pop(t += 300, 9);
  }
  const std::string bytes = b.ToBinary();
  auto reader = trace::TraceReader::FromBuffer(bytes);
  ASSERT_TRUE(reader.ok());
  SegmentStats stats(reader->get(), "");
  trace::Event ev{};
  while ((*reader)->Next(&ev)) stats.Observe(ev);
  auto coverage = [&](uint32_t tid, const std::string& name, const char** basis) {
    for (const auto& [k, cand] : stats.ranges()) {
      if (k.tid == tid && (*reader)->Str(k.name) == name)
        return stats.Coverage(k, cand, basis);
    }
    return -1.0;
  };
  const char* basis = nullptr;
  EXPECT_DOUBLE_EQ(coverage(1, "alloc_phase", &basis), 1.0);
  EXPECT_STREQ(basis, "CUDA calls");
  EXPECT_DOUBLE_EQ(coverage(1, "idle", &basis), 0.0);
  EXPECT_NEAR(coverage(9, "ui", &basis), 300.0 * 10 / (300 * 10 + 100 * 9), 1e-9);
  EXPECT_STREQ(basis, "time");
}

TEST(Choice, IterationNameThatMatchesNothingIsFlagged) {
  TraceBuilder b;
  CupyLoop(&b, 20, 2, /*program_range=*/true, /*periodic=*/true);
  b.Push(1'000'000'000, "checkpoint");  // once: --iteration may still name it
  b.Pop(1'000'000'100);
  Chosen c = Choose(b, "no_such_range");
  EXPECT_TRUE(c.choice.user_unmatched);
  EXPECT_FALSE(c.choice.user);
  EXPECT_EQ(c.name, "train_step");  // the automatic choice, for the caller to fall back on or not
  c = Choose(b, "checkpoint");
  EXPECT_FALSE(c.choice.user_unmatched);
  EXPECT_TRUE(c.choice.user);
  EXPECT_EQ(c.name, "checkpoint");
  ASSERT_FALSE(c.choice.candidates.empty());
  EXPECT_EQ(c.choice.candidates[0].reason, "named by --iteration");
  for (size_t i = 1; i < c.choice.candidates.size(); ++i)
    EXPECT_FALSE(c.choice.candidates[i].chosen);
}

TEST(Choice, CandidateListIsBoundedAndKeepsTheLaunchPeriod) {
  TraceBuilder b;
  int64_t t = 1000;
  uint64_t corr = 0;
  for (int i = 0; i < 20; ++i) {
    b.Push(t += 10, "iteration");
    for (int r = 0; r < 30; ++r) {  // 30 sub-ranges, each with one launch
      b.Push(t += 10, "phase" + std::to_string(r));
      b.Launch(t += 10, 5, "k" + std::to_string(r % 3), ++corr);
      b.Pop(t += 10);
    }
    b.Pop(t += 10);
  }
  const Chosen c = Choose(b);
  EXPECT_EQ(c.name, "iteration");
  ASSERT_EQ(c.choice.candidates.size(), kMaxCandidates);
  EXPECT_EQ(c.choice.candidates.back().source, IterationSource::kLaunch);
  EXPECT_EQ(c.choice.candidates.back().reason,
            "not needed: the program marks its iterations with NVTX");
}

}  // namespace
}  // namespace cuclimb::analysis
