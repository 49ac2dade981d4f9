// SPDX-License-Identifier: Apache-2.0
// `--jobs`: analysing ranks concurrently, aggregating on a thread of its own, decompressing and
// decoding chunks ahead and assembling one rank's ranges, kernels, APIs and candidates on threads
// change nothing in the report, byte for byte: not with several ranks, one rank, more threads than
// ranks, a damaged rank, a rank that needs a second pass, the old row layout, names and stacks that
// the trace defines all along while the aggregation thread reads them, nor the allocation family
// aggregated on a thread of its own.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "analysis/thread_shares.h"
#include "report/json_report.h"
#include "scenario_util.h"
#include "trace_builder.h"

namespace cuclimb::testing {
namespace {

// A rank of a job as real ones run: its own seed, jitter, a GC pause, evaluations and
// checkpoints every N iterations, late GPU records, a loader thread; the chosen ranks leak.
SimOptions Rank(int rank, bool leaks) {
  SimOptions o;
  o.seed = 17 + static_cast<uint64_t>(rank);
  o.iterations = 120;
  o.steps = 3;
  o.noise = 0.05;
  o.gc_every = 25;
  o.gc_ns = 2e6;
  o.eval_every = 20;
  o.checkpoint_every = 50;
  o.checkpoint_ns = 5e6;
  o.temps_per_launch = rank % 2;
  if (leaks) {
    o.leak_device = 2;
    o.host_ns_per_leaked = 80;
  }
  return o;
}

// Small chunks, so that every trace has dozens for the prefetch threads.
std::string Binary(const SimOptions& o, format::ChunkLayout layout = format::ChunkLayout::kColumns,
                   size_t chunk_bytes = 16u << 10) {
  TraceBuilder b;
  Simulate(o, &b);
  return b.ToBinary(true, 3, chunk_bytes, layout);
}

std::string Json(const std::vector<std::string>& traces, int jobs, size_t prefix_events = 0) {
  std::vector<std::string_view> views(traces.begin(), traces.end());
  std::vector<std::string> names;
  for (size_t i = 0; i < traces.size(); ++i) names.push_back("rank" + std::to_string(i));
  analysis::AnalyzeOptions ao;
  ao.jobs = jobs;
  ao.prefix_events = prefix_events;
  auto report = analysis::AnalyzeBuffers(views, names, ao);
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok())
    return "";
  auto json = analysis::ToJson(*report);
  EXPECT_TRUE(json.ok()) << json.status();
  return json.ok() ? *json : "";
}

void ExpectSameForAnyJobs(const std::vector<std::string>& traces, size_t prefix_events = 0) {
  const std::string serial = Json(traces, 1, prefix_events);
  ASSERT_FALSE(serial.empty());
  for (int jobs : {2, 3, 4, 5, 8}) {  // 4 and up: chunks decoded ahead by 1, 2 and 5 workers
    EXPECT_EQ(Json(traces, jobs, prefix_events), serial) << "--jobs " << jobs;
  }
}

TEST(Jobs, SpareThreadsAreDealtOutToTheRanks) {
  for (int count = 1; count <= 9; ++count) {
    for (int jobs = 1; jobs <= 20; ++jobs) {
      int total = 0, least = jobs, most = 0;
      for (int k = 0; k < count; ++k) {
        const int h = analysis::HelpersOf(static_cast<size_t>(k), count, jobs);
        total += h;
        least = std::min(least, h);
        most = std::max(most, h);
        if (k > 0) {  // the earlier traces get the remainder
          EXPECT_LE(h, analysis::HelpersOf(static_cast<size_t>(k - 1), count, jobs));
        }
      }
      // Every thread has work, none is counted twice, and no trace has two more than another.
      EXPECT_EQ(total, std::max(0, jobs - count)) << count << " traces, " << jobs << " jobs";
      EXPECT_LE(most - least, 1) << count << " traces, " << jobs << " jobs";
    }
  }
}

TEST(Jobs, TracesAreTakenLargestFirst) {
  EXPECT_EQ(analysis::LargestFirst({5, 9, 5, 1, 9}), (std::vector<size_t>{1, 4, 0, 2, 3}));
  EXPECT_TRUE(analysis::LargestFirst({}).empty());
  // The spare threads go to the largest traces: 3 traces on 4 threads, the largest last.
  std::mutex mutex;
  std::vector<int> helpers(3, -1);
  analysis::ForEachTrace({10, 10, 50}, 4, nullptr, [&](size_t k, int h) {
    std::lock_guard<std::mutex> lock(mutex);
    helpers[k] = h;
  });
  EXPECT_EQ(helpers, (std::vector<int>{0, 0, 1}));
  // One thread keeps the traces' own order.
  std::vector<size_t> taken;
  analysis::ForEachTrace({10, 10, 50}, 1, nullptr, [&](size_t k, int) { taken.push_back(k); });
  EXPECT_EQ(taken, (std::vector<size_t>{0, 1, 2}));
  // Reports stay in the traces' order whatever the order taken: the largest last here.
  SimOptions small = Rank(0, false), large = Rank(2, true);
  small.iterations = 40;
  large.iterations = 300;
  SimOptions small2 = small;
  small2.seed = 99;
  const std::vector<std::string> traces = {Binary(small), Binary(small2), Binary(large)};
  ASSERT_GT(traces[2].size(), traces[0].size());
  ExpectSameForAnyJobs(traces);
}

TEST(Jobs, ThreadsThatComeFreeAreLentToTracesUnderWay) {
  // Every thread of the job is given back by the end, whatever the counts.
  for (int count = 1; count <= 4; ++count) {
    for (int jobs = 1; jobs <= 6; ++jobs) {
      analysis::SpareThreads spare;
      analysis::ForEachTrace(std::vector<uint64_t>(static_cast<size_t>(count), 1), jobs, &spare,
                             [](size_t, int) {});
      EXPECT_EQ(spare.free(), jobs) << count << " traces, " << jobs << " jobs";
    }
  }
  // Two traces on two threads: the large one is taken first and waits; the thread that read the
  // small one comes free and can be borrowed while the large one is still under way.
  analysis::SpareThreads spare;
  std::atomic<bool> borrowed{false};
  analysis::ForEachTrace({1, 2}, 2, &spare, [&](size_t k, int) {
    if (k != 1)
      return;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!spare.TryTake() && std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
    borrowed = spare.free() == 0;
    spare.Give(1);
  });
  EXPECT_TRUE(borrowed);
  EXPECT_EQ(spare.free(), 2);
}

TEST(Jobs, FourRanksOneLeaking) {
  std::vector<std::string> traces;
  for (int r = 0; r < 4; ++r) traces.push_back(Binary(Rank(r, r == 2)));
  ExpectSameForAnyJobs(traces);
  // The report says something: the leaking rank is found, whatever the number of threads.
  EXPECT_NE(Json(traces, 3).find("\"verdict\": \"climbing\""), std::string::npos);
}

TEST(Jobs, OneLargeRankWithPrefetch) {
  SimOptions o = Rank(1, true);
  o.iterations = 300;
  ExpectSameForAnyJobs({Binary(o)});
  // Large chunks: many batches each, decoded ahead while the ones before are read.
  ExpectSameForAnyJobs({Binary(o, format::ChunkLayout::kColumnsV2, 1u << 20)});
}

TEST(Jobs, DamagedRankReadsTheSameUpToTheDamage) {
  std::vector<std::string> traces = {Binary(Rank(0, true)), Binary(Rank(1, true))};
  traces[1].resize(traces[1].size() * 2 / 3);  // cut inside a chunk: partial
  std::string flipped = Binary(Rank(2, false));
  flipped[flipped.size() / 2] ^= 0x40;  // a bad checksum halfway
  traces.push_back(flipped);
  ExpectSameForAnyJobs(traces);
  EXPECT_NE(Json(traces, 4).find("\"partial\": true"), std::string::npos);
}

TEST(Jobs, SecondPassAndRowLayout) {
  // A long set-up with launches before the first iteration range: the prefix alone picks the
  // launch period, and the whole trace says otherwise.
  TraceBuilder late;
  uint64_t corr = 0;
  int64_t t = 0;
  for (int i = 0; i < 300; ++i) late.Launch(t += 100, 10, i % 3 ? "setup_a" : "setup_b", ++corr);
  Simulate(Rank(0, true), &late);
  std::vector<std::string> traces = {late.ToBinary(true, 3, 16u << 10),
                                     Binary(Rank(1, true), format::ChunkLayout::kRows)};
  ExpectSameForAnyJobs(traces, 200);
  analysis::AnalyzeOptions ao;
  ao.jobs = 4;
  ao.prefix_events = 200;
  auto r = analysis::AnalyzeBuffers({traces[0]}, {"late"}, ao);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->ranks[0].trace.repassed);
}

