// SPDX-License-Identifier: Apache-2.0
// Choosing the iteration source and assigning slots, including events that arrive late.
#include "iterations/segmenter.h"

#include <limits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "trace_builder.h"

namespace cuclimb::analysis {
namespace {

using testing::TraceBuilder;

struct Chosen {
  SegmentChoice choice;
  std::string name;
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
  return c;
}

// `iterations` outer ranges on tid 1, each with `steps` step ranges and launches.
void Loop(TraceBuilder* b, int iterations, int steps, uint32_t tid = 1,
          const char* outer = "iteration") {
  int64_t t = 1000;
  uint64_t corr = 0;
  for (int i = 0; i < iterations; ++i) {
    if (outer != nullptr)
      b->Push(t++, outer, tid);
    for (int s = 0; s < steps; ++s) {
      b->Push(t++, "step", tid);
      b->Launch(t++, 1, "k", ++corr, 0x10, tid);
      b->Pop(t++, tid);
    }
    if (outer != nullptr)
      b->Pop(t++, tid);
  }
}

TEST(Segmenter, OutermostRepeatingRangeOnTheBusiestThread) {
  TraceBuilder b;
  Loop(&b, 20, 5);
  const Chosen c = Choose(b);
  EXPECT_EQ(c.choice.source, IterationSource::kRange);
  EXPECT_EQ(c.name, "iteration");
  EXPECT_EQ(c.choice.tid, 1u);
}

TEST(Segmenter, WrapperRangeThatDoesNotRepeatIsSkipped) {
  TraceBuilder b;
  b.Push(10, "train");
  Loop(&b, 20, 5);
  b.Pop(1'000'000);
  EXPECT_EQ(Choose(b).name, "iteration");
}

TEST(Segmenter, OuterRangeTooRareForATrendGivesWayToAFrequentInnerOne) {
  TraceBuilder b;
  Loop(&b, 3, 10, 1, "epoch");  // 3 epochs of 10 steps: steps are the better iterations
  EXPECT_EQ(Choose(b).name, "step");
  TraceBuilder c;
  Loop(&c, 5, 1, 1, "iteration");  // nothing repeats 8 times: the outermost repeating range
  EXPECT_EQ(Choose(c).name, "iteration");
}

TEST(Segmenter, BusiestThreadBeatsAnotherThreadsRanges) {
  TraceBuilder b;
  Loop(&b, 30, 2, /*tid=*/7, "ui_frame");  // a UI thread with many frames but fewer CUDA calls
  Loop(&b, 20, 5, /*tid=*/1, "iteration");
  const Chosen c = Choose(b);
  EXPECT_EQ(c.name, "iteration");
  EXPECT_EQ(c.choice.tid, 1u);
}

TEST(Segmenter, UserChoiceWinsAndIsFlaggedWhenAbsent) {
  TraceBuilder b;
  Loop(&b, 20, 5);
  Chosen c = Choose(b, "step");
  EXPECT_EQ(c.name, "step");
  EXPECT_TRUE(c.choice.user);
  EXPECT_FALSE(c.choice.user_unmatched);
  c = Choose(b, "no_such_range");
  EXPECT_TRUE(c.choice.user_unmatched);  // Analyze() turns this into a usage error
  EXPECT_EQ(c.name, "iteration");
  EXPECT_FALSE(c.choice.user);
  EXPECT_NE(c.choice.why.find("no range or mark is named"), std::string::npos);
}

TEST(Segmenter, MarksWhenNoRangeRepeats) {
  TraceBuilder b;
  for (int i = 0; i < 12; ++i) {
    b.Mark(100 * i, "iter");
    b.Launch(100 * i + 5, 1, "k", i + 1);
  }
  const Chosen c = Choose(b);
  EXPECT_EQ(c.choice.source, IterationSource::kMark);
  EXPECT_EQ(c.name, "iter");
}

TEST(Segmenter, LaunchPeriodWithoutNvtx) {
  TraceBuilder b;
  int64_t t = 0;
  uint64_t corr = 0;
  for (int i = 0; i < 30; ++i) {
    b.Launch(t += 10, 1, "init", ++corr);
    for (int k = 0; k < 6; ++k) b.Launch(t += 10, 1, k % 2 ? "a" : "b", ++corr);
  }
  const Chosen c = Choose(b);
  EXPECT_EQ(c.choice.source, IterationSource::kLaunch);
  EXPECT_EQ(c.name, "init");
  EXPECT_EQ(c.choice.launch.period, 7);
}

TEST(Segmenter, NothingPeriodic) {
  TraceBuilder b;
  b.Alloc(10, 0x1000, 64);
  const Chosen c = Choose(b);
  EXPECT_EQ(c.choice.source, IterationSource::kNone);
}

TEST(Boundaries, SlotsGapsPrologueEpilogue) {
  SegmentChoice choice;
  choice.source = IterationSource::kRange;
  choice.tid = 1;
  choice.name = 5;
  Boundaries b(choice);
  auto push = [&](int64_t ts, uint32_t name) {
    trace::Event e = format::MakeEvent(format::EventType::kPush);
    e.ts = ts;
    e.tid = 1;
    e.name = name;
    b.Observe(e);
  };
  auto pop = [&](int64_t ts) {
    trace::Event e = format::MakeEvent(format::EventType::kPop);
    e.ts = ts;
    e.tid = 1;
    b.Observe(e);
  };
  EXPECT_FALSE(b.Ready(50));  // nothing seen on the boundary thread yet
  push(100, 5);
  EXPECT_TRUE(b.Ready(100));
  EXPECT_FALSE(b.Ready(101));
  push(110, 6);  // a nested range: not a boundary
  pop(120);
  pop(200);
  push(300, 5);
  pop(400);
  EXPECT_EQ(b.Slot(50), 0u);   // prologue
  EXPECT_EQ(b.Slot(150), 1u);  // iteration 0
  EXPECT_EQ(b.Slot(250), 2u);  // gap after iteration 0
  EXPECT_EQ(b.Slot(300), 3u);  // iteration 1
  EXPECT_EQ(b.Slot(450), 4u);  // after iteration 1
  b.Finish();
  EXPECT_EQ(b.count(), 2);
  EXPECT_EQ(b.IterationOfSlot(0), -1);
  EXPECT_EQ(b.IterationOfSlot(2), 0);  // the gap folds into its iteration
  EXPECT_EQ(b.IterationOfSlot(3), 1);
  EXPECT_EQ(b.IterationOfSlot(4), -2);  // after the last iteration: epilogue
  const auto spans = b.Spans();
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[1].start_ns, 300);
  EXPECT_EQ(spans[1].end_ns, 400);
}

// No iteration source: the whole trace is one iteration without boundaries. Spans() used to
// read the end of that iteration past the single start it has (heap read past the end under
// ASan; the asan build runs this suite).
TEST(Boundaries, NoSourceIsOneIterationWithoutBoundaries) {
  Boundaries b{SegmentChoice{}};
  trace::Event e = format::MakeEvent(format::EventType::kMark);
  e.ts = 10;
  e.tid = 1;
  b.Observe(e);
  EXPECT_TRUE(b.Ready(10));
  EXPECT_EQ(b.Slot(10), 1u);
  b.Finish();
  EXPECT_EQ(b.count(), 1);
  const auto spans = b.Spans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].start_ns, 0);
  EXPECT_EQ(spans[0].end_ns, 0);
}

