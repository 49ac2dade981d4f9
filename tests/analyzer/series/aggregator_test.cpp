// SPDX-License-Identifier: Apache-2.0
// The streaming model's edge cases, end to end on hand-built traces: handle identity, NVTX heaps
// and regions, VMM, correlation of GPU records (early, late, graphs), ranges across threads and
// nested in themselves, out-of-order threads, the pending sums and memos of the common paths.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../analysis/scenario_util.h"

namespace cuclimb::testing {
namespace {

using format::EventType;
using format::HandleType;
using format::MemoryKind;

constexpr int kIterations = 12;
constexpr uint64_t kHeap = 0x4400;

analysis::Report AnalyzeBuilt(const TraceBuilder& b) {
  const std::string bytes = b.ToBinary();
  auto r = analysis::AnalyzeBuffers({bytes}, {"edge.trace"}, {});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : analysis::Report{};
}

const analysis::StateSeries& State(const analysis::Report& r, const std::string& metric,
                                   const std::string& dim, const std::string& key) {
  const analysis::StateSeries* s = FindState(r.ranks.at(0), metric, dim, key);
  EXPECT_NE(s, nullptr) << metric << "/" << dim << "/" << key;
  static const analysis::StateSeries empty;
  return s != nullptr ? *s : empty;
}

TEST(Model, HandlesRegionsAndVmmAreMatched) {
  TraceBuilder b;
  b.Add(EventType::kHeap, 5).handle = kHeap;
  for (int i = 0; i < kIterations; ++i) {
    const int64_t t = 1000 + i * 1000;
    b.Push(t, "it");
    b.Region(t + 10, kHeap, 0x9000, 256);
    b.Region(t + 20, kHeap, 0x9100, 256);
    Event& r3 = b.Region(t + 30, kHeap, 0x9200, 64);
    r3.handle = 77;
    Event& f3 = b.RegionFree(t + 40, 0, 0);
    f3.handle = 77;                                       // freed by handle only
    b.Add(EventType::kHeapReset, t + 50).handle = kHeap;  // drops the other two
    Event& map = b.Add(EventType::kVmm, t + 60);
    map.kind = static_cast<uint8_t>(format::VmmOp::kMap);
    map.addr = 0x7000000;
    map.size = 2 << 20;
    Event& unmap = b.Add(EventType::kVmm, t + 70);
    unmap.kind = static_cast<uint8_t>(format::VmmOp::kUnmap);
    unmap.addr = 0x7000000;
    b.Create(t + 80, HandleType::kEvent, 0xE0);  // same handle value every iteration,
    b.Alloc(t + 90, 0xA000, 512);                // never destroyed: replaced, not grown
    b.Free(t + 100, 0xA000);
    b.Alloc(t + 110, 0xA000, 512);  // address reuse: a new handle
    b.Free(t + 120, 0xA000);
    b.Free(t + 130, 0xBAD0 + i);  // never allocated
    b.Launch(t + 140, 5, "k", i + 1);
    b.Pop(t + 500);
  }
  const analysis::Report r = AnalyzeBuilt(b);
  EXPECT_EQ(r.iterations.count, kIterations);
  EXPECT_TRUE(r.accumulators.empty()) << Text(r);
  for (double v : State(r, "live_regions", "heap", "heap 0x4400").values) EXPECT_EQ(v, 0);
  for (double v : State(r, "live_handles", "memory_kind", "vmm_mapping").values) EXPECT_EQ(v, 0);
  for (double v : State(r, "live_handles", "handle_type", "event").values) EXPECT_EQ(v, 1);
  for (double v : State(r, "live_handles", "total", "all").values) EXPECT_EQ(v, 0);
  const auto& rank = r.ranks[0];
  EXPECT_EQ(rank.leaks.unmatched_frees, static_cast<uint64_t>(kIterations));
  EXPECT_EQ(rank.leaks.replaced_allocations, 0u);
  EXPECT_EQ(rank.leaks.handles_by_type.at("event"), 1u);
  EXPECT_EQ(rank.temporaries.count[3], 2);
}

// A CUPTI MEMORY2 record: an alloc or free event with tid 0 and the call's correlation id.
Event& Activity(TraceBuilder* b, EventType type, int64_t ts, uint64_t addr, uint64_t size,
                uint64_t corr) {
  Event& e = b->Add(type, ts);
  e.tid = 0;
  e.api = b->Str("MEMORY2");
  e.kind = static_cast<uint8_t>(MemoryKind::kPool);
  e.addr = addr;
  e.size = size;
  e.corr = corr;
  e.device = 0;
  return e;
}

TEST(Model, ActivityRecordsOfHookedCallsAreNotCountedTwice) {
  TraceBuilder b;
  const uint32_t site = b.Stack({"cuMemAllocAsync", "Pool::grow", "train"});
  uint64_t corr = 100;
  for (int i = 0; i < kIterations; ++i) {
    const int64_t t = 1000 + i * 1000;
    b.Push(t, "it");
    // Callback first, MEMORY2 record later (the usual order).
    const uint64_t a = ++corr, f = ++corr;
    b.Alloc(t + 10, 0xA000, 512, MemoryKind::kPool, "cuMemAllocAsync", site).corr = a;
    b.Free(t + 20, 0xA000).corr = f;
    // MEMORY2 first, then the callback, for a leaked allocation.
    const uint64_t l = ++corr;
    Activity(&b, EventType::kAlloc, t + 30, 0xB000 + i * 512, 512, l);
    b.Alloc(t + 30, 0xB000 + i * 512, 512, MemoryKind::kPool, "cuMemAllocAsync", site).corr = l;
    // A graph allocation only MEMORY2 sees, returned in the same iteration.
    Activity(&b, EventType::kAlloc, t + 40, 0xF0000, 4096, ++corr);
    Activity(&b, EventType::kFree, t + 50, 0xF0000, 0, ++corr);
    b.Launch(t + 60, 5, "k", ++corr);
    b.Pop(t + 500);
    Activity(&b, EventType::kAlloc, t + 600, 0xA000, 512, a);  // the late duplicates
    Activity(&b, EventType::kFree, t + 610, 0xA000, 0, f);
  }
  const analysis::Report r = AnalyzeBuilt(b);
  for (double v : State(r, "allocs", "total", "all").values) EXPECT_EQ(v, 3);
  const auto& rank = r.ranks[0];
  EXPECT_EQ(rank.leaks.unmatched_frees, 0u);
  EXPECT_EQ(rank.leaks.replaced_allocations, 0u);
  EXPECT_EQ(rank.leaks.activity_duplicates, static_cast<uint64_t>(3 * kIterations));
  ASSERT_EQ(r.accumulators.size(), 1u) << Text(r);
  EXPECT_EQ(r.accumulators[0].key, "Pool::grow <- train");  // the callback's stack won
  EXPECT_EQ(r.accumulators[0].growth_per_iter, 1);
  for (const auto& api : rank.apis) EXPECT_NE(api.name, "MEMORY2");
}

TEST(Model, GpuRecordsBeforeAfterAndFromGraphs) {
  TraceBuilder b;
  uint64_t corr = 0;
  for (int i = 0; i < kIterations; ++i) {
    const int64_t t = 10000 + i * 10000;
    b.Push(t, "it");
    b.Push(t + 10, "step");
    const uint64_t early = ++corr;
    b.Kernel(t + 5, 100, "early_k", early);  // the GPU record is read before its launch
    b.Launch(t + 20, 5, "early_k", early);
    const uint64_t graph = ++corr;
    Event& g = b.Launch(t + 30, 5, "graph_k", graph);
    g.handle = 0x6000;  // cuGraphLaunch: several kernels share the correlation id
    b.Pop(t + 40);
    b.Pop(t + 5000);
    for (int k = 0; k < 3; ++k) b.Kernel(t + 6000 + k * 100, 50, "graph_k", graph);  // late
  }
  const analysis::Report r = AnalyzeBuilt(b);
  const auto* step = FindRange(r, "step");
  ASSERT_NE(step, nullptr);
  for (double ms : step->decomposition.gpu.ms) EXPECT_NEAR(ms, (100 + 3 * 50) * 1e-6, 1e-12);
  bool found = false;
  for (const auto& k : r.ranks[0].kernels) {
    if (k.name == "graph_k") {
      found = true;
      EXPECT_EQ(k.launches, static_cast<uint64_t>(kIterations));
      EXPECT_EQ(k.executions, static_cast<uint64_t>(3 * kIterations));
    }
  }
  EXPECT_TRUE(found);
}

// GPU and API time are summed per (signature, kernel or API) in a table of 64 entries before
// they reach the ranges: more pairs than entries (evictions), ranges that change between the
// launch and its late GPU record, jittered durations and a kernel longer than 2^32 ns (added
// directly) must all give the sums of a walk per event.
TEST(Model, RangeTimeSumsSurviveManyKernelsAndApis) {
  TraceBuilder b;
  uint64_t corr = 0;
  constexpr int kKernels = 150, kApis = 90;
  std::vector<double> step_gpu(kIterations, 0), step_api(kIterations, 0);
  std::vector<double> huge_gpu(kIterations, 0);
  for (int i = 0; i < kIterations; ++i) {
    const int64_t t = 100000000LL * (i + 1);
    b.Push(t, "it");
    b.Push(t + 10, "step");
    struct Late {
      uint64_t corr;
      int64_t dur;
      std::string name;
    };
    std::vector<Late> late;  // this step's kernels
    int64_t ts = t + 100;
    for (int k = 0; k < kKernels; ++k) {
      const std::string name = "k" + std::to_string(k);
      const int64_t launch_dur = 3 + (k * 7 + i) % 11;
      b.Launch(ts, launch_dur, name, ++corr);
      step_api[i] += static_cast<double>(launch_dur);
      const int64_t dur = 1000 + (k * 37 + i * 11) % 997;
      late.push_back({corr, dur, name});
      step_gpu[i] += static_cast<double>(dur);
      const int64_t api_dur = 20 + (k * 13 + i * 5) % 31;
      b.Api(ts + 40, api_dur, "api" + std::to_string(k % kApis));
      step_api[i] += static_cast<double>(api_dur);
      ts += 100;
    }
    b.Launch(ts, 5, "huge", ++corr);
    step_api[i] += 5;
    const int64_t huge = 5000000000LL + i;  // above 2^32 ns
    late.push_back({corr, huge, "huge"});
    b.Pop(ts + 100);
    b.Pop(ts + 200);
    // The GPU records come after the ranges closed, as CUPTI's buffers deliver them.
    int64_t gts = ts + 300;
    for (const Late& k : late) {
      b.Kernel(gts, k.dur, k.name, k.corr);
      gts += 10;
    }
    huge_gpu[i] = static_cast<double>(huge);
  }
  const analysis::Report r = AnalyzeBuilt(b);
  const auto* step = FindRange(r, "step");
  ASSERT_NE(step, nullptr);
  ASSERT_EQ(step->decomposition.gpu.ms.size(), static_cast<size_t>(kIterations));
  for (int i = 0; i < kIterations; ++i) {
    EXPECT_DOUBLE_EQ(step->decomposition.gpu.ms[i], (step_gpu[i] + huge_gpu[i]) * 1e-6) << i;
    EXPECT_DOUBLE_EQ(step->decomposition.api.ms[i], step_api[i] * 1e-6) << i;
  }
}

TEST(Model, RangesAcrossThreadsAndNestedInThemselves) {
  TraceBuilder b;
  for (int i = 0; i < kIterations; ++i) {
    const int64_t t = 1000 + i * 1000;
    b.Push(t, "it");
    Event& s = b.Add(EventType::kRangeStart, t + 10);
    s.tid = 1;
    s.addr = 500 + i;
    s.name = b.Str("handoff");
    b.Push(t + 20, "recurse");
    b.Push(t + 30, "recurse");  // nested in itself: counted once, outer instance
    b.Pop(t + 40);
    b.Pop(t + 100);
    b.Pop(t + 900);
    Event& e = b.Add(EventType::kRangeEnd, t + 300);  // ends on another thread
    e.tid = 2;
    e.addr = 500 + i;
  }
  const analysis::Report r = AnalyzeBuilt(b);
  const auto* handoff = FindRange(r, "handoff");
  ASSERT_NE(handoff, nullptr) << Text(r);
  for (double ms : handoff->total_ms) EXPECT_NEAR(ms, 290e-6, 1e-12);
  const auto* recurse = FindRange(r, "recurse");
  ASSERT_NE(recurse, nullptr);
  for (double c : recurse->count) EXPECT_EQ(c, 1);
  for (double ms : recurse->total_ms) EXPECT_NEAR(ms, 80e-6, 1e-12);
}

TEST(Model, OtherThreadsEventsLandInTheirIteration) {
  // Thread 2's events are written in batches after thread 1 has moved on.
  TraceBuilder b;
  std::vector<int64_t> later;
  for (int i = 0; i < kIterations; ++i) {
    const int64_t t = 1000 + i * 1000;
    b.Push(t, "it");
    b.Launch(t + 10, 5, "k", i + 1);
    b.Pop(t + 900);
    later.push_back(t + 500);
    if (i % 4 == 3) {
      for (int64_t ts : later)
        b.Alloc(ts, 0xC000 + static_cast<uint64_t>(ts), 64, MemoryKind::kDevice, "cuMemAlloc_v2", 0,
                2);
      later.clear();
    }
  }
  const analysis::Report r = AnalyzeBuilt(b);
  const auto& allocs = State(r, "allocs", "total", "all");
  ASSERT_EQ(allocs.values.size(), static_cast<size_t>(kIterations));
  for (double v : allocs.values) EXPECT_EQ(v, 1);
}

TEST(Model, EventsAheadOfTheBoundaryThreadWaitForIt) {
  // Thread 2 writes the next four iterations' events before thread 1 has reached them.
  TraceBuilder b;
  for (int i = 0; i < kIterations; ++i) {
    const int64_t t = 1000 + i * 1000;
    if (i % 4 == 0) {
      for (int j = i; j < i + 4; ++j) {
        b.Alloc(1000 + j * 1000 + 500, 0xD000 + static_cast<uint64_t>(j), 64, MemoryKind::kDevice,
                "cuMemAlloc_v2", 0, 2);
      }
    }
    b.Push(t, "it");
    b.Launch(t + 10, 5, "k", i + 1);
    b.Pop(t + 900);
  }
  const analysis::Report r = AnalyzeBuilt(b);
  const auto& allocs = State(r, "allocs", "total", "all");
  ASSERT_EQ(allocs.values.size(), static_cast<size_t>(kIterations));
  for (double v : allocs.values) EXPECT_EQ(v, 1);
  EXPECT_EQ(r.iterations.prologue_events, 0u);
}

// The largest thread id: the per-thread cache started out "holding" tid 0xFFFFFFFF with no
// record behind it, so a trace whose first event came from that thread crashed (issue #14).
TEST(Model, LargestThreadIdFirst) {
  TraceBuilder b;
  constexpr uint32_t kTid = 0xFFFFFFFFu;
  for (int i = 0; i < kIterations; ++i) {
    b.Push(1000 + i * 1000, "it", kTid);
    b.Api(1000 + i * 1000 + 10, 5, "cuStreamSynchronize", kTid);
    b.Pop(1000 + i * 1000 + 500, kTid);
  }
  const analysis::Report r = AnalyzeBuilt(b);
  ASSERT_EQ(r.ranks.size(), 1u);
  EXPECT_EQ(r.iterations.count, kIterations);
  EXPECT_EQ(r.iterations.tid, kTid);
}

analysis::Report AnalyzeWith(const TraceBuilder& b, int jobs, const std::string& iteration = "") {
  const std::string bytes = b.ToBinary();
  analysis::AnalyzeOptions options;
  options.jobs = jobs;
  options.iteration = iteration;
  auto r = analysis::AnalyzeBuffers({bytes}, {"edge.trace"}, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : analysis::Report{};
}

// Synchronization time pends by (signature, sync API) as API time does: with more sync APIs
// than pending entries, under nested ranges and a range nested in itself, each range's sync
// time is the sum of its waits in every iteration, on one thread or several.
TEST(Model, SyncTimeSumsSurviveManySyncApis) {
  TraceBuilder b;
  constexpr int kCalls = 210, kApis = 70;  // each API three times an iteration, 70 > 64 entries
  std::vector<double> it_sync(kIterations, 0), step_sync(kIterations, 0);
  for (int i = 0; i < kIterations; ++i) {
    const int64_t t = 10000000LL * (i + 1);
    b.Push(t, "it");
    b.Push(t + 10, "step");
    int64_t ts = t + 100;
    for (int k = 0; k < kCalls; ++k) {
      const int64_t dur = 7 + (k * 13 + i * 3) % 29;
      b.Sync(ts, dur, format::SyncKind::kStream, "sync" + std::to_string(k % kApis));
      it_sync[i] += static_cast<double>(dur);
      step_sync[i] += static_cast<double>(dur);
      ts += 100;
    }
    b.Push(ts, "step");  // nested in itself: its waits count once
    b.Sync(ts + 10, 50, format::SyncKind::kStream, "sync0");
    it_sync[i] += 50;
    step_sync[i] += 50;
    b.Pop(ts + 100);
    b.Pop(ts + 200);
    b.Sync(ts + 300, 20, format::SyncKind::kEvent, "sync1");  // in "it" only
    it_sync[i] += 20;
    b.Sync(ts + 400, 0, format::SyncKind::kEvent, "sync2");  // no time
    b.Pop(ts + 500);
  }
  for (int jobs : {1, 3}) {
    const analysis::Report r = AnalyzeWith(b, jobs, "it");
    const auto* it = FindRange(r, "it");
    const auto* step = FindRange(r, "step");
    ASSERT_NE(it, nullptr) << Text(r);
    ASSERT_NE(step, nullptr) << Text(r);
    ASSERT_EQ(it->decomposition.sync.ms.size(), static_cast<size_t>(kIterations));
    ASSERT_EQ(step->decomposition.sync.ms.size(), static_cast<size_t>(kIterations));
    for (int i = 0; i < kIterations; ++i) {
      EXPECT_DOUBLE_EQ(it->decomposition.sync.ms[i], it_sync[i] * 1e-6) << i << " jobs " << jobs;
      EXPECT_DOUBLE_EQ(step->decomposition.sync.ms[i], step_sync[i] * 1e-6)
          << i << " jobs " << jobs;
    }
  }
}

// A range's instances are counted per (range, thread) in a few pending entries: with more
// threads than entries, the range still names the thread with the most instances, and every
// instance counts.
TEST(Model, RangeThreadIsTheOneWithTheMostInstances) {
  TraceBuilder b;
  constexpr uint32_t kFirst = 2, kThreads = 40, kBusiest = 17;
  for (int i = 0; i < kIterations; ++i) {
    const int64_t t = 100000LL * (i + 1);
    b.Push(t, "it");
    int64_t ts = t + 10;
    for (uint32_t th = kFirst; th < kFirst + kThreads; ++th) {
      for (int k = 0; k < (th == kBusiest ? 3 : 1); ++k) {
        b.Push(ts, "work", th);
        b.Pop(ts + 5, th);
        ts += 10;
      }
    }
    b.Pop(ts + 10);
  }
  const analysis::Report r = AnalyzeWith(b, 1, "it");
  const auto* work = FindRange(r, "work");
  ASSERT_NE(work, nullptr) << Text(r);
  EXPECT_EQ(work->tid, kBusiest);
  for (double c : work->count) EXPECT_EQ(c, kThreads + 2);
}

// One range name in two NVTX domains: two ranges (a range is found by its name first, then
// checked against the domain), each popped in its own domain.
TEST(Model, OneNameInTwoDomains) {
  TraceBuilder b;
  const uint32_t other = b.Str("other");
  for (int i = 0; i < kIterations; ++i) {
    const int64_t t = 100000LL * (i + 1);
    b.Push(t, "it");
    b.Push(t + 10, "x");
    b.Push(t + 20, "x").domain = other;  // a different range: not nested in itself
    b.Pop(t + 120);                      // default domain: ends "x" at t + 120
    b.Pop(t + 220).domain = other;
    b.Push(t + 300, "x").domain = other;
    b.Pop(t + 330).domain = other;
    b.Pop(t + 900);
  }
  const analysis::Report r = AnalyzeWith(b, 1, "it");
  const auto* x = FindRange(r, "x");
  const auto* other_x = FindRange(r, "other::x");
  ASSERT_NE(x, nullptr) << Text(r);
  ASSERT_NE(other_x, nullptr) << Text(r);
  for (double c : x->count) EXPECT_EQ(c, 1);
  for (double c : other_x->count) EXPECT_EQ(c, 2);
  for (double ms : x->total_ms) EXPECT_NEAR(ms, 110e-6, 1e-12);
  for (double ms : other_x->total_ms) EXPECT_NEAR(ms, 230e-6, 1e-12);
}

}  // namespace
}  // namespace cuclimb::testing
