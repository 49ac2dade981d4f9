// SPDX-License-Identifier: Apache-2.0
// libcuclimb.so's CUPTI life cycle without a GPU: cupti_host.cpp loads it as the driver does and
// a fake libcupti.so.13 (fake_cupti/) records what cuclimb enables. Covers the version gate, a
// subscription held by another tool, which callbacks and activity kinds are on while recording,
// paused and resumed, capture tracking across a pause, sampling windows, a CUPTI refusal, the
// forced flush at exit and a forked child that must never call CUPTI.
#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <cupti.h>

#include <gtest/gtest.h>

#include "interposer/callbacks.h"
#include "test_support.h"

namespace cuclimb::testing {
namespace {

using format::Event;
using format::EventType;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The ids that stay enabled while paused: capture tracking (no CUDA query may run during a
// capture) and the teardown handshakes of contexts and pools.
const std::set<CUpti_CallbackId> kTrackedWhilePaused = {
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture,
    CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2,
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease_v2,
    CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemPoolDestroy,
};

std::set<CUpti_CallbackId> TableIds(bool api) {
  size_t count = 0;
  const interposer::CbidEntry* entries = interposer::DriverCbids(&count);
  std::set<CUpti_CallbackId> ids;
  for (size_t i = 0; i < count; ++i) {
    if (api || entries[i].group == interposer::CbidGroup::kAlways)
      ids.insert(entries[i].cbid);
  }
  return ids;
}

std::set<CUpti_CallbackId> ResourceIds() {
  size_t count = 0;
  const CUpti_CallbackId* ids = interposer::ResourceCbids(&count);
  return std::set<CUpti_CallbackId>(ids, ids + count);
}

// One "state PHASE key=value ..." line of cupti_host.
struct HostState {
  std::set<CUpti_CallbackId> driver;
  std::set<CUpti_CallbackId> resource;
  bool sync = false;
  bool kernel = false;
  bool memory = false;
};

std::set<CUpti_CallbackId> ParseIds(const std::string& list) {
  std::set<CUpti_CallbackId> ids;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty())
      ids.insert(static_cast<CUpti_CallbackId>(std::stoul(item)));
  }
  return ids;
}

bool StateOf(const std::string& stdout_text, const std::string& phase, HostState* out) {
  std::stringstream lines(stdout_text);
  std::string line;
  while (std::getline(lines, line)) {
    std::stringstream words(line);
    std::string word;
    words >> word;
    if (word != "state")
      continue;
    words >> word;
    if (word != phase)
      continue;
    while (words >> word) {
      const size_t eq = word.find('=');
      const std::string key = word.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
      if (key == "driver")
        out->driver = ParseIds(value);
      if (key == "resource")
        out->resource = ParseIds(value);
      if (key == "sync")
        out->sync = value == "1";
      if (key == "kernel")
        out->kernel = value == "1";
      if (key == "memory")
        out->memory = value == "1";
    }
    return true;
  }
  return false;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) out.push_back(line);
  return out;
}

size_t CountLines(const std::vector<std::string>& lines, const std::string& prefix) {
  return static_cast<size_t>(std::count_if(
      lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(prefix, 0) == 0; }));
}

class CuptiLifecycle : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(Env("CUCLIMB_LIB").empty());
    ASSERT_FALSE(Env("CUCLIMB_TEST_CUPTI_HOST").empty());
    ASSERT_FALSE(Env("CUCLIMB_TEST_FAKE_CUPTI_DIR").empty());
    dir_ = TempDir();
    trace_ = dir_ + "/out.trace";
    log_ = dir_ + "/cupti.log";
  }

  RunResult Run(std::vector<std::string> args,
                std::vector<std::pair<std::string, std::string>> extra = {}) {
    std::vector<std::pair<std::string, std::string>> env = {
        {"LD_LIBRARY_PATH", Env("CUCLIMB_TEST_FAKE_CUPTI_DIR")},
        {"CUDA_INJECTION64_PATH", Env("CUCLIMB_LIB")},
        {"NVTX_INJECTION64_PATH", Env("CUCLIMB_LIB")},
        {"LD_PRELOAD", ""},
        {"CUCLIMB_OUTPUT", trace_},
        {"FAKE_CUPTI_LOG", log_},
        {"FAKE_CUPTI_VERSION", ""},
        {"FAKE_CUPTI_OTHER_SUBSCRIBER", ""},
        {"FAKE_CUPTI_FAIL", ""},
    };
    for (auto& e : extra) env.push_back(e);
    args.insert(args.begin(), Env("CUCLIMB_TEST_CUPTI_HOST"));
    return RunProgram(args, env, dir_);
  }

  std::vector<std::string> Log() { return Lines(ReadText(log_)); }

  std::string dir_;
  std::string trace_;
  std::string log_;
};