TEST(Boundaries, MarksLeaveTheLastIterationOpen) {
  SegmentChoice choice;
  choice.source = IterationSource::kMark;
  choice.tid = 1;
  choice.name = 3;
  Boundaries b(choice);
  for (int64_t ts : {100, 200, 300}) {
    trace::Event e = format::MakeEvent(format::EventType::kMark);
    e.ts = ts;
    e.tid = 1;
    e.name = 3;
    b.Observe(e);
  }
  b.Finish();
  EXPECT_EQ(b.count(), 2);
  EXPECT_EQ(b.IterationOfSlot(b.Slot(250)), 1);
  EXPECT_EQ(b.IterationOfSlot(b.Slot(350)), -2);
}

// Slot() keeps the interval of the last slot it found. Asked in any order, while boundaries
// arrive, it must answer as a search over all boundaries known at that moment would: here the
// reference is the list of (start, end) this test fed, searched from scratch.
TEST(Boundaries, SlotsInAnyOrderWhileBoundariesArrive) {
  SegmentChoice choice;
  choice.source = IterationSource::kRange;
  choice.tid = 1;
  choice.name = 5;
  Boundaries b(choice);
  std::vector<std::pair<int64_t, int64_t>> known;  // (start, end) of each iteration so far
  auto reference = [&known](int64_t ts) -> uint32_t {
    uint32_t slot = 0;
    for (size_t i = 0; i < known.size(); ++i) {
      if (ts >= known[i].first)
        slot = static_cast<uint32_t>(ts <= known[i].second ? 2 * i + 1 : 2 * i + 2);
    }
    return slot;
  };
  auto event = [&b](format::EventType type, int64_t ts, uint32_t tid, uint32_t name) {
    trace::Event e = format::MakeEvent(type);
    e.ts = ts;
    e.tid = tid;
    e.name = name;
    b.Observe(e);
  };
  uint64_t seed = 12345;
  auto next = [&seed](int64_t below) {
    seed = seed * 6364136223846793005u + 1442695040888963407u;
    return static_cast<int64_t>((seed >> 33) % static_cast<uint64_t>(below));
  };
  int64_t t = 100;
  for (int iteration = 0; iteration < 40; ++iteration) {
    t += 1 + next(50);
    event(format::EventType::kPush, t, 1, 5);
    known.emplace_back(t, std::numeric_limits<int64_t>::max());
    for (int k = 0; k < 20; ++k) {  // events of other types and other threads between
      t += next(3);
      event(k % 2 == 0 ? format::EventType::kLaunch : format::EventType::kAlloc, t,
            k % 3 == 0 ? 2 : 1, 9);
      const int64_t ts = next(t + 100);  // late, current or ahead of the boundary thread
      ASSERT_EQ(b.Slot(ts), reference(ts)) << "ts " << ts << " iteration " << iteration;
    }
    t += 1 + next(50);
    event(format::EventType::kPop, t, 1, 0);
    known.back().second = t;
    for (int k = 0; k < 5; ++k) {
      const int64_t ts = t - 20 + next(60);  // around the end just seen
      ASSERT_EQ(b.Slot(ts), reference(ts)) << "ts " << ts << " iteration " << iteration;
    }
  }
  for (int64_t ts = 0; ts < t + 100; ts += 7) ASSERT_EQ(b.Slot(ts), reference(ts)) << ts;
}

