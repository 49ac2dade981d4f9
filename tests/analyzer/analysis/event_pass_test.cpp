// SPDX-License-Identifier: Apache-2.0
// The streaming pass: every event reaches the aggregation once, in read order, with the slot of
// its iteration, also when many events wait for their iteration across batches (a loader
// thread's events written ahead of the boundary thread's, in the writer's batch order), and
// whether the aggregation runs inline, on one thread or on two.
#include "analysis/event_pass.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "iterations/choice.h"
#include "iterations/segment_stats.h"
#include "trace_builder.h"

namespace cuclimb::analysis {
namespace {

using testing::TraceBuilder;

constexpr int kIterations = 40;
constexpr int kBlock = 10;                // iterations per writer batch of the loader thread
constexpr int kLoaderPerIteration = 150;  // loader events per iteration: 1 500 wait per block

struct Loop {
  std::string bytes;
  std::vector<std::pair<int64_t, int64_t>> spans;  // (start, end) of each iteration
  std::vector<int64_t> loader_ts;                  // every loader event's time
  uint64_t events = 0;
};

// Thread 1 runs iterations (a range, calls and launches inside it, some calls in the gap after
// it); thread 2, a loader, calls all along. The writer flushed thread 2's events of each block
// of iterations before thread 1's: those events are ahead of the boundary thread and wait.
Loop MakeLoop() {
  TraceBuilder b;
  Loop loop;
  const auto start = [](int i) { return 10'000 + int64_t{i} * 1'000; };
  uint64_t corr = 0;
  for (int block = 0; block < kIterations / kBlock; ++block) {
    for (int i = block * kBlock; i < (block + 1) * kBlock; ++i) {
      for (int k = 0; k < kLoaderPerIteration; ++k) {
        const int64_t ts = start(i) + 5 + k * 6;  // inside the iteration and in the gap after it
        b.Api(ts, 2, "cuMemcpyAsync", 2);
        loop.loader_ts.push_back(ts);
      }
    }
    for (int i = block * kBlock; i < (block + 1) * kBlock; ++i) {
      const int64_t t = start(i);
      b.Push(t, "iteration");
      for (int k = 0; k < 20; ++k) b.Launch(t + 10 + k * 30, 5, "k", ++corr);
      b.Pop(t + 700);
      b.Api(t + 800, 20, "cudaStreamSynchronize");  // in the gap
      loop.spans.emplace_back(t, t + 700);
    }
  }
  loop.events = b.events().size();
  loop.bytes = b.ToBinary(true, 3, 16u << 10);
  return loop;
}

uint32_t ExpectedSlot(const Loop& loop, int64_t ts) {
  uint32_t slot = 0;
  for (size_t i = 0; i < loop.spans.size(); ++i) {
    if (ts >= loop.spans[i].first)
      slot = static_cast<uint32_t>(ts <= loop.spans[i].second ? 2 * i + 1 : 2 * i + 2);
  }
  return slot;
}

TEST(EventPass, WaitingEventsGetTheirIterationInlineAndOnThreads) {
  const Loop loop = MakeLoop();
  // Events per slot: thread 1's are known by construction (push, 20 launches, pop inside the
  // iteration; the sync in the gap); the loader's from their times.
  std::vector<double> expected(2 * kIterations + 2, 0.0);
  for (int i = 0; i < kIterations; ++i) {
    expected[2 * i + 1] += 22;
    expected[2 * i + 2] += 1;
  }
  for (int64_t ts : loop.loader_ts) expected[ExpectedSlot(loop, ts)] += 1;
  auto classifier = FrameClassifier::Create({});
  ASSERT_TRUE(classifier.ok());
  // The choice a first look at the whole trace makes (the writer renumbers string ids).
  SegmentChoice choice;
  {
    auto reader = trace::TraceReader::FromBuffer(loop.bytes);
    ASSERT_TRUE(reader.ok());
    SegmentStats stats(reader->get(), "");
    trace::Event ev{};
    while ((*reader)->Next(&ev)) stats.Observe(ev);
    choice = ChooseSegmentation(stats, LaunchPeriod{}, **reader);
    ASSERT_EQ(choice.source, IterationSource::kRange);
    ASSERT_EQ(choice.tid, 1u);
    ASSERT_EQ((*reader)->Str(choice.name), "iteration");
  }
  // With prefetch workers, the reader hands over batches decoded ahead (a chunk's last one
  // partly filled) between the batches the pass fills itself.
  for (int threads : {0, 1, 2}) {
    for (int prefetch : {0, 1, 3}) {
      SCOPED_TRACE("aggregation threads: " + std::to_string(threads) +
                   ", prefetch workers: " + std::to_string(prefetch));
      auto reader = trace::TraceReader::FromBuffer(loop.bytes);
      ASSERT_TRUE(reader.ok());
      (*reader)->Prefetch(prefetch);
      EventPass pass(std::move(*reader), choice, AnalyzeOptions{}, *classifier, threads);
      // The first events come from memory, as the prefix does, the rest from the reader.
      std::vector<trace::Event> prefix(700);
      prefix.resize(pass.reader()->Read(prefix.data(), prefix.size()));
      pass.Feed(prefix.data(), prefix.size());
      uint64_t read = prefix.size();
      while (const size_t n = pass.Read(nullptr)) read += n;
      pass.Finish();
      ASSERT_EQ(read, loop.events);
      const Aggregates& a = pass.aggregator().data();
      EXPECT_EQ(a.events, loop.events);
      for (uint32_t slot = 0; slot < expected.size(); ++slot)
        ASSERT_EQ(a.events_per_slot[slot], expected[slot]) << "slot " << slot;
      EXPECT_EQ(pass.boundaries().count(), kIterations);
    }
  }
}

}  // namespace
}  // namespace cuclimb::analysis
