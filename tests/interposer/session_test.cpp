// SPDX-License-Identifier: Apache-2.0
// The session's transitions, in one process: a fake SessionEffects records every effect, so the
// order of effects, the once-guards under racing threads, failures, pause/resume, stop and the
// forked child are checked without a trace file, CUPTI or fork.
#include "interposer/session.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "interposer/state.h"

namespace cuclimb::interposer {
namespace {

class FakeEffects final : public SessionEffects {
 public:
  bool open_ok = true;
  CuptiState attach_result = CuptiState::kActive;
  const char* attach_status = nullptr;  // given to SetStatus by AttachCupti
  std::chrono::milliseconds open_delay{0};
  std::chrono::milliseconds attach_delay{0};

  std::vector<std::string> Calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  size_t Count(const std::string& call) {
    size_t n = 0;
    for (const std::string& c : Calls()) n += c == call ? 1 : 0;
    return n;
  }

  bool OpenSink() noexcept override {
    std::this_thread::sleep_for(open_delay);
    Add("OpenSink");
    return open_ok;
  }
  void InstallProcessHooks() noexcept override { Add("InstallProcessHooks"); }
  void WriteSessionRecords() noexcept override { Add("WriteSessionRecords"); }
  void SetSinkRecording(bool on) noexcept override { Add(On("SetSinkRecording", on)); }
  void FlushSink(bool cupti) noexcept override { Add(On("FlushSink", cupti)); }
  void FinishRecords(bool cupti) noexcept override { Add(On("FinishRecords", cupti)); }
  void CloseSink(const char* status) noexcept override {
    Add(std::string("CloseSink(") + (status != nullptr ? status : "null") + ")");
  }
  void AbandonSink() noexcept override { Add("AbandonSink"); }
  CuptiState AttachCupti(Session& session) noexcept override {
    std::this_thread::sleep_for(attach_delay);
    Add("AttachCupti");
    if (attach_status != nullptr)
      session.SetStatus(attach_status);
    return attach_result;
  }
  void EnableCallbacks(bool full) noexcept override {
    // The hot path must be off before callbacks go, and on only after they came back.
    Add(On("EnableCallbacks", full) + (g_capture_on.load() ? " capturing" : " not-capturing"));
  }
  void SetRunActivity(bool on) noexcept override { Add(On("SetRunActivity", on)); }
  void StartActivity(bool capturing) noexcept override { Add(On("StartActivity", capturing)); }

 private:
  static std::string On(const char* name, bool on) {
    return std::string(name) + (on ? "(1)" : "(0)");
  }
  void Add(std::string call) {
    std::lock_guard<std::mutex> lock(mutex_);
    calls_.push_back(std::move(call));
  }
  std::mutex mutex_;
  std::vector<std::string> calls_;
};

using Calls = std::vector<std::string>;

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetStateForTesting(); }
  void TearDown() override { ResetStateForTesting(); }
  FakeEffects fx_;
  Session session_{&fx_};
};

TEST_F(SessionTest, OpensOnceInstallsHooksAndStartsCapturing) {
  EXPECT_TRUE(session_.EnsureOpen());
  EXPECT_TRUE(session_.EnsureOpen());
  EXPECT_EQ(fx_.Calls(), (Calls{"OpenSink", "InstallProcessHooks"}));
  EXPECT_EQ(session_.sink(), SinkState::kOpen);
  EXPECT_TRUE(g_capture_on.load());
}

TEST_F(SessionTest, StartingPausedSwitchesTheSinkOffAndAttachesOnlyTracking) {
  g_config.paused = true;
  EXPECT_TRUE(session_.EnsureOpen());
  EXPECT_FALSE(g_capture_on.load());
  session_.AttachCupti();
  EXPECT_EQ(fx_.Calls(),
            (Calls{"OpenSink", "InstallProcessHooks", "WriteSessionRecords", "SetSinkRecording(0)",
                   "AttachCupti", "EnableCallbacks(0) not-capturing", "StartActivity(0)"}));
  session_.Resume();
  EXPECT_TRUE(g_capture_on.load());
  const Calls calls = fx_.Calls();
  EXPECT_EQ(
      Calls(calls.end() - 3, calls.end()),
      (Calls{"EnableCallbacks(1) not-capturing", "SetRunActivity(1)", "SetSinkRecording(1)"}));
}