TEST_F(CuptiLifecycle, RecordingEnablesTheWholeTableAndPausingKeepsOnlyTracking) {
  const RunResult r =
      Run({"states"}, {{"CUCLIMB_KERNELS", "all"}, {"CUCLIMB_MEMORY_ACTIVITY", "on"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  EXPECT_EQ(r.stderr_text, "");
  HostState recording, paused, resumed;
  ASSERT_TRUE(StateOf(r.stdout_text, "recording", &recording)) << r.stdout_text;
  ASSERT_TRUE(StateOf(r.stdout_text, "paused", &paused));
  ASSERT_TRUE(StateOf(r.stdout_text, "resumed", &resumed));

  EXPECT_EQ(recording.driver, TableIds(true));
  EXPECT_EQ(recording.resource, ResourceIds());
  EXPECT_TRUE(recording.sync);
  EXPECT_TRUE(recording.kernel);
  EXPECT_TRUE(recording.memory);

  EXPECT_EQ(paused.driver, kTrackedWhilePaused);
  EXPECT_EQ(paused.resource, ResourceIds());  // contexts stay known while paused
  EXPECT_FALSE(paused.kernel);
  EXPECT_FALSE(paused.memory);

  EXPECT_EQ(resumed.driver, TableIds(true));
  EXPECT_TRUE(resumed.kernel);
  EXPECT_TRUE(resumed.memory);

  const std::vector<std::string> log = Log();
  EXPECT_EQ(CountLines(log, "subscribe cuclimb"), 1u);
  EXPECT_EQ(CountLines(log, "register_buffers"), 1u);
  // The forced flush at exit (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1).
  EXPECT_GE(CountLines(log, "flush_all 1 "), 1u);

  const Trace t = ReadTrace(trace_);
  ASSERT_TRUE(t.opened);
  EXPECT_EQ(t.status.reason, trace::StopReason::kComplete);
  EXPECT_EQ(t.Status(), "");
  std::vector<int64_t> switches;
  for (const Event& ev : t.Of(EventType::kRecording)) switches.push_back(ev.value);
  EXPECT_EQ(switches, (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(t.Count(EventType::kProcess), 1u);
  EXPECT_EQ(t.Of(EventType::kProcess)[0].aux, 130001u);  // the CUPTI version
}

TEST_F(CuptiLifecycle, DefaultModesStartWithoutActivityKinds) {
  // kernels and memory records are sampled by default: off until a window opens.
  const RunResult r = Run({"states"});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  HostState recording;
  ASSERT_TRUE(StateOf(r.stdout_text, "recording", &recording));
  EXPECT_FALSE(recording.kernel);
  EXPECT_FALSE(recording.memory);
  EXPECT_EQ(recording.driver, TableIds(true));
}

TEST_F(CuptiLifecycle, ApiOffLeavesLaunchesAndCopiesOff) {
  const RunResult r = Run({"states"}, {{"CUCLIMB_API", "off"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  HostState recording, paused;
  ASSERT_TRUE(StateOf(r.stdout_text, "recording", &recording));
  ASSERT_TRUE(StateOf(r.stdout_text, "paused", &paused));
  EXPECT_EQ(recording.driver, TableIds(false));
  EXPECT_LT(recording.driver.size(), TableIds(true).size());
  EXPECT_EQ(paused.driver, kTrackedWhilePaused);
}

TEST_F(CuptiLifecycle, StartingPausedEnablesOnlyTracking) {
  const RunResult r = Run({"states"}, {{"CUCLIMB_PAUSED", "1"}, {"CUCLIMB_KERNELS", "all"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  HostState recording, resumed;
  ASSERT_TRUE(StateOf(r.stdout_text, "recording", &recording));
  ASSERT_TRUE(StateOf(r.stdout_text, "resumed", &resumed));
  EXPECT_EQ(recording.driver, kTrackedWhilePaused);
  EXPECT_FALSE(recording.kernel);
  EXPECT_EQ(resumed.driver, TableIds(true));
  EXPECT_TRUE(resumed.kernel);
  const Trace t = ReadTrace(trace_);
  EXPECT_EQ(t.Count(EventType::kProcess), 1u);
  EXPECT_GE(t.Count(EventType::kMapping), 2u);
}

TEST_F(CuptiLifecycle, ACaptureBegunWhilePausedIsKnownAfterResuming) {
  const RunResult r = Run({"capture-while-paused"});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const Trace t = ReadTrace(trace_);
  ASSERT_TRUE(t.opened);
  std::vector<std::pair<uint64_t, format::MemoryKind>> allocs;
  for (const Event& ev : t.Of(EventType::kAlloc))
    allocs.push_back({ev.addr, static_cast<format::MemoryKind>(ev.kind)});
  ASSERT_EQ(allocs.size(), 3u);  // 0xb000 came while paused
  EXPECT_EQ(allocs[0].first, 0xa000u);
  EXPECT_NE(allocs[0].second, format::MemoryKind::kGraph);
  EXPECT_EQ(allocs[1].first, 0xc000u);
  EXPECT_EQ(allocs[1].second, format::MemoryKind::kGraph);
  EXPECT_EQ(allocs[2].first, 0xd000u);
  EXPECT_NE(allocs[2].second, format::MemoryKind::kGraph);
}

TEST_F(CuptiLifecycle, NcclStreamsAndKernelsAreRecordedLikeAnyOther) {
  const RunResult r = Run({"collectives"});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const Trace t = ReadTrace(trace_);
  ASSERT_TRUE(t.opened);
  bool stream_created = false;
  for (const Event& ev : t.Of(EventType::kCreate)) {
    stream_created =
        stream_created ||
        (ev.kind == static_cast<uint8_t>(format::HandleType::kStream) && ev.handle == 0x7001);
  }
  EXPECT_TRUE(stream_created);
  const std::vector<Event> launches = t.Of(EventType::kLaunch);
  ASSERT_EQ(launches.size(), 3u);
  for (const Event& ev : launches) {
    EXPECT_EQ(t.Str(ev.name), "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    EXPECT_EQ(ev.stream, 0x7001u);
    EXPECT_NE(ev.tid, t.Of(EventType::kCreate)[0].tid);  // the reducer's thread
  }
  ASSERT_EQ(t.Count(EventType::kSync), 1u);
  EXPECT_EQ(t.Of(EventType::kSync)[0].stream, 0x5150u);
}

TEST_F(CuptiLifecycle, UnsupportedCuptiMajorRecordsNvtxOnly) {
  const RunResult r = Run({"iterations", "3", "1"}, {{"FAKE_CUPTI_VERSION", "120000"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("CUPTI API version 120000 is not supported"), std::string::npos)
      << r.stderr_text;
  EXPECT_EQ(CountLines(Log(), "subscribe"), 0u);
  const Trace t = ReadTrace(trace_);
  EXPECT_EQ(t.Status(), "unsupported CUPTI version: NVTX only");
  EXPECT_EQ(t.Count(EventType::kPush), 3u);
}

TEST_F(CuptiLifecycle, UnvalidatedCuptiMinorKeepsCallbacksWithoutActivity) {
  const RunResult r = Run({"states"}, {{"FAKE_CUPTI_VERSION", "130200"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("activity records (GPU kernel times, MEMORY2) are off"),
            std::string::npos)
      << r.stderr_text;
  HostState recording;
  ASSERT_TRUE(StateOf(r.stdout_text, "recording", &recording));
  EXPECT_EQ(recording.driver, TableIds(true));
  EXPECT_EQ(CountLines(Log(), "register_buffers"), 0u);
}

TEST_F(CuptiLifecycle, AnotherSubscriberLeavesNvtxAndNamesTheTool) {
  const RunResult r = Run({"iterations", "3", "1"}, {{"FAKE_CUPTI_OTHER_SUBSCRIBER", "nsys"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("another CUPTI tool (nsys) is attached"), std::string::npos)
      << r.stderr_text;
  const Trace t = ReadTrace(trace_);
  EXPECT_EQ(t.Status(), "CUPTI taken by nsys: NVTX only");
  EXPECT_EQ(t.Count(EventType::kPush), 3u);
  EXPECT_EQ(CountLines(Log(), "flush_all"), 0u);  // never touches activity it does not own
}

TEST_F(CuptiLifecycle, ARefusedActivityKindSwitchesOffOnlyThatKind) {
  const std::string kernel_kind = std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const RunResult r = Run({"states"}, {{"CUCLIMB_KERNELS", "all"},
                                       {"CUCLIMB_MEMORY_ACTIVITY", "on"},
                                       {"FAKE_CUPTI_FAIL", "cuptiActivityEnable:" + kernel_kind}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("cannot enable CUPTI activity CONCURRENT_KERNEL"), std::string::npos)
      << r.stderr_text;
  HostState recording;
  ASSERT_TRUE(StateOf(r.stdout_text, "recording", &recording));
  EXPECT_FALSE(recording.kernel);
  EXPECT_TRUE(recording.memory);
  EXPECT_EQ(recording.driver, TableIds(true));
}

// Sampling windows: gauges 1/0 in the trace, and CONCURRENT_KERNEL + MEMORY2 switched with them.
struct Windows {
  std::vector<int64_t> gauge;  // cuclimb.sampling_window values in order
  size_t kernel_on = 0, kernel_off = 0, memory_on = 0, memory_off = 0;
};

Windows WindowsOf(const Trace& t, const std::vector<std::string>& log) {
  Windows w;
  for (const Event& ev : t.Of(EventType::kGauge)) {
    if (t.Str(ev.name) == "cuclimb.sampling_window")
      w.gauge.push_back(ev.value);
  }
  const std::string kernel = std::to_string(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) + " ";
  const std::string memory = std::to_string(CUPTI_ACTIVITY_KIND_MEMORY2) + " ";
  w.kernel_on = CountLines(log, "activity_enable " + kernel);
  w.kernel_off = CountLines(log, "activity_disable " + kernel);
  w.memory_on = CountLines(log, "activity_enable " + memory);
  w.memory_off = CountLines(log, "activity_disable " + memory);
  return w;
}

TEST_F(CuptiLifecycle, ARefusedDriverCallbackIsNamedInTheTrailerAndTheRestRecords) {
  const std::string alloc = std::to_string(CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync);
  const RunResult r =
      Run({"capture-while-paused"}, {{"FAKE_CUPTI_FAIL", "cuptiEnableCallback:" + alloc}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("cuptiEnableCallback"), std::string::npos) << r.stderr_text;
  EXPECT_EQ(r.stderr_text.find("cannot tell when CUDA queries are safe"), std::string::npos);
  const Trace t = ReadTrace(trace_);
  EXPECT_EQ(t.Status(), "CUPTI refused the callbacks of 1 driver calls (first: cuMemAllocAsync)");
  EXPECT_EQ(t.Count(EventType::kAlloc), 0u);  // the refused call
  EXPECT_EQ(t.Count(EventType::kApi), 1u);    // the capture's end, after resuming
}

TEST_F(CuptiLifecycle, ARefusedCaptureCallbackStopsQueriesAndWindows) {
  const std::string begin = std::to_string(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2);
  const RunResult r =
      Run({"iterations", "12", "10"}, {{"FAKE_CUPTI_FAIL", "cuptiEnableCallback:" + begin},
                                       {"CUCLIMB_KERNEL_EVERY", "2"},
                                       {"CUCLIMB_FLUSH_MS", "5"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("cannot tell when CUDA queries are safe"), std::string::npos)
      << r.stderr_text;
  const Trace t = ReadTrace(trace_);
  EXPECT_NE(t.Status().find("first: cuStreamBeginCapture_v2"), std::string::npos) << t.Status();
  const Windows w = WindowsOf(t, Log());
  EXPECT_TRUE(w.gauge.empty());
  EXPECT_EQ(w.kernel_on, 0u);
  EXPECT_EQ(t.Count(EventType::kPush), 12u);
}

TEST_F(CuptiLifecycle, ARefusedDomainIsLoggedWithWhatItCosts) {
  const std::string sync = std::to_string(CUPTI_CB_DOMAIN_SYNCHRONIZE);
  const RunResult r = Run({"states"}, {{"FAKE_CUPTI_FAIL", "cuptiEnableDomain:" + sync}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("pool gauges follow the writer's period only"), std::string::npos)
      << r.stderr_text;
  HostState recording;
  ASSERT_TRUE(StateOf(r.stdout_text, "recording", &recording));
  EXPECT_FALSE(recording.sync);
  EXPECT_EQ(recording.driver, TableIds(true));
}

TEST_F(CuptiLifecycle, AFailingFlushIsLoggedOnceAndTheTraceStillCompletes) {
  const RunResult r =
      Run({"iterations", "30", "10"}, {{"FAKE_CUPTI_FAIL", "cuptiActivityFlushAll"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const std::string warning = "GPU records may arrive late or be missing at the end";
  const size_t at = r.stderr_text.find(warning);
  EXPECT_NE(at, std::string::npos) << r.stderr_text;
  EXPECT_EQ(r.stderr_text.find(warning, at + 1), std::string::npos) << "logged once";
  EXPECT_GE(CountLines(Log(), "flush_all"), 2u);  // the periodic and the forced one
  const Trace t = ReadTrace(trace_);
  EXPECT_EQ(t.status.reason, trace::StopReason::kComplete);
  EXPECT_EQ(t.Count(EventType::kPush), 30u);
}

TEST_F(CuptiLifecycle, SamplingWindowsOpenAtSampledIterationsAndSwitchBothKinds) {
  const int iterations = 40;
  const RunResult r = Run({"iterations", std::to_string(iterations), "15"},
                          {{"CUCLIMB_KERNEL_EVERY", "4"}, {"CUCLIMB_FLUSH_MS", "5"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const Trace t = ReadTrace(trace_);
  ASSERT_TRUE(t.opened);
  const Windows w = WindowsOf(t, Log());
  ASSERT_FALSE(w.gauge.empty());
  for (size_t i = 0; i < w.gauge.size(); ++i)
    EXPECT_EQ(w.gauge[i], i % 2 == 0 ? 1 : 0) << "windows alternate open/closed, at " << i;
  const size_t opened = (w.gauge.size() + 1) / 2;
  // Iterations 1 and 2 (powers of two below N), then at most one in N, each followed by a
  // closed stretch of (N-1) times its length.
  EXPECT_GE(opened, 2u);
  EXPECT_LE(opened, static_cast<size_t>(iterations / 4 + 2));
  EXPECT_EQ(w.kernel_on, opened);
  EXPECT_EQ(w.memory_on, opened);
  EXPECT_EQ(w.kernel_off, w.gauge.size() / 2);
  EXPECT_EQ(w.memory_off, w.gauge.size() / 2);
}

TEST_F(CuptiLifecycle, KindsOnForTheWholeRunOpenNoWindow) {
  const RunResult r = Run({"iterations", "12", "10"}, {{"CUCLIMB_KERNELS", "all"},
                                                       {"CUCLIMB_MEMORY_ACTIVITY", "on"},
                                                       {"CUCLIMB_KERNEL_EVERY", "2"},
                                                       {"CUCLIMB_FLUSH_MS", "5"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const Windows w = WindowsOf(ReadTrace(trace_), Log());
  EXPECT_TRUE(w.gauge.empty());
  EXPECT_EQ(w.kernel_on, 1u);
  EXPECT_EQ(w.kernel_off, 0u);
}

TEST_F(CuptiLifecycle, KernelsOffWindowsSwitchOnlyMemoryRecords) {
  const RunResult r =
      Run({"iterations", "12", "10"},
          {{"CUCLIMB_KERNELS", "off"}, {"CUCLIMB_KERNEL_EVERY", "2"}, {"CUCLIMB_FLUSH_MS", "5"}});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const Windows w = WindowsOf(ReadTrace(trace_), Log());
  EXPECT_FALSE(w.gauge.empty());
  EXPECT_EQ(w.kernel_on, 0u);
  EXPECT_EQ(w.memory_on, (w.gauge.size() + 1) / 2);
}

TEST_F(CuptiLifecycle, AForkedChildNeverCallsCupti) {
  const RunResult r = Run({"fork"});
  ASSERT_EQ(r.status, 0) << r.stderr_text << r.stdout_text;
  const size_t at = r.stdout_text.find("child ");
  ASSERT_NE(at, std::string::npos);
  const std::string child_pid = std::to_string(std::stol(r.stdout_text.substr(at + 6)));
  for (const std::string& line : Log())
    EXPECT_EQ(line.find("pid=" + child_pid), std::string::npos) << line;
  const Trace t = ReadTrace(trace_);
  std::vector<uint64_t> addrs;
  for (const Event& ev : t.Of(EventType::kAlloc)) addrs.push_back(ev.addr);
  EXPECT_EQ(addrs, (std::vector<uint64_t>{0xa000, 0xc000}));
}

}  // namespace
}  // namespace cuclimb::testing
