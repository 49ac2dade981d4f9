// SPDX-License-Identifier: Apache-2.0
// End to end on simulated training loops: a planted accumulator of every kind with its flat
// control, the cubecl climb, a GPU-only climb beside an unrelated leak, warm-up growth that
// stops, growth that starts late, bursts, noise and JIT warm-up.
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "scenario_util.h"

namespace cuclimb::testing {
namespace {

using analysis::Accumulator;
using analysis::Report;

TEST(Scenarios, FlatControlHasNoFindings) {
  const Report r = AnalyzeSim(SimOptions{});
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  EXPECT_TRUE(r.accumulators.empty()) << Text(r);
  for (const auto& range : r.ranges) EXPECT_FALSE(range.climbing) << range.name << Text(r);
  EXPECT_EQ(r.iterations.source, "nvtx_range");
  EXPECT_EQ(r.iterations.name, "iteration");
  EXPECT_EQ(r.iterations.count, 120);
  const auto& rank = r.ranks[0];
  EXPECT_EQ(rank.leaks.unmatched_frees, 0u);
  EXPECT_EQ(rank.leaks.replaced_allocations, 0u) << "E's parameters reuse addresses after frees";
  EXPECT_EQ(rank.leaks.handles, 0u);
}

struct KindCase {
  const char* kind;
  std::function<void(SimOptions*)> plant;
  double growth;
  const char* unit;
  const char* key_part;  // expected in the key
};

class PlantedKind : public ::testing::TestWithParam<KindCase> {};

TEST_P(PlantedKind, FoundAloneWithEvidence) {
  const KindCase& c = GetParam();
  SimOptions o;
  c.plant(&o);
  const Report r = AnalyzeSim(o);
  ASSERT_EQ(r.accumulators.size(), 1u) << c.kind << Text(r);
  const Accumulator& a = r.accumulators[0];
  EXPECT_EQ(a.kind, c.kind);
  EXPECT_EQ(a.rank, 1);
  EXPECT_EQ(a.unit, c.unit);
  EXPECT_NEAR(a.growth_per_iter, c.growth, 0.05 * c.growth) << Text(r);
  EXPECT_LT(a.p_value, 1e-10);
  EXPECT_EQ(a.growth_start_iteration, 0);
  EXPECT_NE(a.key.find(c.key_part), std::string::npos) << a.key;
  EXPECT_EQ(a.values.size(), 120u);
  EXPECT_EQ(r.verdict, "flat") << "no step-time effect was planted" << Text(r);
  if (a.unit == std::string("handles") && a.kind != std::string("nvtx_regions")) {
    ASSERT_FALSE(a.examples.empty());
    EXPECT_EQ(a.examples[0].alloc_iteration, 0);
    EXPECT_EQ(a.examples[0].free_iteration, -2);
    double survivors = 0;
    for (double v : a.survivors_by_alloc_iteration) survivors += v;
    EXPECT_NEAR(survivors, 120 * c.growth, 1e-9);
  }
  EXPECT_FALSE(a.evidence.empty());
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, PlantedKind,
    ::testing::Values(
        KindCase{"device_allocations", [](SimOptions* o) { o->leak_device = 2; }, 2, "handles",
                 "Adam::step_retain"},
        KindCase{"pinned_allocations", [](SimOptions* o) { o->leak_pinned = 1; }, 1, "handles",
                 "E::new"},
        KindCase{"managed_allocations", [](SimOptions* o) { o->leak_managed = 1; }, 1, "handles",
                 "managed_buffer"},
        KindCase{"vmm_mappings", [](SimOptions* o) { o->leak_vmm = 1; }, 1, "handles",
                 "vmm_arena::grow"},
        KindCase{"streams", [](SimOptions* o) { o->leak_streams = 1; }, 1, "handles", "E::new"},
        KindCase{"events", [](SimOptions* o) { o->leak_events = 3; }, 3, "handles", "E::new"},
        KindCase{"modules", [](SimOptions* o) { o->leak_modules = 1; }, 1, "handles", "E::new"},
        KindCase{"graphs", [](SimOptions* o) { o->leak_graphs = 1; }, 1, "handles", "E::new"},
        KindCase{"nvtx_regions", [](SimOptions* o) { o->leak_regions = 2; }, 2, "handles",
                 "heap 0x9000"},
        KindCase{"pool_reserved", [](SimOptions* o) { o->pool_growth_bytes = 2 << 20; }, 2 << 20,
                 "bytes", "pool 0x5000"},
        KindCase{"host_function", [](SimOptions* o) { o->host_fn_growth = 5; }, 0.5, "samples",
                 "grow_fn"}),
    [](const ::testing::TestParamInfo<KindCase>& param_info) {
      return std::string(param_info.param.kind);
    });

TEST(Scenarios, CubeclClimbIsExplainedByTheRetainedAllocations) {
  SimOptions o;
  o.leak_device = 2;
  o.host_ns_per_leaked = 100;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "climbing");
  const auto* step = FindRange(r, "P/step");
  ASSERT_NE(step, nullptr);
  EXPECT_TRUE(step->climbing) << Text(r);
  EXPECT_GT(step->trend.change_pct, 15);
  EXPECT_LT(step->trend.p_value, 1e-10);
  // Both rise in straight lines from iteration 0, so the leak is the likely cause: the only state
  // that grows, and P/step's extra time is host code next to its allocation calls.
  EXPECT_EQ(CauseOf(step), "device_allocations:MemoryManagement::reserve <- Adam::step_retain")
      << Text(r);
  EXPECT_EQ(step->cause.verdict, "likely_cause");
  EXPECT_TRUE(step->sets_verdict);
  EXPECT_EQ(r.cause.kind, "accumulator");
  const auto* e_step = FindRange(r, "E/step");
  ASSERT_NE(e_step, nullptr);
  EXPECT_FALSE(e_step->climbing);
  const Accumulator& a = r.accumulators.at(0);
  EXPECT_EQ(a.kind, "device_allocations");
  EXPECT_EQ(a.apis, std::vector<std::string>{"cuMemAllocAsync"});
  EXPECT_EQ(a.size_classes, std::vector<std::string>{"(256 B, 512 B]"});
  EXPECT_NEAR(a.bytes_per_iter, 1024, 1);
  ASSERT_FALSE(a.explanations.empty());
  bool explains_step = false;
  for (const auto& e : a.explanations) {
    if (e.range == "P/step") {
      explains_step = true;
      EXPECT_EQ(e.verdict, "likely_cause") << e.reason;
      EXPECT_EQ(e.grounds, (std::vector<std::string>{"unique", "mechanism"}));
      EXPECT_EQ(e.mechanism, "host");
      EXPECT_GT(e.share, 0.8);
    }
  }
  EXPECT_TRUE(explains_step);
  // The decomposition puts the growth in host time, not in the GPU.
  EXPECT_GT(step->decomposition.host.delta_ms, 0.8 * step->decomposition.wall.delta_ms);
  EXPECT_LT(std::fabs(step->decomposition.gpu.delta_ms), 0.1 * step->decomposition.wall.delta_ms);
  EXPECT_FALSE(a.site.frames.empty());
  EXPECT_EQ(a.site.frames[0], "cuMemAllocAsync");
}

TEST(Scenarios, GpuOnlyClimbIsNotBlamedOnARisingHandleCount) {
  SimOptions o;
  o.leak_events = 1;        // rises every iteration, costs nothing
  o.gpu_slowdown_ns = 300;  // the adam kernel gets slower on the GPU
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "climbing");
  const auto* step = FindRange(r, "P/step");
  ASSERT_NE(step, nullptr);
  EXPECT_TRUE(step->climbing) << Text(r);
  EXPECT_TRUE(step->explained_by.empty()) << Text(r);
  EXPECT_NE(step->where_time_goes.find("not explained by any accumulator"), std::string::npos);
  EXPECT_NE(step->where_time_goes.find("cuStreamSynchronize"), std::string::npos)
      << step->where_time_goes;
  EXPECT_NE(step->where_time_goes.find("adam_update_kernel"), std::string::npos)
      << step->where_time_goes;
  const Accumulator* events = FindKind(r, "events");
  ASSERT_NE(events, nullptr) << Text(r);
  EXPECT_TRUE(events->explains.empty());
  bool correlated = false;
  for (const auto& e : events->explanations)
    correlated |= e.range == "P/step" && e.verdict == "correlated_only";
  EXPECT_TRUE(correlated);
  bool slowing = false;
  for (const auto& k : r.ranks[0].kernels) {
    if (k.name == "adam_update_kernel")
      slowing = k.slowing;
    if (k.name == "gemm_kernel") {
      EXPECT_FALSE(k.slowing);
    }
  }
  EXPECT_TRUE(slowing);
}