TEST(Jobs, NamesAndStacksDefinedAllAlong) {
  // A loop that keeps meeting new code: APIs, ranges and kernels not seen before every few
  // iterations and a new sampled stack in every one, so string and stack definitions arrive all
  // along, while the aggregation thread resolves earlier ones (host samples are symbolized as
  // they come). A short prefix and ≈ 27 000 events: the reading thread fills the queue to the
  // aggregation thread and waits on it many times, the interleavings ThreadSanitizer needs.
  TraceBuilder b;
  b.Process(0, 4242, "train.py");
  int64_t t = 1000;
  uint64_t corr = 0, addr = 0x7f0000000000;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = std::to_string(i / 10);
    b.Push(t += 50, "step");
    b.Push(t += 20, "phase_" + std::to_string(i % 37));
    b.Api(t += 30, 400 + i % 7, "cuFunc_" + id);
    for (int k = 0; k < 6; ++k) {
      const std::string kernel = k % 2 ? "gemm" : "kernel_" + std::to_string(i % 53);
      b.Launch(t += 40, 25, kernel, ++corr);
      b.Kernel(t + 500, 300 + (i * 7 + k) % 40, kernel, corr);
    }
    b.Alloc(t += 10, addr + static_cast<uint64_t>(i) * 4096, 512, format::MemoryKind::kPool,
            "cuMemAllocAsync", b.Stack({"grow_" + id, "train_step", "main"}));
    b.Sample(t += 15, b.Stack({"fn_" + id, "train_step", "main"}));
    char pc[32];
    std::snprintf(pc, sizeof(pc), "0x%x", 0x401000 + i);
    b.Sample(t += 15, b.Stack({pc, "main"}));
    b.Pop(t += 20);
    b.Pop(t += 5);
  }
  ExpectSameForAnyJobs({b.ToBinary(true, 3, 4u << 10)}, 2000);
}

