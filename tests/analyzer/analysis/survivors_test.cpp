// SPDX-License-Identifier: Apache-2.0
// Survivors of the loop: state allocated in the loop and freed only in the program's tear-down
// (after the last iteration) is what the loop kept alive, exactly like state never freed. The
// report counts it in survivors_by_alloc_iteration, gives examples with free_iteration =
// iterations.count, and does not list it as live at the end of the trace.
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "analysis/analyze.h"
#include "report/headline.h"
#include "trace_builder.h"

namespace cuclimb::testing {
namespace {

using format::HandleType;
using format::MemoryKind;

struct Retained {
  uint64_t addr;
  bool stream;
};

// A training loop: per iteration a "step" range with temporaries freed in the iteration, two
// 512-byte allocations and one stream kept by the program until its tear-down, host time that
// grows with what is kept, jitter, a GC pause every 50 iterations and a loader thread. After the
// loop, a checkpoint, then the tear-down frees everything in reverse order.
std::string LoopWithTearDown(int iterations, bool free_at_teardown) {
  TraceBuilder b;
  std::mt19937_64 rng(42);
  std::normal_distribution<double> jitter(1.0, 0.03);
  b.Process(0, 100, "python train.py");
  const uint32_t keep = b.Stack({"Cache::put", "Trainer::step", "main"});
  int64_t t = 1'000'000;
  uint64_t next_addr = 0x7f0000000000;
  std::vector<Retained> kept;
  for (int i = 0; i < iterations; ++i) {
    b.Push(t, "step");
    int64_t host =
        static_cast<int64_t>(20'000 * jitter(rng)) + 40 * static_cast<int64_t>(kept.size());
    if (i % 50 == 49)
      host += 3'000'000;  // a GC pause
    for (int k = 0; k < 4; ++k) {
      const uint64_t tmp = next_addr += 0x1000;
      b.Alloc(t + 100 + k * 10, tmp, 4096);
      b.Launch(t + 200 + k * 10, 5'000, "gemm", static_cast<uint64_t>(i * 8 + k + 1));
      b.Free(t + 300 + k * 10, tmp);
    }
    for (int k = 0; k < 2; ++k) {
      const uint64_t addr = next_addr += 0x1000;
      b.Alloc(t + 400 + k * 10, addr, 512, MemoryKind::kPool, "cuMemAllocAsync", keep);
      kept.push_back({addr, false});
    }
    const uint64_t stream = 0x5000 + static_cast<uint64_t>(i);
    b.Create(t + 450, HandleType::kStream, stream).stack = keep;
    kept.push_back({stream, true});
    b.Api(t + 500, 2'000, "cudaMemcpyAsync", 2);  // the loader thread
    t += host;
    b.Pop(t);
    t += 1'000;
  }
  b.Push(t, "checkpoint");
  t += 500'000;
  b.Pop(t);
  if (free_at_teardown) {
    for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
      t += 200;
      if (it->stream)
        b.Destroy(t, HandleType::kStream, it->addr);
      else
        b.Free(t, it->addr);
    }
  }
  return b.ToBinary();
}

analysis::Report Analyze(const std::string& bytes) {
  auto report = analysis::AnalyzeBuffers({bytes}, {"run.trace"}, {});
  EXPECT_TRUE(report.ok()) << report.status();
  return report.ok() ? *std::move(report) : analysis::Report{};
}

const analysis::Accumulator* Find(const analysis::Report& r, const std::string& kind) {
  for (const analysis::Accumulator& a : r.accumulators) {
    if (a.kind == kind)
      return &a;
  }
  return nullptr;
}

double Sum(const analysis::Series& s) {
  double t = 0;
  for (double v : s) t += v;
  return t;
}

TEST(Survivors, FreedOnlyAtTearDownCountAsSurvivorsOfTheLoop) {
  const analysis::Report r = Analyze(LoopWithTearDown(200, /*free_at_teardown=*/true));
  ASSERT_EQ(r.iterations.count, 200);
  const analysis::Accumulator* mem = Find(r, "device_allocations");
  ASSERT_NE(mem, nullptr);
  // Two per iteration, all of them allocated in the loop.
  EXPECT_EQ(Sum(mem->survivors_by_alloc_iteration), 400);
  EXPECT_EQ(mem->survivors_by_alloc_iteration[10], 2);
  ASSERT_FALSE(mem->examples.empty());
  for (const analysis::HandleExample& e : mem->examples) {
    EXPECT_EQ(e.free_iteration, 200);  // freed in the tear-down
    EXPECT_EQ(e.size_bytes, 512u);
  }
  const analysis::Accumulator* streams = Find(r, "streams");
  ASSERT_NE(streams, nullptr);
  EXPECT_EQ(Sum(streams->survivors_by_alloc_iteration), 200);
  ASSERT_FALSE(streams->examples.empty());
  EXPECT_EQ(streams->examples.front().free_iteration, 200);
  // Nothing is live at the end of the trace.
  EXPECT_EQ(r.ranks[0].leaks.handles, 0u);
  EXPECT_TRUE(r.ranks[0].leaks.handles_by_type.empty());
  EXPECT_NE(analysis::StatePhrase(*mem).find("freed only after the loop ends"), std::string::npos)
      << analysis::StatePhrase(*mem);
}

TEST(Survivors, NeverFreedAreSurvivorsAndLeaks) {
  const analysis::Report r = Analyze(LoopWithTearDown(200, /*free_at_teardown=*/false));
  const analysis::Accumulator* mem = Find(r, "device_allocations");
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(Sum(mem->survivors_by_alloc_iteration), 400);
  ASSERT_FALSE(mem->examples.empty());
  EXPECT_EQ(mem->examples.front().free_iteration, -2);
  EXPECT_EQ(r.ranks[0].leaks.handles, 400u);
  EXPECT_NE(analysis::StatePhrase(*mem).find("never freed"), std::string::npos);
}

TEST(Survivors, TemporariesAreNotSurvivors) {
  const analysis::Report r = Analyze(LoopWithTearDown(200, true));
  for (const analysis::Accumulator& a : r.accumulators) {
    for (const analysis::HandleExample& e : a.examples) EXPECT_NE(e.size_bytes, 4096u);
  }
}

}  // namespace
}  // namespace cuclimb::testing