TEST(Scenarios, WarmupGrowthThatStopsIsNotAnAccumulator) {
  SimOptions o;
  o.leak_device = 3;
  o.leak_until = 30;
  o.host_ns_per_leaked = 100;
  const Report r = AnalyzeSim(o);
  EXPECT_TRUE(r.accumulators.empty()) << Text(r);
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  // They are still leaks at exit.
  const auto& leaks = r.ranks[0].leaks;
  EXPECT_EQ(leaks.handles, 90u);
  ASSERT_FALSE(leaks.by_site.empty());
  EXPECT_EQ(leaks.by_site[0].handles, 90u);
  EXPECT_NE(leaks.by_site[0].key.find("Adam::step_retain"), std::string::npos);
}

TEST(Scenarios, GrowthThatStartsLateIsDatedFromItsStart) {
  SimOptions o;
  o.leak_device = 2;
  o.leak_from = 40;
  const Report r = AnalyzeSim(o);
  ASSERT_EQ(r.accumulators.size(), 1u) << Text(r);
  EXPECT_NEAR(static_cast<double>(r.accumulators[0].growth_start_iteration), 40, 2);
  ASSERT_FALSE(r.accumulators[0].examples.empty());
  EXPECT_GE(r.accumulators[0].examples[0].alloc_iteration, 38);
}

