// SPDX-License-Identifier: Apache-2.0
// libcuclimb.so as the NVTX injection of a program that never touches a GPU (nvtx_program.cpp,
// built with the real NVTX headers): what is recorded, and how the trace survives every way the
// program can end. Runs on CI machines without a driver.
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "test_support.h"

namespace cuclimb::testing {
namespace {

using format::Event;
using format::EventType;

std::string Lib() {
  const char* lib = std::getenv("CUCLIMB_LIB");
  return lib != nullptr ? lib : "";
}
std::string Program() {
  const char* p = std::getenv("CUCLIMB_TEST_NVTX_PROGRAM");
  return p != nullptr ? p : "";
}

class NvtxInjection : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(Lib().empty()) << "CUCLIMB_LIB not set";
    ASSERT_FALSE(Program().empty()) << "CUCLIMB_TEST_NVTX_PROGRAM not set";
    dir_ = TempDir();
    trace_ = dir_ + "/out.trace";
  }

  RunResult RunMode(const std::string& mode,
                    std::vector<std::pair<std::string, std::string>> extra = {},
                    const std::vector<int>& closed = {}) {
    const char* second = std::getenv("CUCLIMB_TEST_NVTX_SECOND");
    std::vector<std::pair<std::string, std::string>> env = {
        {"CUCLIMB_TEST_NVTX_SECOND", second != nullptr ? second : ""},
        {"NVTX_INJECTION64_PATH", Lib()},
        {"CUDA_INJECTION64_PATH", ""},
        {"LD_PRELOAD", ""},
        {"CUCLIMB_OUTPUT", trace_},
    };
    for (auto& e : extra) env.push_back(e);
    return RunProgram({Program(), mode}, env, dir_, closed);
  }

  std::vector<std::string> Names(const Trace& t, EventType type) {
    std::vector<std::string> out;
    for (const Event& ev : t.Of(type)) out.push_back(t.Str(ev.name));
    return out;
  }

  std::string dir_;
  std::string trace_;
};

