// SPDX-License-Identifier: Apache-2.0
// Work on other threads counts: backward on an autograd-like helper thread while the main thread
// waits in "P/bwd", a data loader copying outside any range, the writer's batch order mixing
// the threads; with controls.
#include <cmath>

#include <gtest/gtest.h>

#include "scenario_util.h"

namespace cuclimb::testing {
namespace {

using analysis::Component;
using analysis::RangeReport;
using analysis::Report;

constexpr uint32_t kAutograd = 3;

double Sum(const analysis::Series& s) {
  double t = 0;
  for (double v : s) t += v;
  return t;
}

const Component* Part(const std::vector<Component>& parts, const std::string& name) {
  for (const Component& c : parts) {
    if (c.name == name)
      return &c;
  }
  return nullptr;
}

// The helper thread's API time (ms), from the trace itself.
double HelperApiMs(const std::string& bytes, const char* api = nullptr) {
  const auto events = ReadAll(bytes);
  auto reader = trace::TraceReader::FromBuffer(bytes);
  trace::Event ev{};
  while ((*reader)->Next(&ev)) {
  }
  double ns = 0;
  for (const format::Event& e : events) {
    if (e.tid != kAutograd || e.dur <= 0)
      continue;
    if (api == nullptr || (*reader)->Str(e.api) == api)
      ns += static_cast<double>(e.dur);
  }
  return ns * 1e-6;
}

SimOptions Backward() {
  SimOptions o;
  o.backward_on_helper = true;
  o.writer_batch_ns = 1'500'000;  // about two iterations per batch
  return o;
}

TEST(Threads, BackwardOnAHelperThreadCountsForTheRangeTheMainThreadWaitsIn) {
  std::string bytes;
  const Report r = AnalyzeSim(Backward(), {}, &bytes);
  const RangeReport* bwd = FindRange(r, "P/bwd");
  ASSERT_NE(bwd, nullptr) << Text(r);
  const double helper_ms = HelperApiMs(bytes);
  ASSERT_GT(helper_ms, 0);
  // Every call of the helper falls inside a P/bwd instance: all of its API time is there.
  EXPECT_NEAR(Sum(bwd->decomposition.api.ms), helper_ms, 1e-6 * helper_ms) << Text(r);
  const Component* alloc = Part(bwd->decomposition.by_api, "cuMemAllocAsync");
  ASSERT_NE(alloc, nullptr);
  EXPECT_NEAR(Sum(alloc->ms), HelperApiMs(bytes, "cuMemAllocAsync"), 1e-6 * helper_ms);
  ASSERT_NE(Part(bwd->decomposition.by_api, "cuLaunchKernel"), nullptr);
  // The backward kernels' GPU time too: 4 steps × 4 kernels × 12 µs per iteration.
  ASSERT_NE(Part(bwd->decomposition.by_kernel, "gemm_grad_kernel"), nullptr);
  EXPECT_NEAR(Sum(bwd->decomposition.gpu.ms) / 120, 0.192, 0.02);
  // And the enclosing ranges on the main thread.
  const RangeReport* step = FindRange(r, "P/step");
  ASSERT_NE(step, nullptr);
  ASSERT_NE(Part(step->decomposition.by_kernel, "gemm_grad_kernel"), nullptr);
  const Component* step_alloc = Part(step->decomposition.by_api, "cuMemAllocAsync");
  ASSERT_NE(step_alloc, nullptr);
  EXPECT_GT(Sum(step_alloc->ms), Sum(alloc->ms));  // its own temporary plus the helper's
  // The main thread makes no call in P/bwd: what is left is its wait, not the helper's work.
  EXPECT_LT(Sum(bwd->decomposition.host.ms), Sum(bwd->total_ms) - 0.9 * helper_ms);
}

TEST(Threads, TheWritersBatchOrderChangesNothing) {
  SimOptions ordered = Backward();
  ordered.writer_batch_ns = 0;
  const Report a = AnalyzeSim(ordered), b = AnalyzeSim(Backward());
  for (const char* name : {"P/bwd", "P/step", "iteration"}) {
    const RangeReport *ra = FindRange(a, name), *rb = FindRange(b, name);
    ASSERT_NE(ra, nullptr);
    ASSERT_NE(rb, nullptr);
    ASSERT_EQ(ra->decomposition.api.ms.size(), rb->decomposition.api.ms.size());
    for (size_t i = 0; i < ra->decomposition.api.ms.size(); ++i) {
      EXPECT_NEAR(ra->decomposition.api.ms[i], rb->decomposition.api.ms[i], 1e-9)
          << name << " iteration " << i;
      EXPECT_NEAR(ra->decomposition.gpu.ms[i], rb->decomposition.gpu.ms[i], 1e-9)
          << name << " iteration " << i;
    }
  }
}

TEST(Threads, AClimbInTheHelpersAllocationsIsPlacedInsideThem) {
  SimOptions o = Backward();
  o.leak_device = 2;
  o.helper_alloc_ns_per_leaked = 15;  // the allocator scans what was retained
  o.noise = 0.05;
  o.spike_rate = 0.02;  // GC pauses
  const Report r = AnalyzeSim(o);
  const RangeReport* bwd = FindRange(r, "P/bwd");
  ASSERT_NE(bwd, nullptr);
  EXPECT_TRUE(bwd->climbing) << Text(r);
  const Component* alloc = Part(bwd->decomposition.by_api, "cuMemAllocAsync");
  ASSERT_NE(alloc, nullptr);
  EXPECT_GT(alloc->delta_ms, 0.8 * bwd->decomposition.wall.delta_ms) << Text(r);
  EXPECT_NE(bwd->where_time_goes.find("inside cuMemAllocAsync"), std::string::npos)
      << bwd->where_time_goes;
  EXPECT_EQ(bwd->where_time_goes.find("host time between CUDA calls +"), std::string::npos)
      << bwd->where_time_goes;

  SimOptions control = Backward();  // the same loop without the leak: nothing climbs
  control.noise = 0.05;
  control.spike_rate = 0.02;
  const Report c = AnalyzeSim(control);
  const RangeReport* flat = FindRange(c, "P/bwd");
  ASSERT_NE(flat, nullptr);
  EXPECT_FALSE(flat->climbing) << Text(c);
  EXPECT_EQ(c.verdict, "flat") << Text(c);
}

// Hand-built: a loader thread copies while the main thread is inside "step", and again between
// iterations with no range open; its batch is read before the main thread's.
TEST(Threads, ALoaderOutsideAnyRangeCountsForTheRangeOpenOnTheIterationThread) {
  TraceBuilder b;
  std::vector<format::Event> loader;
  int64_t t = 1000;
  for (int i = 0; i < 12; ++i) {
    b.Push(t, "iteration");
    b.Push(t + 10, "step");
    b.Launch(t + 20, 5, "k", static_cast<uint64_t>(i + 1));
    b.Pop(t + 500);
    b.Pop(t + 600);
    format::Event inside = format::MakeEvent(format::EventType::kCopy);
    inside.tid = 2;
    inside.ts = t + 100;  // while "step" is open
    inside.dur = 40;
    inside.api = b.Str("cuMemcpyHtoDAsync_v2");
    format::Event between = inside;
    between.ts = t + 700;  // after "iteration" ended: no range open
    between.dur = 7;
    format::Event wait = format::MakeEvent(format::EventType::kSync);
    wait.tid = 2;
    wait.ts = t + 150;  // the loader waits for its own copy: not the main thread's wait
    wait.dur = 90;
    wait.api = b.Str("cuStreamSynchronize");
    loader.push_back(inside);
    loader.push_back(wait);
    loader.push_back(between);
    for (const format::Event& e : loader) b.AddEvent(e);
    loader.clear();
    t += 1000;
  }
  // The writer drains the loader first: its batch of three iterations comes before the main
  // thread's events of the same interval.
  std::stable_sort(b.mutable_events().begin(), b.mutable_events().end(),
                   [](const format::Event& x, const format::Event& y) {
                     const int64_t bx = (x.ts - 1000) / 3000, by = (y.ts - 1000) / 3000;
                     if (bx != by)
                       return bx < by;
                     return x.tid == 2 && y.tid != 2;
                   });
  const std::string bytes = b.ToBinary();
  auto report = analysis::AnalyzeBuffers({bytes}, {"loader.trace"}, {});
  ASSERT_TRUE(report.ok()) << report.status();
  const RangeReport* step = FindRange(*report, "step");
  const RangeReport* it = FindRange(*report, "iteration");
  ASSERT_NE(step, nullptr);
  ASSERT_NE(it, nullptr);
  const Component* copy = Part(step->decomposition.by_api, "cuMemcpyHtoDAsync_v2");
  ASSERT_NE(copy, nullptr) << Text(*report);
  EXPECT_NEAR(Sum(copy->ms), 12 * 40e-6, 1e-12);  // the copies inside "step" only
  EXPECT_EQ(Part(step->decomposition.by_sync, "cuStreamSynchronize"), nullptr);
  EXPECT_EQ(Sum(step->decomposition.sync.ms), 0);
  const Component* it_copy = Part(it->decomposition.by_api, "cuMemcpyHtoDAsync_v2");
  ASSERT_NE(it_copy, nullptr);
  EXPECT_NEAR(Sum(it_copy->ms), 12 * 40e-6, 1e-12);  // between iterations: no range
  // Both count for the iteration they fall in (the gap after iteration i is iteration i's; the
  // one after the last iteration is the epilogue).
  const auto* copies = FindState(report->ranks[0], "copies", "total", "all");
  ASSERT_NE(copies, nullptr);
  EXPECT_EQ(Sum(copies->values), 23);
}

TEST(Threads, AHelperWithItsOwnRangeOpenKeepsItsWork) {
  TraceBuilder b;
  for (int i = 0; i < 12; ++i) {
    const int64_t t = 1000 + 1000 * i;
    b.Push(t, "iteration");
    b.Push(t + 50, "load", 2);  // the helper's own range
    b.Api(t + 60, 30, "cuMemcpyHtoD_v2", 2);
    b.Pop(t + 100, 2);
    b.Launch(t + 200, 5, "k", static_cast<uint64_t>(i + 1));
    b.Pop(t + 600);
  }
  const std::string bytes = b.ToBinary();
  auto report = analysis::AnalyzeBuffers({bytes}, {"own.trace"}, {});
  ASSERT_TRUE(report.ok());
  const RangeReport* it = FindRange(*report, "iteration");
  ASSERT_NE(it, nullptr);
  EXPECT_EQ(Part(it->decomposition.by_api, "cuMemcpyHtoD_v2"), nullptr) << Text(*report);
}

}  // namespace
}  // namespace cuclimb::testing