TEST(Scenarios, BurstyLeakExplainsByShape) {
  SimOptions o;
  o.burst_every = 10;
  o.burst_size = 20;
  o.host_ns_per_leaked = 100;
  const Report r = AnalyzeSim(o);
  const auto* step = FindRange(r, "P/step");
  ASSERT_NE(step, nullptr);
  ASSERT_TRUE(step->climbing) << Text(r);
  ASSERT_EQ(step->explained_by.size(), 1u) << Text(r);
  const Accumulator* a = FindKind(r, "device_allocations");
  ASSERT_NE(a, nullptr);
  for (const auto& e : a->explanations) {
    if (e.range == "P/step") {
      EXPECT_GT(e.partial_r, 0.5) << e.reason;
      EXPECT_NE(e.reason.find("follows its ups and downs"), std::string::npos) << e.reason;
    }
  }
}

TEST(Scenarios, BurstyLeakBesideAGpuClimbIsOnlyCorrelated) {
  SimOptions o;
  o.burst_every = 10;
  o.burst_size = 20;
  o.gpu_slowdown_ns = 300;
  const Report r = AnalyzeSim(o);
  const auto* step = FindRange(r, "P/step");
  ASSERT_NE(step, nullptr);
  ASSERT_TRUE(step->climbing) << Text(r);
  EXPECT_TRUE(step->explained_by.empty()) << Text(r);
}

TEST(Scenarios, NoisyFlatStaysFlatAndNoisyClimbIsFound) {
  SimOptions flat;
  flat.noise = 0.3;
  flat.spike_rate = 0.05;
  flat.seed = 7;
  Report r = AnalyzeSim(flat);
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  EXPECT_TRUE(r.accumulators.empty()) << Text(r);
  SimOptions climb = flat;
  climb.leak_device = 2;
  climb.host_ns_per_leaked = 100;
  r = AnalyzeSim(climb);
  EXPECT_EQ(r.verdict, "climbing") << Text(r);
  const auto* step = FindRange(r, "P/step");
  ASSERT_NE(step, nullptr);
  EXPECT_TRUE(step->climbing);
  EXPECT_NE(CauseOf(step), "") << Text(r);
}

TEST(Scenarios, JitWarmupIsCutNotReportedAsAFall) {
  SimOptions o;
  o.jit_warmup_iterations = 10;
  const Report r = AnalyzeSim(o);
  EXPECT_EQ(r.verdict, "flat") << Text(r);
  const auto* step = FindRange(r, "P/step");
  ASSERT_NE(step, nullptr);
  EXPECT_GE(step->trend.warmup, 10);
  EXPECT_FALSE(step->trend.falling) << Text(r);
}