TEST_F(NvtxInjection, RecordsRangesMarksDomainsAndTheMemoryApi) {
  const RunResult r = RunMode("basic");
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  EXPECT_EQ(r.stderr_text, "");
  const Trace t = ReadTrace(trace_);
  ASSERT_TRUE(t.opened);
  EXPECT_EQ(t.status.reason, trace::StopReason::kComplete) << t.status.message;

  // Five iterations: push "iteration" (domain, payload i) and push "forward" (default domain).
  int iteration = 0;
  for (const Event& ev : t.Of(EventType::kPush)) {
    if (t.Str(ev.name) == "iteration") {
      ++iteration;
      EXPECT_EQ(t.Str(ev.domain), "test-domain");
      EXPECT_EQ(ev.value, iteration);
    }
  }
  EXPECT_EQ(iteration, 5);
  EXPECT_EQ(t.Count(EventType::kPush), 11u);  // 5 iteration + 5 forward + 1 wide
  EXPECT_EQ(t.Count(EventType::kPop), 11u);
  std::vector<std::string> marks = Names(t, EventType::kMark);
  ASSERT_EQ(marks.size(), 3u);
  EXPECT_EQ(marks[0], "start");
  EXPECT_EQ(marks[1], "checkpoint");
  EXPECT_EQ(t.Of(EventType::kMark)[1].value, -7);
  // The second NVTX instance (a library of its own) reached cuclimb too.
  EXPECT_EQ(marks[2], "from-second-instance");
  EXPECT_EQ(t.Str(t.Of(EventType::kMark)[2].domain), "second-instance");
  ASSERT_EQ(t.Count(EventType::kRangeStart), 1u);
  ASSERT_EQ(t.Count(EventType::kRangeEnd), 1u);
  EXPECT_EQ(t.Of(EventType::kRangeStart)[0].addr, t.Of(EventType::kRangeEnd)[0].addr);
  EXPECT_EQ(t.Str(t.Of(EventType::kRangeStart)[0].name), "startend");
  bool wide = false;
  for (const std::string& n : Names(t, EventType::kPush)) wide = wide || n == "wide";
  EXPECT_TRUE(wide);
  bool named = false;
  for (const Event& ev : t.Of(EventType::kThread)) named = named || t.Str(ev.name) == "main-loop";
  EXPECT_TRUE(named);

  // Memory API: a heap, two regions, a resize, two unregisters (pointer, handle), reset, destroy.
  ASSERT_EQ(t.Count(EventType::kHeap), 1u);
  const Event heap = t.Of(EventType::kHeap)[0];
  EXPECT_EQ(heap.size, 65536u);
  EXPECT_EQ(heap.handle, heap.addr);
  EXPECT_EQ(t.Str(heap.name), "arena");
  EXPECT_EQ(t.Str(heap.domain), "test-domain");
  const std::vector<Event> regions = t.Of(EventType::kRegion);
  ASSERT_EQ(regions.size(), 3u);
  EXPECT_EQ(regions[0].aux, heap.handle);
  EXPECT_EQ(regions[0].addr, heap.addr + 1024);
  EXPECT_EQ(regions[0].size, 256u);
  EXPECT_EQ(regions[1].addr, heap.addr + 4096);
  EXPECT_EQ(regions[2].addr, heap.addr + 4096);  // resized
  EXPECT_EQ(regions[2].size, 1024u);
  const std::vector<Event> frees = t.Of(EventType::kRegionFree);
  ASSERT_EQ(frees.size(), 2u);
  EXPECT_EQ(frees[0].addr, heap.addr + 1024);
  EXPECT_EQ(frees[1].addr, heap.addr + 4096);  // by handle: our handles are the addresses
  EXPECT_EQ(t.Count(EventType::kHeapReset), 1u);
  EXPECT_EQ(t.Count(EventType::kHeapDestroy), 1u);

  // Session records.
  ASSERT_EQ(t.Count(EventType::kProcess), 1u);
  EXPECT_GT(t.Of(EventType::kProcess)[0].value, 0);
  EXPECT_GE(t.Count(EventType::kMapping), 2u);  // the program and at least libc
  EXPECT_GE(t.Count(EventType::kOverhead), 1u);
}

