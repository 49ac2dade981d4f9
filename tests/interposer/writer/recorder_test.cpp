// SPDX-License-Identifier: Apache-2.0
// The recording core end to end: threads record through rings, the writer thread encodes, the
// analyzer's reader reads the file back. Each scenario runs in a forked child because the
// recorder is a process-wide singleton.
#include "interposer/writer/recorder.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "trace/reader.h"

namespace cuclimb::interposer {
namespace {

using format::Event;
using format::EventType;

std::string TempPath(const char* name) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/cuclimb-recorder-" + name + "-" +
                     std::to_string(getpid()) + ".trace";
  unlink(path.c_str());
  return path;
}

// Runs body in a child process and returns its exit status (or 128+signal).
template <typename Fn>
int InChild(Fn body) {
  const pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct ReadBack {
  std::vector<Event> events;
  trace::ReadStatus status;
  std::unique_ptr<trace::TraceReader> reader;
};

ReadBack ReadFile(const std::string& path) {
  ReadBack out;
  auto reader = trace::TraceReader::Open(path);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok())
    return out;
  Event ev{};
  while ((*reader)->Next(&ev)) out.events.push_back(ev);
  out.status = (*reader)->status();
  out.reader = std::move(reader).value();
  return out;
}

Event AllocEvent(uint64_t addr, uint64_t size, uint32_t api, uint32_t stack) {
  Event ev = format::MakeEvent(EventType::kAlloc);
  ev.ts = TraceNow();
  ev.tid = CurrentTid();
  ev.api = api;
  ev.kind = static_cast<uint8_t>(format::MemoryKind::kPool);
  ev.addr = addr;
  ev.size = size;
  ev.stack = stack;
  ev.device = 0;
  return ev;
}

TEST(RecorderTest, ThreadsRecordAndEverythingReadsBack) {
  const std::string path = TempPath("threads");
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  ASSERT_EQ(InChild([&] {
              RecorderOptions o;
              o.path = path.c_str();
              o.ring_kib = 8192;
              o.flush_interval_ms = 5;
              o.producer = "cuclimb test";
              if (!StartRecorder(o))
                _exit(10);
              std::vector<std::thread> threads;
              for (int t = 0; t < kThreads; ++t) {
                threads.emplace_back([t] {
                  const uint32_t api = InternString("cuMemAllocAsync");
                  const uint64_t frames[] = {format::PcFrame(0x1000 + t), format::PcFrame(0x2000)};
                  const uint32_t stack = InternStack(frames, 2);
                  for (int i = 0; i < kPerThread; ++i) {
                    // Never drop here: back off while the writer catches up.
                    while (!Record(AllocEvent((uint64_t(t) << 32) | i, 512 + i % 7, api, stack))) {
                      std::this_thread::yield();
                    }
                  }
                });
              }
              for (auto& th : threads) th.join();
              StopRecorder(nullptr);
            }),
            0);
  ReadBack rb = ReadFile(path);
  EXPECT_EQ(rb.status.reason, trace::StopReason::kComplete) << rb.status.message;
  std::map<uint32_t, int> per_tid;
  std::map<uint64_t, int> addrs;
  int64_t prev_ts = INT64_MIN;
  bool sorted_within_batches = true;
  for (const Event& ev : rb.events) {
    if (ev.type != EventType::kAlloc)
      continue;
    ++per_tid[ev.tid];
    ++addrs[ev.addr];
    EXPECT_EQ(rb.reader->Str(ev.api), "cuMemAllocAsync");
    const auto frames = rb.reader->stacks().Get(ev.stack);
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(format::FrameValue(frames[1]), 0x2000u);
    EXPECT_EQ(format::FrameValue(frames[0]), 0x1000u + (ev.addr >> 32));
    if (ev.ts < prev_ts)
      sorted_within_batches = false;
    prev_ts = std::max(prev_ts, ev.ts);
  }
  (void)sorted_within_batches;  // batches are sorted; across batches order is not promised
  EXPECT_EQ(per_tid.size(), static_cast<size_t>(kThreads));
  for (const auto& [tid, n] : per_tid) EXPECT_EQ(n, kPerThread) << "tid " << tid;
  EXPECT_EQ(addrs.size(), static_cast<size_t>(kThreads * kPerThread));
  ASSERT_TRUE(rb.reader->trailer().has_value());
  EXPECT_EQ(rb.reader->trailer()->size, rb.events.size());
  EXPECT_EQ(rb.reader->header().producer, "cuclimb test");
  unlink(path.c_str());
}

// The writer is held inside its tick hook while one thread records 1000 events into a 64-event
// ring, so exactly 64 are stored and 936 dropped and counted. Without the hold the outcome is up
// to the scheduler: the half-full wake lets a writer that runs as soon as it is woken (on a
// loaded machine, on the producer's own core) drain the ring every 32 events, and nothing drops.
struct HeldWriter {
  std::atomic<bool> held{false};     // the writer thread is inside the hook
  std::atomic<bool> release{false};  // the producer is done: let the writer drain
  std::atomic<bool> once{false};     // only the first tick holds (StopRecorder ticks too)
};

void HoldWriterOnce(void* context, int64_t) {
  auto* w = static_cast<HeldWriter*>(context);
  if (w->once.exchange(true))
    return;
  w->held.store(true);
  while (!w->release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

TEST(RecorderTest, FullRingsDropAndCountInsteadOfBlocking) {
  const std::string path = TempPath("drops");
  constexpr int kEvents = 1000;
  constexpr int kRing = 64;
  ASSERT_EQ(InChild([&] {
              static HeldWriter writer;
              SetTickHook(HoldWriterOnce, &writer);
              RecorderOptions o;
              o.path = path.c_str();
              o.ring_kib = kRing * sizeof(Event) / 1024;
              o.flush_interval_ms = 1;  // the first tick comes at once and holds the writer
              if (!StartRecorder(o))
                _exit(10);
              while (!writer.held.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
              int stored = 0;
              for (int i = 0; i < kEvents; ++i) stored += Record(AllocEvent(i, 1, 0, 0)) ? 1 : 0;
              writer.release.store(true);
              StopRecorder("test status");
              _exit(stored == kRing ? 0 : 11);
            }),
            0);
  ReadBack rb = ReadFile(path);
  ASSERT_TRUE(rb.reader != nullptr);
  ASSERT_TRUE(rb.reader->trailer().has_value());
  int64_t drops_events = 0;
  int allocs = 0;
  for (const Event& ev : rb.events) {
    if (ev.type == EventType::kDrops) {
      EXPECT_EQ(rb.reader->Str(ev.text), "ring_full");
      drops_events += ev.value;
    }
    allocs += ev.type == EventType::kAlloc;
  }
  EXPECT_EQ(allocs, kRing);
  EXPECT_EQ(drops_events, kEvents - kRing);
  EXPECT_EQ(rb.reader->trailer()->value, drops_events);
  EXPECT_EQ(rb.reader->Str(rb.reader->trailer()->text), "test status");
  unlink(path.c_str());
}

// With a 10 s flush period, only the half-full wake drains a ring between bursts: each burst of
// 200 events into a 512-event ring waits (at most 5 s) until the ring is below half again, which
// without the wake never happens before the period; then the next burst always fits.
TEST(RecorderTest, HalfFullRingWakesTheWriterBeforeABurstOverflows) {
  const std::string path = TempPath("burst");
  constexpr int kBursts = 20;
  constexpr int kBurst = 200;
  constexpr uint64_t kHalf = 256;
  ASSERT_EQ(InChild([&] {
              RecorderOptions o;
              o.path = path.c_str();
              o.ring_kib = 64;
              o.flush_interval_ms = 10000;
              if (!StartRecorder(o))
                _exit(10);
              uint64_t pushed = 0;
              for (int b = 0; b < kBursts; ++b) {
                for (int i = 0; i < kBurst; ++i) {
                  if (!Record(AllocEvent(pushed++, 8, 0, 0)))
                    _exit(11);
                }
                const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
                while (GetRecorderStats().events_written + kHalf < pushed) {
                  if (std::chrono::steady_clock::now() > deadline) {
                    std::fprintf(stderr, "burst %d: %llu of %llu events written after 5 s\n", b,
                                 static_cast<unsigned long long>(GetRecorderStats().events_written),
                                 static_cast<unsigned long long>(pushed));
                    _exit(12);
                  }
                  std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
              }
              StopRecorder(nullptr);
              _exit(0);
            }),
            0);
  ReadBack rb = ReadFile(path);
  int allocs = 0;
  for (const Event& ev : rb.events) allocs += ev.type == EventType::kAlloc;
  EXPECT_EQ(allocs, kBursts * kBurst);
  ASSERT_TRUE(rb.reader->trailer().has_value());
  EXPECT_EQ(rb.reader->trailer()->value, 0);
  unlink(path.c_str());
}

TEST(RecorderTest, SigkillLeavesAReadablePrefix) {
  const std::string path = TempPath("sigkill");
  const pid_t pid = fork();
  if (pid == 0) {
    RecorderOptions o;
    o.path = path.c_str();
    o.flush_interval_ms = 2;
    o.chunk_kib = 16;
    if (!StartRecorder(o))
      _exit(10);
    const uint32_t api = InternString("cuMemAlloc_v2");
    for (uint64_t i = 0;; ++i) {
      Record(AllocEvent(i, 4096, api, 0));
      if (i % 256 == 0)
        usleep(100);
    }
  }
  // Wait until a few chunks are on disk, then kill without warning.
  for (int i = 0; i < 500; ++i) {
    usleep(10000);
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && st.st_size > 200000)
      break;
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ReadBack rb = ReadFile(path);
  EXPECT_TRUE(rb.status.reason == trace::StopReason::kNoTrailer ||
              rb.status.reason == trace::StopReason::kTruncated)
      << rb.status.message;
  EXPECT_FALSE(rb.reader->trailer().has_value());
  // A slow writer (a sanitizer build) may fill the ring: events are then dropped and counted,
  // which leaves gaps, never disorder.
  bool dropped = false;
  for (const Event& ev : rb.events) dropped |= ev.type == EventType::kDrops;
  uint64_t allocs = 0, expected_addr = 0;
  for (const Event& ev : rb.events) {
    if (ev.type != EventType::kAlloc)
      continue;
    if (dropped) {
      EXPECT_GE(ev.addr, expected_addr) << "events must arrive in order";
      expected_addr = ev.addr + 1;
    } else {
      EXPECT_EQ(ev.addr, expected_addr++) << "events must arrive complete and in order";
    }
    ++allocs;
  }
  EXPECT_GT(allocs, 1000u);
  unlink(path.c_str());
}

TEST(RecorderTest, RefusesToOverwriteOrFollowSymlinks) {
  const std::string path = TempPath("exists");
  FILE* f = fopen(path.c_str(), "w");
  fputs("precious", f);
  fclose(f);
  const std::string link = TempPath("link");
  ASSERT_EQ(symlink("/tmp/cuclimb-recorder-target-never-created", link.c_str()), 0);
  EXPECT_EQ(InChild([&] {
              RecorderOptions o;
              o.path = path.c_str();
              const bool started = StartRecorder(o);
              _exit(started ? 1 : 0);
            }),
            0);
  EXPECT_EQ(InChild([&] {
              RecorderOptions o;
              o.path = link.c_str();
              _exit(StartRecorder(o) ? 1 : 0);
            }),
            0);
  char buf[16] = {};
  f = fopen(path.c_str(), "r");
  ASSERT_NE(fgets(buf, sizeof(buf), f), nullptr);
  fclose(f);
  EXPECT_STREQ(buf, "precious");
  EXPECT_NE(access("/tmp/cuclimb-recorder-target-never-created", F_OK), 0);
  unlink(path.c_str());
  unlink(link.c_str());
}

TEST(RecorderTest, FileIsPrivate) {
  const std::string path = TempPath("mode");
  ASSERT_EQ(InChild([&] {
              RecorderOptions o;
              o.path = path.c_str();
              if (!StartRecorder(o))
                _exit(10);
              StopRecorder(nullptr);
            }),
            0);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  unlink(path.c_str());
}

TEST(RecorderTest, ForkedChildStopsRecordingAndParentFileStaysValid) {
  const std::string path = TempPath("fork");
  ASSERT_EQ(InChild([&] {
              RecorderOptions o;
              o.path = path.c_str();
              o.flush_interval_ms = 5;
              if (!StartRecorder(o))
                _exit(10);
              const uint32_t api = InternString("cuMemAlloc_v2");
              for (int i = 0; i < 100; ++i) Record(AllocEvent(i, 8, api, 0));
              const pid_t child = fork();
              if (child == 0) {
                AbandonRecorderInChild();
                const bool recorded = Record(AllocEvent(999999, 8, api, 0));
                FlushRecorder();  // must not hang or write
                StopRecorder(nullptr);
                _exit(recorded ? 1 : 0);
              }
              int status = 0;
              waitpid(child, &status, 0);
              for (int i = 100; i < 200; ++i) Record(AllocEvent(i, 8, api, 0));
              StopRecorder(nullptr);
              _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 20);
            }),
            0);
  ReadBack rb = ReadFile(path);
  EXPECT_EQ(rb.status.reason, trace::StopReason::kComplete) << rb.status.message;
  int allocs = 0;
  for (const Event& ev : rb.events) {
    if (ev.type != EventType::kAlloc)
      continue;
    EXPECT_NE(ev.addr, 999999u);
    ++allocs;
  }
  EXPECT_EQ(allocs, 200);
  unlink(path.c_str());
}

// A forked child that leaves through exit() runs static destructors; none may wait on state the
// parent's writer thread holds (a condition variable it sleeps on hung such children).
TEST(RecorderTest, ForkedChildExitsThroughExitWithoutHanging) {
  const std::string path = TempPath("fork-exit");
  ASSERT_EQ(InChild([&] {
              RecorderOptions o;
              o.path = path.c_str();
              o.flush_interval_ms =
                  10'000;  // the writer thread is asleep on its condition variable
              if (!StartRecorder(o))
                _exit(10);
              const pid_t child = fork();
              if (child == 0) {
                AbandonRecorderInChild();
                std::exit(0);  // runs atexit handlers and static destructors
              }
              int status = 0;
              for (int i = 0; i < 500; ++i) {  // 5 s, then call it a hang
                if (waitpid(child, &status, WNOHANG) == child)
                  break;
                usleep(10000);
              }
              const bool exited = WIFEXITED(status) && WEXITSTATUS(status) == 0;
              if (!exited)
                kill(child, SIGKILL);
              StopRecorder(nullptr);
              _exit(exited ? 0 : 1);
            }),
            0);
  unlink(path.c_str());
}

TEST(RecorderTest, PauseWritesMarkersAndSkipsEvents) {
  const std::string path = TempPath("pause");
  ASSERT_EQ(InChild([&] {
              RecorderOptions o;
              o.path = path.c_str();
              if (!StartRecorder(o))
                _exit(10);
              Record(AllocEvent(1, 8, 0, 0));
              SetRecording(false);
              Record(AllocEvent(2, 8, 0, 0));
              SetRecording(true);
              Record(AllocEvent(3, 8, 0, 0));
              StopRecorder(nullptr);
            }),
            0);
  ReadBack rb = ReadFile(path);
  std::vector<uint64_t> addrs;
  std::vector<int64_t> switches;
  for (const Event& ev : rb.events) {
    if (ev.type == EventType::kAlloc)
      addrs.push_back(ev.addr);
    if (ev.type == EventType::kRecording)
      switches.push_back(ev.value);
  }
  EXPECT_EQ(addrs, (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(switches, (std::vector<int64_t>{0, 1}));
  unlink(path.c_str());
}

}  // namespace
}  // namespace cuclimb::interposer