TEST(Scenarios, SeveralAccumulatorsAreRankedByWhatTheyExplain) {
  SimOptions o;
  o.leak_device = 2;
  o.host_ns_per_leaked = 100;
  o.leak_events = 1;
  o.leak_streams = 1;
  const Report r = AnalyzeSim(o);
  ASSERT_EQ(r.accumulators.size(), 3u) << Text(r);
  EXPECT_EQ(r.accumulators[0].kind, "device_allocations");
  EXPECT_TRUE(Blamed(r.accumulators[0])) << Text(r);
  for (size_t i = 0; i < r.accumulators.size(); ++i)
    EXPECT_EQ(r.accumulators[i].rank, static_cast<int>(i) + 1);
}

TEST(Scenarios, StateSeriesCoverMemoryHandlesPoolsAndTemporaries) {
  SimOptions o;
  o.leak_device = 1;
  const Report r = AnalyzeSim(o);
  const auto& rank = r.ranks[0];
  const auto* live = FindState(rank, "live_handles", "memory_kind", "pool");
  ASSERT_NE(live, nullptr);
  EXPECT_NEAR(live->values.back() - live->values.front(), 119, 1e-9);
  const auto* allocs = FindState(rank, "allocs", "total", "all");
  ASSERT_NE(allocs, nullptr);
  // 6 E params + 1 leak + churn (pinned, managed) + 8 temporaries per iteration.
  EXPECT_DOUBLE_EQ(allocs->values[50], 6 + 1 + 2 + 8);
  ASSERT_NE(FindState(rank, "pool.reserved", "pool", "pool 0x5000"), nullptr);
  ASSERT_NE(FindState(rank, "device.free", "device", "device 0"), nullptr);
  ASSERT_NE(FindState(rank, "live_handles", "handle_type", "event"), nullptr);
  ASSERT_NE(FindState(rank, "live_regions", "heap", "heap 0x9000"), nullptr);
  ASSERT_NE(FindState(rank, "distinct_kernels", "total", "all"), nullptr);
  const auto* copies = FindState(rank, "copies", "total", "all");
  ASSERT_NE(copies, nullptr);
  for (double v : copies->values)
    EXPECT_EQ(v, 1) << "the loader's copy arrives out of order but lands in its iteration";
  // E's 6 parameters, the churned pinned and managed buffers and 8 step temporaries.
  EXPECT_EQ(rank.temporaries.count[10], 16);
  EXPECT_GT(rank.temporaries.lifetime_histogram.at("same"), 0u);
  EXPECT_GT(rank.peak.live_bytes, 0u);
  ASSERT_EQ(rank.fragmentation.pools.size(), 1u);
  EXPECT_NEAR(rank.fragmentation.pools[0].last_fragmentation, 1 - 40.0 / 64, 1e-9);
  EXPECT_GT(rank.overhead.self_ms_total, 0);
  ASSERT_FALSE(rank.kernels.empty());
  EXPECT_EQ(rank.kernels[0].name, "gemm_kernel");  // most GPU time
  EXPECT_EQ(rank.process.pid, 4242);
  ASSERT_EQ(rank.process.devices.size(), 1u);
  EXPECT_EQ(rank.threads[0].tid, 1u);
  EXPECT_EQ(rank.threads[0].name, "main");
}

TEST(Scenarios, LateGpuRecordsCountLikePromptOnes) {
  SimOptions late;
  late.gpu_slowdown_ns = 100;
  SimOptions prompt = late;
  prompt.late_kernels = false;
  const Report a = AnalyzeSim(late), b = AnalyzeSim(prompt);
  const auto* sa = FindRange(a, "P/step");
  const auto* sb = FindRange(b, "P/step");
  ASSERT_TRUE(sa && sb);
  ASSERT_EQ(sa->decomposition.gpu.ms.size(), sb->decomposition.gpu.ms.size());
  for (size_t i = 0; i < sa->decomposition.gpu.ms.size(); ++i) {
    EXPECT_NEAR(sa->decomposition.gpu.ms[i], sb->decomposition.gpu.ms[i], 1e-9) << i;
  }
}

}  // namespace
}  // namespace cuclimb::testing