TEST(Jobs, EveryMemoryEventOnItsOwnThread) {
  // With two or more helper threads the allocation family (allocations, frees, VMM, handles,
  // gauges, NVTX heaps and regions) is aggregated apart from everything else and joined at the
  // end: every kind of it, duplicates and unmatched ones included, must come out the same.
  TraceBuilder b;
  b.Process(0, 4242, "train.py");
  int64_t t = 1000;
  uint64_t corr = 0;
  const uint64_t heap = 0x5000;
  b.Add(EventType::kHeap, t += 10).handle = heap;
  auto vmm = [&](format::VmmOp op, uint64_t addr, uint64_t size, uint64_t handle) {
    Event& e = b.Add(EventType::kVmm, t += 10);
    e.tid = 1;
    e.kind = static_cast<uint8_t>(op);
    e.api = b.Str("cuMemMap");
    e.addr = addr;
    e.size = size;
    e.handle = handle;
  };
  for (int i = 0; i < 150; ++i) {
    const uint64_t u = static_cast<uint64_t>(i);
    b.Push(t += 50, "step");
    b.Launch(t += 20, 10, "gemm", ++corr);
    b.Kernel(t + 300, 200 + i % 13, "gemm", corr);
    // A callback allocation and its CUPTI MEMORY2 record (tid 0, same correlation id).
    b.Alloc(t += 10, 0x10000 + u * 0x100, 256 + i % 5, format::MemoryKind::kPool).corr = ++corr;
    b.Alloc(t += 1, 0x10000 + u * 0x100, 256 + i % 5, format::MemoryKind::kPool, "", 0, 0).corr =
        corr;
    if (i % 3 != 0)
      b.Free(t += 10, 0x10000 + u * 0x100);  // every third one is kept: a leak
    if (i % 17 == 0)
      b.Free(t += 10, 0xdead0000 + u);  // never allocated
    b.Alloc(t += 10, 0x900000, 4096);   // the same address again without a free
    vmm(format::VmmOp::kReserve, 0x70000000 + u * 0x10000, 0x10000, 0);
    vmm(format::VmmOp::kCreate, 0, 0x10000, 0xa000 + u);
    vmm(format::VmmOp::kMap, 0x70000000 + u * 0x10000, 0x10000, 0xa000 + u);
    if (i % 4 != 0) {
      vmm(format::VmmOp::kUnmap, 0x70000000 + u * 0x10000, 0x10000, 0);
      vmm(format::VmmOp::kRelease, 0, 0, 0xa000 + u);
      vmm(format::VmmOp::kFreeVa, 0x70000000 + u * 0x10000, 0x10000, 0);
    }
    b.Create(t += 10, format::HandleType::kEvent, 0xe000 + u);
    if (i % 5 != 0)
      b.Destroy(t += 10, format::HandleType::kEvent, 0xe000 + u);
    b.Gauge(t += 10, "pool_used", 1000 + i * 64 + i % 7, 0x77);
    b.Region(t += 10, heap, 0x60000 + u * 64, 64);
    if (i % 6 != 0)
      b.RegionFree(t += 10, heap, 0x60000 + u * 64);
    if (i % 50 == 49)
      b.Add(EventType::kHeapReset, t += 10).handle = heap;
    b.Pop(t += 20);
  }
  ExpectSameForAnyJobs({b.ToBinary(true, 3, 4u << 10)});
}

}  // namespace
}  // namespace cuclimb::testing
