// SPDX-License-Identifier: Apache-2.0
// The CUCLIMB_* option table: every value form, bad values, the output pattern, iteration names.
#include "interposer/config.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace cuclimb::interposer {
namespace {

std::map<std::string, std::string>* g_env = nullptr;
std::vector<std::string>* g_warnings = nullptr;

const char* FakeGetenv(const char* name) {
  auto it = g_env->find(name);
  return it == g_env->end() ? nullptr : it->second.c_str();
}
void CollectWarning(const char* message) {
  g_warnings->push_back(message);
}

Config Load(std::map<std::string, std::string> env, std::vector<std::string>* warnings) {
  g_env = &env;
  g_warnings = warnings;
  return LoadConfig(FakeGetenv, CollectWarning);
}

TEST(ConfigTest, DefaultsWhenNothingIsSet) {
  std::vector<std::string> warnings;
  const Config c = Load({}, &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_STREQ(c.output, "cuclimb-%e-%p.trace");
  EXPECT_EQ(c.kernels, KernelMode::kSampled);
  EXPECT_EQ(c.kernel_every, 32u);
  EXPECT_TRUE(c.api);
  EXPECT_EQ(c.memory_activity, MemoryActivity::kSampled);
  EXPECT_EQ(c.stacks, StackMode::kOff);
  EXPECT_EQ(c.sample_hz, 0u);
  EXPECT_FALSE(c.paused);
  EXPECT_TRUE(c.follow_children);
}

TEST(ConfigTest, EveryOptionParses) {
  std::vector<std::string> warnings;
  const Config c = Load({{"CUCLIMB_OUTPUT", "/tmp/x-%p.trace"},
                         {"CUCLIMB_KERNELS", "all"},
                         {"CUCLIMB_KERNEL_EVERY", "8"},
                         {"CUCLIMB_API", "off"},
                         {"CUCLIMB_MEMORY_ACTIVITY", "0"},
                         {"CUCLIMB_STACKS", "fp"},
                         {"CUCLIMB_STACK_DEPTH", "64"},
                         {"CUCLIMB_SAMPLE_HZ", "1000"},
                         {"CUCLIMB_GAUGE_MS", "0"},
                         {"CUCLIMB_ITERATION", "step,ProfilerStep#*"},
                         {"CUCLIMB_FOLLOW_CHILDREN", "no"},
                         {"CUCLIMB_PAUSED", "1"},
                         {"CUCLIMB_RING_KIB", "1024"},
                         {"CUCLIMB_FLUSH_MS", "20"},
                         {"CUCLIMB_LOG", "quiet"}},
                        &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_STREQ(c.output, "/tmp/x-%p.trace");
  EXPECT_EQ(c.kernels, KernelMode::kAll);
  EXPECT_EQ(c.kernel_every, 8u);
  EXPECT_FALSE(c.api);
  EXPECT_EQ(c.memory_activity, MemoryActivity::kOff);
  EXPECT_EQ(c.stacks, StackMode::kFramePointer);
  EXPECT_EQ(c.stack_depth, 64u);
  EXPECT_EQ(c.sample_hz, 1000u);
  EXPECT_EQ(c.gauge_ms, 0u);
  ASSERT_EQ(c.iteration_count, 2u);
  EXPECT_STREQ(c.iteration[1], "ProfilerStep#*");
  EXPECT_FALSE(c.follow_children);
  EXPECT_TRUE(c.paused);
  EXPECT_EQ(c.ring_kib, 1024u);
  EXPECT_EQ(c.flush_ms, 20u);
  EXPECT_TRUE(c.quiet);
}

TEST(ConfigTest, StacksCombinePythonWithANativeWalker) {
  struct Case {
    const char* value;
    StackMode native;
    bool python;
  };
  for (const Case& c :
       {Case{"off", StackMode::kOff, false}, Case{"fp", StackMode::kFramePointer, false},
        Case{"unwind", StackMode::kUnwind, false}, Case{"python", StackMode::kFramePointer, true},
        Case{"python,fp", StackMode::kFramePointer, true},
        Case{"python,unwind", StackMode::kUnwind, true},
        Case{"unwind,python", StackMode::kUnwind, true}}) {
    Config config;
    char error[256] = {};
    ASSERT_TRUE(ApplyOption(&config, OptionKey::kStacks, c.value, error, sizeof(error))) << c.value;
    EXPECT_EQ(config.stacks, c.native) << c.value;
    EXPECT_EQ(config.python_stacks, c.python) << c.value;
  }
  Config config;
  char error[256] = {};
  EXPECT_FALSE(ApplyOption(&config, OptionKey::kStacks, "python,off", error, sizeof(error)));
  EXPECT_NE(std::string(error).find("python,unwind"), std::string::npos) << error;
  EXPECT_FALSE(config.python_stacks);
}

TEST(ConfigTest, BadValuesWarnNameTheVariableAndKeepTheDefault) {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"CUCLIMB_KERNELS", "sometimes"}, {"CUCLIMB_KERNEL_EVERY", "0"},
      {"CUCLIMB_KERNEL_EVERY", "-3"},   {"CUCLIMB_KERNEL_EVERY", "12abc"},
      {"CUCLIMB_API", "maybe"},         {"CUCLIMB_STACKS", "dwarf"},
      {"CUCLIMB_STACK_DEPTH", "1000"},  {"CUCLIMB_SAMPLE_HZ", "100000"},
      {"CUCLIMB_RING_KIB", "1"},        {"CUCLIMB_OUTPUT", "x-%q.trace"},
      {"CUCLIMB_OUTPUT", ""},           {"CUCLIMB_ITERATION", "a,b,c,d,e,f,g,h,i"},
      {"CUCLIMB_LOG", "loud"},          {"CUCLIMB_FLUSH_MS", "99999999999999999999"},
  };
  for (const auto& [name, value] : bad) {
    std::vector<std::string> warnings;
    const Config c = Load({{name, value}}, &warnings);
    ASSERT_EQ(warnings.size(), 1u) << name << "=" << value;
    EXPECT_NE(warnings[0].find(std::string(name) + "=" + value), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("default"), std::string::npos) << warnings[0];
    const Config defaults;
    EXPECT_STREQ(c.output, defaults.output);
    EXPECT_EQ(c.kernels, defaults.kernels);
    EXPECT_EQ(c.kernel_every, defaults.kernel_every);
    EXPECT_EQ(c.stacks, defaults.stacks);
    EXPECT_EQ(c.iteration_count, defaults.iteration_count);
  }
}

TEST(ConfigTest, OutputPattern) {
  PatternValues v;
  v.pid = 4242;
  v.host = "node7";
  v.rank = "3";
  v.program = "train";
  char out[256];
  char error[128];
  ASSERT_TRUE(
      ExpandOutputPattern("t/%e-%h-%r-%p-100%%.trace", v, out, sizeof(out), error, sizeof(error)));
  EXPECT_STREQ(out, "t/train-node7-3-4242-100%.trace");
  v.rank = "";
  ASSERT_TRUE(ExpandOutputPattern("%r", v, out, sizeof(out), error, sizeof(error)));
  EXPECT_STREQ(out, "0");
  EXPECT_FALSE(ExpandOutputPattern("%x", v, out, sizeof(out), error, sizeof(error)));
  EXPECT_NE(std::strstr(error, "%x"), nullptr) << error;
  EXPECT_FALSE(ExpandOutputPattern("abc%", v, out, sizeof(out), error, sizeof(error)));
  char tiny[8];
  EXPECT_FALSE(ExpandOutputPattern("%e-%h-%p", v, tiny, sizeof(tiny), error, sizeof(error)));
}

TEST(ConfigTest, RankFromTheUsualLaunchers) {
  std::map<std::string, std::string> env = {{"SLURM_PROCID", "5"}, {"OMPI_COMM_WORLD_RANK", "2"}};
  g_env = &env;
  EXPECT_STREQ(RankFromEnv(FakeGetenv), "2");
  env["RANK"] = "9";
  EXPECT_STREQ(RankFromEnv(FakeGetenv), "9");
  env.clear();
  EXPECT_EQ(RankFromEnv(FakeGetenv), nullptr);
}

TEST(ConfigTest, RankPrecedenceGlobalBeforeLocal) {
  std::map<std::string, std::string> env;
  g_env = &env;
  // torchrun sets RANK and LOCAL_RANK: the global one.
  env = {{"LOCAL_RANK", "1"}, {"RANK", "9"}};
  EXPECT_STREQ(RankFromEnv(FakeGetenv), "9");
  // An mpirun script exporting LOCAL_RANK for device selection: still the MPI rank.
  env = {{"LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_RANK", "13"}};
  EXPECT_STREQ(RankFromEnv(FakeGetenv), "13");
  // mpirun inside a Slurm allocation: the MPI rank, not the launch step's task id.
  env = {{"SLURM_PROCID", "0"}, {"PMI_RANK", "6"}};
  EXPECT_STREQ(RankFromEnv(FakeGetenv), "6");
  env = {{"SLURM_PROCID", "3"}, {"PMIX_RANK", "4"}};
  EXPECT_STREQ(RankFromEnv(FakeGetenv), "4");
  env = {{"MV2_COMM_WORLD_RANK", "8"}, {"SLURM_PROCID", "2"}};
  EXPECT_STREQ(RankFromEnv(FakeGetenv), "8");
  env = {{"SLURM_PROCID", "2"}, {"LOCAL_RANK", "0"}};
  EXPECT_STREQ(RankFromEnv(FakeGetenv), "2");
  env = {{"LOCAL_RANK", "3"}};
  EXPECT_STREQ(RankFromEnv(FakeGetenv), "3");
}

TEST(ConfigTest, ARankThatIsNotANumberIsSkipped) {
  std::map<std::string, std::string> env = {{"RANK", "worker-a"}, {"SLURM_PROCID", "4"}};
  g_env = &env;
  EXPECT_STREQ(RankFromEnv(FakeGetenv), "4");
  env = {{"RANK", ""}, {"LOCAL_RANK", "-1"}};
  EXPECT_EQ(RankFromEnv(FakeGetenv), nullptr);
  env = {{"RANK", "12345678901234567890"}};  // would wrap: not a rank
  EXPECT_EQ(RankFromEnv(FakeGetenv), nullptr);
}

TEST(ConfigTest, QuietSilencesTheOtherOptionsWarnings) {
  std::vector<std::string> warnings;
  const Config c =
      Load({{"CUCLIMB_KERNELS", "sometimes"}, {"CUCLIMB_LOG", "quiet"}, {"CUCLIMB_RING_KIB", "x"}},
           &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(c.quiet);
  EXPECT_EQ(c.kernels, KernelMode::kSampled);  // the bad value still keeps the default
  // An invalid CUCLIMB_LOG is not quiet: it is reported like any other.
  Load({{"CUCLIMB_KERNELS", "sometimes"}, {"CUCLIMB_LOG", "silent"}}, &warnings);
  EXPECT_EQ(warnings.size(), 2u);
}

TEST(ConfigTest, QuietFromTheEnvironment) {
  std::map<std::string, std::string> env = {{"CUCLIMB_LOG", "quiet"}};
  g_env = &env;
  EXPECT_TRUE(QuietFromEnv(FakeGetenv));
  env["CUCLIMB_LOG"] = "warn";
  EXPECT_FALSE(QuietFromEnv(FakeGetenv));
  env.clear();
  EXPECT_FALSE(QuietFromEnv(FakeGetenv));
}

std::string WithoutCuclimb(const char* preload) {
  char out[256];
  EXPECT_TRUE(PreloadWithoutCuclimb(preload, out, sizeof(out))) << preload;
  return out;
}

TEST(ConfigTest, FollowChildrenOffRemovesOnlyOurPreload) {
  EXPECT_EQ(WithoutCuclimb("/opt/cuclimb/libexec/cuclimb/libcuclimb.so"), "");
  EXPECT_EQ(WithoutCuclimb("libjemalloc.so.2 /opt/x/libcuclimb.so"), "libjemalloc.so.2");
  EXPECT_EQ(WithoutCuclimb("/a/libcuclimb.so:/usr/lib/libtcmalloc.so:libfoo.so"),
            "/usr/lib/libtcmalloc.so:libfoo.so");
  EXPECT_EQ(WithoutCuclimb("liba.so  libcuclimb.so  libb.so "), "liba.so libb.so");
  // A directory named like us is not us; a sanitized build of us is.
  EXPECT_EQ(WithoutCuclimb("/opt/libcuclimb-tools/libfoo.so"), "/opt/libcuclimb-tools/libfoo.so");
  EXPECT_EQ(WithoutCuclimb("libasan.so.8 /b/libcuclimb-asan.so"), "libasan.so.8");
  EXPECT_EQ(WithoutCuclimb(""), "");
  char tiny[8];
  EXPECT_FALSE(PreloadWithoutCuclimb("/usr/lib/libtcmalloc.so", tiny, sizeof(tiny)));
  EXPECT_STREQ(tiny, "");
}

TEST(ConfigTest, IterationNames) {
  const Config c;
  EXPECT_TRUE(IsIterationName(c, "iteration"));
  EXPECT_TRUE(IsIterationName(c, "iter"));
  EXPECT_TRUE(IsIterationName(c, "ProfilerStep#12"));
  EXPECT_FALSE(IsIterationName(c, "iterations"));
  EXPECT_FALSE(IsIterationName(c, "net/step"));
  EXPECT_FALSE(IsIterationName(c, ""));
  EXPECT_FALSE(IsIterationName(c, nullptr));
}

TEST(ConfigTest, TableListsEveryVariableOnce) {
  for (size_t i = 0; i < sizeof(kOptionTable) / sizeof(kOptionTable[0]); ++i) {
    EXPECT_EQ(static_cast<size_t>(kOptionTable[i].key), i);
    EXPECT_EQ(std::strncmp(kOptionTable[i].env, "CUCLIMB_", 8), 0);
    for (size_t j = i + 1; j < sizeof(kOptionTable) / sizeof(kOptionTable[0]); ++j) {
      EXPECT_STRNE(kOptionTable[i].env, kOptionTable[j].env);
      EXPECT_STRNE(kOptionTable[i].flag, kOptionTable[j].flag);
    }
    // Every default parses.
    Config c;
    char error[256];
    EXPECT_TRUE(
        ApplyOption(&c, kOptionTable[i].key, kOptionTable[i].default_value, error, sizeof(error)))
        << kOptionTable[i].env << ": " << error;
  }
}

}  // namespace
}  // namespace cuclimb::interposer