TEST_F(SessionTest, ASinkThatCannotOpenLeavesEverythingOff) {
  fx_.open_ok = false;
  EXPECT_FALSE(session_.EnsureOpen());
  EXPECT_FALSE(session_.EnsureOpen());
  EXPECT_EQ(session_.sink(), SinkState::kFailed);
  session_.AttachCupti();
  EXPECT_EQ(session_.cupti(), CuptiState::kOff);
  session_.Pause();
  session_.Resume();
  session_.Flush();
  session_.Stop("stopped by signal 15");
  EXPECT_EQ(fx_.Calls(), (Calls{"OpenSink"}));  // no CUPTI, no hooks, no trailer
  EXPECT_FALSE(g_capture_on.load());
}

TEST_F(SessionTest, AttachesOnceAndEnablesWhatRecordingNeeds) {
  session_.AttachCupti();
  session_.AttachCupti();
  EXPECT_EQ(fx_.Calls(), (Calls{"OpenSink", "InstallProcessHooks", "AttachCupti",
                                "EnableCallbacks(1) capturing", "StartActivity(1)"}));
  EXPECT_EQ(session_.cupti(), CuptiState::kActive);
}

TEST_F(SessionTest, APassiveAttachEnablesNothingAndItsReasonReachesTheTrailer) {
  fx_.attach_result = CuptiState::kPassive;
  fx_.attach_status = "CUPTI taken by nsys: NVTX only";
  session_.AttachCupti();
  session_.Pause();
  session_.Stop("stopped by signal 2");  // the earlier reason wins
  EXPECT_EQ(fx_.Calls(), (Calls{"OpenSink", "InstallProcessHooks", "AttachCupti",
                                "WriteSessionRecords", "SetSinkRecording(0)", "FlushSink(0)",
                                "FinishRecords(0)", "CloseSink(CUPTI taken by nsys: NVTX only)"}));
}

TEST_F(SessionTest, PauseStopsTheHotPathFirstAndResumeStartsItLast) {
  session_.AttachCupti();
  const size_t before = fx_.Calls().size();
  session_.Pause();
  session_.Pause();  // idempotent
  EXPECT_FALSE(g_capture_on.load());
  session_.Resume();
  session_.Resume();
  EXPECT_TRUE(g_capture_on.load());
  const Calls calls = fx_.Calls();
  EXPECT_EQ(Calls(calls.begin() + static_cast<std::ptrdiff_t>(before), calls.end()),
            (Calls{"EnableCallbacks(0) not-capturing", "SetRunActivity(0)", "WriteSessionRecords",
                   "SetSinkRecording(0)", "EnableCallbacks(1) not-capturing", "SetRunActivity(1)",
                   "SetSinkRecording(1)"}));
}

TEST_F(SessionTest, PausingBeforeCuptiAttachesTouchesOnlyTheSink) {
  ASSERT_TRUE(session_.EnsureOpen());
  session_.Pause();
  session_.AttachCupti();  // attaches in the paused state
  EXPECT_EQ(fx_.Calls(),
            (Calls{"OpenSink", "InstallProcessHooks", "WriteSessionRecords", "SetSinkRecording(0)",
                   "AttachCupti", "EnableCallbacks(0) not-capturing", "StartActivity(0)"}));
}