TEST_F(NvtxInjection, TraceFileIsPrivateAndNeverOverwritten) {
  ASSERT_EQ(RunMode("basic").status, 0);
  struct stat st {};
  ASSERT_EQ(stat(trace_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const off_t size = st.st_size;
  // A second run must not overwrite: it warns and runs untraced.
  const RunResult again = RunMode("basic");
  EXPECT_EQ(again.status, 0);
  EXPECT_NE(again.stderr_text.find("cuclimb: "), std::string::npos) << again.stderr_text;
  ASSERT_EQ(stat(trace_.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, size);
}

TEST_F(NvtxInjection, NeverFollowsASymlink) {
  const std::string target = dir_ + "/target";
  ASSERT_EQ(symlink(target.c_str(), trace_.c_str()), 0);
  const RunResult r = RunMode("basic");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.stderr_text.find("cuclimb: "), std::string::npos);
  EXPECT_FALSE(Exists(target));
}

TEST_F(NvtxInjection, UnwritableOutputWarnsAndTheProgramRuns) {
  const RunResult r = RunMode("basic", {{"CUCLIMB_OUTPUT", dir_ + "/no/such/dir/x.trace"}});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.stderr_text.find("cuclimb: cannot create trace file"), std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("heap"), std::string::npos);  // the program ran to the end
}

TEST_F(NvtxInjection, OutputPatternExpandsPidAndRank) {
  const RunResult r =
      RunMode("basic", {{"CUCLIMB_OUTPUT", dir_ + "/run-%r-%p.trace"}, {"RANK", "3"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const std::vector<std::string> files = ListDir(dir_, "run-3-");
  ASSERT_EQ(files.size(), 1u);
  const Trace t = ReadTrace(dir_ + "/" + files[0]);
  ASSERT_EQ(t.Count(EventType::kProcess), 1u);
  const Event process = t.Of(EventType::kProcess)[0];
  EXPECT_EQ(files[0], "run-3-" + std::to_string(process.value) + ".trace");
  EXPECT_EQ(process.corr, 4u);  // rank + 1
}

TEST_F(NvtxInjection, BadOptionValueWarnsAndKeepsTheDefault) {
  const RunResult r = RunMode("basic", {{"CUCLIMB_KERNELS", "sometimes"}});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.stderr_text.find("CUCLIMB_KERNELS=sometimes is not valid"), std::string::npos)
      << r.stderr_text;
  EXPECT_TRUE(ReadTrace(trace_).opened);
}

TEST_F(NvtxInjection, ManyThreadsRecordEverything) {
  const RunResult r = RunMode("threads");
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const Trace t = ReadTrace(trace_);
  EXPECT_EQ(t.status.reason, trace::StopReason::kComplete);
  EXPECT_EQ(t.Count(EventType::kPush), 80000u);
  EXPECT_EQ(t.Count(EventType::kPop), 80000u);
  EXPECT_EQ(t.reader->trailer()->value, 0) << "drops";
}

TEST_F(NvtxInjection, ExitFromAThreadFlushes) {
  const RunResult r = RunMode("exit-thread");
  EXPECT_EQ(r.status, 3);
  const Trace t = ReadTrace(trace_);
  EXPECT_EQ(t.status.reason, trace::StopReason::kComplete);
  std::vector<std::string> marks = Names(t, EventType::kMark);
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[1], "exiting");
}

class SignalTest : public NvtxInjection, public ::testing::WithParamInterface<const char*> {};

TEST_P(SignalTest, FlushesThenDiesOfTheSignal) {
  const std::string mode = GetParam();
  const int sig = mode == "sigterm" ? SIGTERM : mode == "sigint" ? SIGINT : SIGHUP;
  const RunResult r = RunMode(mode);
  EXPECT_TRUE(r.signaled);
  EXPECT_EQ(r.signal, sig);
  const Trace t = ReadTrace(trace_);
  EXPECT_EQ(t.status.reason, trace::StopReason::kComplete) << t.status.message;
  EXPECT_EQ(t.Count(EventType::kPush), 200u);
  EXPECT_NE(t.Status().find("signal"), std::string::npos) << t.Status();
}

INSTANTIATE_TEST_SUITE_P(Signals, SignalTest, ::testing::Values("sigterm", "sigint", "sighup"));

TEST_F(NvtxInjection, AProgramsOwnSignalHandlerStaysInCharge) {
  const RunResult r = RunMode("handled-sigterm");
  EXPECT_EQ(r.status, 42);
  EXPECT_FALSE(r.signaled);
}

TEST_F(NvtxInjection, SigkillLeavesATraceReadableUpToItsLastChunk) {
  const RunResult r = RunMode("sigkill");
  EXPECT_TRUE(r.signaled);
  EXPECT_EQ(r.signal, SIGKILL);
  const Trace t = ReadTrace(trace_);
  ASSERT_TRUE(t.opened);
  EXPECT_FALSE(t.status.partial()) << t.status.message;  // ends at a chunk boundary
  EXPECT_EQ(t.status.reason, trace::StopReason::kNoTrailer);
  EXPECT_GE(t.Count(EventType::kPush), 2000u);  // the 1000 iterations before the pause
}

TEST_F(NvtxInjection, ForkedChildStopsRecordingAndExitsCleanly) {
  const RunResult r = RunMode("fork", {{"CUCLIMB_OUTPUT", dir_ + "/fork-%p.trace"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text << r.stdout_text;
  // Exactly one trace: the parent's.
  const std::vector<std::string> files = ListDir(dir_, "fork-");
  ASSERT_EQ(files.size(), 1u);
  const std::string p = dir_ + "/" + files[0];
  const Trace t = ReadTrace(p);
  EXPECT_EQ(t.status.reason, trace::StopReason::kComplete);
  std::vector<std::string> marks = Names(t, EventType::kMark);
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0], "parent-before");
  EXPECT_EQ(marks[1], "parent-after");
}

TEST_F(NvtxInjection, ChildrenForkedWhileThreadsRecordExitWithoutHanging) {
  const RunResult r = RunMode("fork-busy", {{"CUCLIMB_OUTPUT", dir_ + "/busy-%p.trace"}});
  ASSERT_EQ(r.status, 0) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("forks 20 hung 0 failed 0"), std::string::npos) << r.stdout_text;
  const std::vector<std::string> files = ListDir(dir_, "busy-");
  ASSERT_EQ(files.size(), 1u);  // the parent's only
  const Trace t = ReadTrace(dir_ + "/" + files[0]);
  EXPECT_EQ(t.status.reason, trace::StopReason::kComplete);
  for (const Event& ev : t.Of(EventType::kPush)) ASSERT_EQ(t.Str(ev.name), "work");
}

TEST_F(NvtxInjection, PauseAndResumeThroughTheCApi) {
  const RunResult r = RunMode("pause", {{"CUCLIMB_PAUSED", "1"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const Trace t = ReadTrace(trace_);
  std::vector<std::string> marks = Names(t, EventType::kMark);
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[0], "while-recording");
  EXPECT_EQ(marks[1], "iteration");
  EXPECT_EQ(t.Of(EventType::kMark)[1].value, 77);
  // paused at start, resumed, paused again
  std::vector<int64_t> switches;
  for (const Event& ev : t.Of(EventType::kRecording)) switches.push_back(ev.value);
  EXPECT_EQ(switches, (std::vector<int64_t>{0, 1, 0}));
  // Paused from the start, the trace still says who ran and where its code lay.
  EXPECT_EQ(t.Count(EventType::kProcess), 1u);
  EXPECT_GE(t.Count(EventType::kMapping), 2u);
}

TEST_F(NvtxInjection, ARunPausedToTheEndStillDescribesItsProcess) {
  const RunResult r = RunMode("basic", {{"CUCLIMB_PAUSED", "1"}, {"RANK", "5"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const Trace t = ReadTrace(trace_);
  EXPECT_EQ(t.status.reason, trace::StopReason::kComplete);
  EXPECT_EQ(t.Count(EventType::kPush), 0u);
  ASSERT_EQ(t.Count(EventType::kProcess), 1u);
  EXPECT_EQ(t.Of(EventType::kProcess)[0].corr, 6u);  // rank 5
  EXPECT_GE(t.Count(EventType::kMapping), 2u);
}

TEST_F(NvtxInjection, FollowChildrenOffRemovesOnlyOurPreload) {
  const char* second = std::getenv("CUCLIMB_TEST_NVTX_SECOND");
  ASSERT_NE(second, nullptr);
  const std::string preload = std::string(second) + " " + Lib();
  const RunResult off = RunMode(
      "env",
      {{"LD_PRELOAD", preload}, {"NVTX_INJECTION64_PATH", ""}, {"CUCLIMB_FOLLOW_CHILDREN", "off"}});
  ASSERT_EQ(off.status, 0) << off.stderr_text;
  EXPECT_NE(off.stdout_text.find("LD_PRELOAD=" + std::string(second) + "\n"), std::string::npos)
      << off.stdout_text;
  EXPECT_NE(off.stdout_text.find("CUDA_INJECTION64_PATH=(unset)"), std::string::npos);
  EXPECT_NE(off.stdout_text.find("NVTX_INJECTION64_PATH=(unset)"), std::string::npos);
  EXPECT_TRUE(ReadTrace(trace_).opened);  // the process itself still records

  ASSERT_EQ(unlink(trace_.c_str()), 0);
  const RunResult on = RunMode("env", {{"LD_PRELOAD", preload}, {"NVTX_INJECTION64_PATH", ""}});
  ASSERT_EQ(on.status, 0) << on.stderr_text;
  EXPECT_NE(on.stdout_text.find("LD_PRELOAD=" + preload + "\n"), std::string::npos)
      << on.stdout_text;
  EXPECT_NE(on.stdout_text.find("NVTX_INJECTION64_PATH=" + Lib()), std::string::npos);
}

TEST_F(NvtxInjection, QuietSilencesConfigurationAndConstructorWarnings) {
  const std::vector<std::pair<std::string, std::string>> env = {
      {"LD_PRELOAD", Lib()},
      {"NVTX_INJECTION64_PATH", ""},
      {"CUDA_INJECTION64_PATH", dir_ + "/another-tool.so"},
      {"CUCLIMB_KERNELS", "sometimes"}};
  const RunResult loud = RunMode("basic", env);
  ASSERT_EQ(loud.status, 0);
  EXPECT_NE(loud.stderr_text.find("CUDA_INJECTION64_PATH already names"), std::string::npos)
      << loud.stderr_text;
  EXPECT_NE(loud.stderr_text.find("CUCLIMB_KERNELS=sometimes is not valid"), std::string::npos);

  ASSERT_EQ(unlink(trace_.c_str()), 0);
  auto quiet_env = env;
  quiet_env.push_back({"CUCLIMB_LOG", "quiet"});
  const RunResult quiet = RunMode("basic", quiet_env);
  ASSERT_EQ(quiet.status, 0);
  EXPECT_EQ(quiet.stderr_text, "");
  EXPECT_TRUE(ReadTrace(trace_).opened);
}

// A program started with stderr or stdout closed (`2>&-`): the trace must not become fd 2 (the
// program's own stderr and cuclimb's warnings would be written into it). Both ways of loading
// the library. Reproducer: /work/shared/bad-inputs/stderr-closed-corrupts-trace.sh.
struct ClosedCase {
  const char* name;
  std::vector<int> closed;
  bool preload;
};

void PrintTo(const ClosedCase& c, std::ostream* os) {
  *os << c.name;
}

class ClosedDescriptors : public NvtxInjection, public ::testing::WithParamInterface<ClosedCase> {};

TEST_P(ClosedDescriptors, TheTraceStaysIntact) {
  const ClosedCase& c = GetParam();
  std::vector<std::pair<std::string, std::string>> env;
  if (c.preload)
    env = {{"LD_PRELOAD", Lib()}, {"NVTX_INJECTION64_PATH", ""}};
  const RunResult r = RunMode("errlog", env, c.closed);
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const Trace t = ReadTrace(trace_);
  ASSERT_TRUE(t.opened);
  EXPECT_EQ(t.status.reason, trace::StopReason::kComplete) << t.status.message;
  EXPECT_EQ(t.Count(EventType::kPush), 20u);
  EXPECT_EQ(ReadText(trace_).find("disk almost full"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Closed, ClosedDescriptors,
                         ::testing::Values(ClosedCase{"stderr_nvtx", {2}, false},
                                           ClosedCase{"stderr_preload", {2}, true},
                                           ClosedCase{"stdout_nvtx", {1}, false},
                                           ClosedCase{"all_three_preload", {0, 1, 2}, true}),
                         [](const ::testing::TestParamInfo<ClosedCase>& param_info) {
                           return std::string(param_info.param.name);
                         });

TEST_F(NvtxInjection, TheTraceDescriptorIsAboveStderrAndCloseOnExec) {
  const std::string report = dir_ + "/fds.txt";
  const RunResult r = RunMode("fds", {{"CUCLIMB_TEST_REPORT", report}}, {0, 1, 2});
  ASSERT_EQ(r.status, 0);
  const std::string text = ReadText(report);
  int fd = -1;
  int cloexec = -1;
  ASSERT_EQ(std::sscanf(text.c_str(), "trace-fd %d cloexec %d", &fd, &cloexec), 2) << text;
  EXPECT_GE(fd, 3);
  EXPECT_EQ(cloexec, 1);
  EXPECT_EQ(text.find("trace-fd", 1), std::string::npos) << "one descriptor: " << text;
}

}  // namespace
}  // namespace cuclimb::testing