// A pair anchor (launches A then B start an iteration at A) keeps the watermark below A until
// the next launch says whether it was the pair, also across events of other types.
TEST(Boundaries, PendingPairAnchorHoldsTheWatermark) {
  SegmentChoice choice;
  choice.source = IterationSource::kLaunch;
  choice.tid = 1;
  choice.launch.anchor = 7;
  choice.launch.anchor_next = 8;
  Boundaries b(choice);
  auto event = [&b](format::EventType type, int64_t ts, uint32_t name) {
    trace::Event e = format::MakeEvent(type);
    e.ts = ts;
    e.tid = 1;
    e.name = name;
    b.Observe(e);
  };
  event(format::EventType::kLaunch, 100, 3);
  event(format::EventType::kApi, 110, 0);
  EXPECT_TRUE(b.Ready(110));
  event(format::EventType::kLaunch, 200, 7);  // maybe an iteration starts here
  EXPECT_TRUE(b.Ready(199));
  EXPECT_FALSE(b.Ready(200));
  event(format::EventType::kApi, 250, 0);  // not a launch: the anchor is still pending
  event(format::EventType::kAlloc, 260, 0);
  EXPECT_FALSE(b.Ready(200));
  event(format::EventType::kLaunch, 300, 8);  // the pair: the iteration started at 200
  EXPECT_TRUE(b.Ready(300));
  EXPECT_EQ(b.Slot(150), 0u);
  EXPECT_EQ(b.Slot(200), 1u);
  EXPECT_EQ(b.Slot(299), 1u);
  event(format::EventType::kLaunch, 400, 7);
  event(format::EventType::kLaunch, 500, 3);  // not the pair: no iteration at 400
  event(format::EventType::kApi, 510, 0);
  EXPECT_TRUE(b.Ready(510));
  EXPECT_EQ(b.Slot(450), 1u);
}

}  // namespace
}  // namespace cuclimb::analysis