TEST_F(SessionTest, StopFlushesTheRingsBeforeCuptiAndWritesTheTrailerOnce) {
  session_.AttachCupti();
  const size_t before = fx_.Calls().size();
  session_.Stop(nullptr);
  session_.Stop("stopped by signal 15");
  session_.Pause();
  session_.Resume();
  session_.Flush();
  const Calls calls = fx_.Calls();
  EXPECT_EQ(Calls(calls.begin() + static_cast<std::ptrdiff_t>(before), calls.end()),
            (Calls{"FlushSink(0)", "FinishRecords(1)", "CloseSink(null)"}));
  EXPECT_FALSE(g_capture_on.load());
  EXPECT_TRUE(session_.stopping());
}

TEST_F(SessionTest, ASignalsReasonIsTheStatusWhenNothingWentWrongBefore) {
  session_.AttachCupti();
  session_.Stop("stopped by signal 15");
  EXPECT_EQ(fx_.Calls().back(), "CloseSink(stopped by signal 15)");
  EXPECT_STREQ(session_.status(), "stopped by signal 15");
}

TEST_F(SessionTest, FlushIncludesCuptiOnlyWhenAttached) {
  ASSERT_TRUE(session_.EnsureOpen());
  session_.Flush();
  session_.AttachCupti();
  session_.Flush();
  EXPECT_EQ(fx_.Count("FlushSink(0)"), 1u);
  EXPECT_EQ(fx_.Count("FlushSink(1)"), 1u);
}

TEST_F(SessionTest, AForkedChildTouchesNothingOfTheParents) {
  session_.AttachCupti();
  const size_t before = fx_.Calls().size();
  session_.EnterForkChild();
  EXPECT_FALSE(g_capture_on.load());
  EXPECT_FALSE(session_.EnsureOpen());
  session_.Pause();
  session_.Resume();
  session_.Flush();
  session_.Stop(nullptr);  // the child's atexit handler
  const Calls calls = fx_.Calls();
  EXPECT_EQ(Calls(calls.begin() + static_cast<std::ptrdiff_t>(before), calls.end()),
            (Calls{"AbandonSink"}));
}

TEST_F(SessionTest, RacingEntryPointsOpenAndAttachOnce) {
  // NVTX on one thread, cuInit on another, the C API on a third: one sink, one subscription,
  // and every caller sees the outcome.
  fx_.open_delay = std::chrono::milliseconds(20);
  fx_.attach_delay = std::chrono::milliseconds(10);
  std::atomic<int> open_true{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      if (i % 2 == 0) {
        session_.AttachCupti();
        EXPECT_NE(session_.cupti(), CuptiState::kAttaching);
      }
      open_true += session_.EnsureOpen() ? 1 : 0;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(open_true.load(), 8);
  EXPECT_EQ(fx_.Count("OpenSink"), 1u);
  EXPECT_EQ(fx_.Count("AttachCupti"), 1u);
  EXPECT_EQ(session_.cupti(), CuptiState::kActive);
}

TEST_F(SessionTest, APauseRacingTheAttachLeavesCallbacksAsPaused) {
  // Whichever comes first, a session paused at the end has its driver callbacks reduced to the
  // keepers: the last EnableCallbacks says 0.
  for (int round = 0; round < 20; ++round) {
    ResetStateForTesting();
    FakeEffects fx;
    fx.attach_delay = std::chrono::milliseconds(round % 3);
    Session session(&fx);
    ASSERT_TRUE(session.EnsureOpen());
    std::thread attach([&] { session.AttachCupti(); });
    std::this_thread::sleep_for(std::chrono::microseconds(500 * (round % 4)));
    session.Pause();
    attach.join();
    std::string last_enable;
    for (const std::string& c : fx.Calls()) {
      if (c.rfind("EnableCallbacks", 0) == 0)
        last_enable = c;
    }
    EXPECT_EQ(last_enable, "EnableCallbacks(0) not-capturing") << "round " << round;
    EXPECT_FALSE(g_capture_on.load());
  }
}

}  // namespace
}  // namespace cuclimb::interposer
