// SPDX-License-Identifier: Apache-2.0
// `cuclimb record`: option parsing and bad values, the environment it prepares, exit statuses,
// signal forwarding, and an end-to-end recording of a GPU-less NVTX program.
#include <chrono>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "interposer/config_options.h"
#include "test_support.h"

namespace cuclimb::testing {
namespace {

std::string Cuclimb() {
  return std::getenv("CUCLIMB_TEST_CUCLIMB");
}
std::string Lib() {
  return std::getenv("CUCLIMB_LIB");
}
std::string NvtxProgram() {
  return std::getenv("CUCLIMB_TEST_NVTX_PROGRAM");
}

class RecordTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = TempDir(); }
  RunResult Record(std::vector<std::string> args,
                   std::vector<std::pair<std::string, std::string>> env = {}) {
    args.insert(args.begin(), {Cuclimb(), "record", "--lib", Lib()});
    env.push_back({"CUDA_INJECTION64_PATH", ""});
    env.push_back({"NVTX_INJECTION64_PATH", ""});
    return RunProgram(args, env, dir_);
  }
  std::string dir_;
};

TEST_F(RecordTest, HelpListsEveryOptionAndVariable) {
  const RunResult r = Record({"--help"});
  EXPECT_EQ(r.status, 0);
  for (const interposer::OptionInfo& info : interposer::kOptionTable) {
    EXPECT_NE(r.stdout_text.find(std::string("--") + info.flag), std::string::npos) << info.flag;
    EXPECT_NE(r.stdout_text.find(info.env), std::string::npos) << info.env;
  }
}

TEST_F(RecordTest, BadValuesAreUsageErrorsNamingTheFlag) {
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--kernels", "bogus"},
                                              {"--stack-depth=0"},
                                              {"--sample-hz", "x"},
                                              {"--output", "a%z"},
                                              {"--no-such-flag"},
                                              {"--paused=1"},
                                              {"--api"}}) {
    std::vector<std::string> args = bad;
    args.insert(args.end(), {"--", "/bin/true"});
    const RunResult r = Record(args);
    EXPECT_EQ(r.status, 2) << bad[0] << ": " << r.stderr_text;
    EXPECT_NE(r.stderr_text.find("cuclimb record: "), std::string::npos);
  }
  EXPECT_NE(Record({"--kernels", "bogus", "--", "/bin/true"}).stderr_text.find("--kernels=bogus"),
            std::string::npos);
  EXPECT_EQ(Record({}).status, 2);  // no program
  EXPECT_EQ(
      RunProgram({Cuclimb(), "record", "--lib", dir_ + "/none.so", "--", "/bin/true"}, {}, dir_)
          .status,
      2);
}

TEST_F(RecordTest, ReturnsTheProgramsStatus) {
  EXPECT_EQ(Record({"--", "/bin/sh", "-c", "exit 3"}).status, 3);
  EXPECT_EQ(Record({"--", "/bin/sh", "-c", "kill -TERM $$"}).status, 128 + SIGTERM);
  EXPECT_EQ(Record({"--", dir_ + "/does-not-exist"}).status, 127);
}

TEST_F(RecordTest, PreparesTheEnvironment) {
  const RunResult r = Record(
      {"--stacks", "fp", "--paused", "--output", "rel-%p.trace", "--", "/bin/sh", "-c", "env"});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("CUCLIMB_STACKS=fp\n"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("CUCLIMB_PAUSED=1\n"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("CUDA_INJECTION64_PATH=/"), std::string::npos);
  EXPECT_NE(r.stdout_text.find("NVTX_INJECTION64_PATH=/"), std::string::npos);
  // A relative output becomes absolute (the program may change directory first).
  EXPECT_NE(r.stdout_text.find("CUCLIMB_OUTPUT=/"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("/rel-%p.trace\n"), std::string::npos);
}

TEST_F(RecordTest, ForwardsSignalsToTheProgram) {
  const pid_t launcher = fork();
  if (launcher == 0) {
    execl(Cuclimb().c_str(), "cuclimb", "record", "--lib", Lib().c_str(), "--", "/bin/sleep", "30",
          static_cast<char*>(nullptr));
    _exit(126);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(launcher, SIGTERM);
  int status = 0;
  waitpid(launcher, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
}

TEST_F(RecordTest, RecordsAnNvtxProgram) {
  const RunResult r = Record({"--output", dir_ + "/run-%p.trace", "--", NvtxProgram(), "basic"});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  const std::vector<std::string> files = ListDir(dir_, "run-");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(r.stderr_text.find("cuclimb record: trace " + dir_ + "/" + files[0]), std::string::npos)
      << r.stderr_text;
  const Trace t = ReadTrace(dir_ + "/" + files[0]);
  EXPECT_EQ(t.status.reason, trace::StopReason::kComplete);
  EXPECT_EQ(t.Count(format::EventType::kPush), 11u);
}

// Like `cuclimb record -- torchrun --nproc-per-node 2 train.py`: a launcher that never uses CUDA
// or NVTX starts one worker per rank with RANK and LOCAL_RANK set; each worker records itself
// into the file its own %r names, and knows its rank.
TEST_F(RecordTest, ALauncherLikeTorchrunGetsOneTracePerRank) {
  const std::string script = "for r in 0 1; do RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 '" +
                             NvtxProgram() + "' basic > /dev/null & done; wait";
  const RunResult r =
      Record({"--output", dir_ + "/rank%r-%p.trace", "--", "/bin/sh", "-c", script});
  ASSERT_EQ(r.status, 0) << r.stderr_text;
  for (int rank = 0; rank < 2; ++rank) {
    const std::vector<std::string> files = ListDir(dir_, "rank" + std::to_string(rank) + "-");
    ASSERT_EQ(files.size(), 1u) << "rank " << rank;
    const Trace t = ReadTrace(dir_ + "/" + files[0]);
    EXPECT_EQ(t.status.reason, trace::StopReason::kComplete);
    ASSERT_EQ(t.Count(format::EventType::kProcess), 1u);
    EXPECT_EQ(t.Of(format::EventType::kProcess)[0].corr, static_cast<uint64_t>(rank) + 1);
    EXPECT_EQ(t.Count(format::EventType::kPush), 11u);
  }
  EXPECT_EQ(ListDir(dir_, "rank").size(), 2u);  // the launcher itself wrote nothing
}

}  // namespace
}  // namespace cuclimb::testing
