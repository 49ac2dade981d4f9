// SPDX-License-Identifier: Apache-2.0
// cuclimb-adam's flag parsing and validation: every bad input is refused before any CUDA call.
#include "workloads/adam/options.h"

#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace cuclimb::workloads {
namespace {

ParseResult Parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv = {"cuclimb-adam"};
  argv.insert(argv.end(), args.begin(), args.end());
  return ParseOptions(static_cast<int>(argv.size()), argv.data());
}

TEST(OptionsTest, DefaultsAreTheDocumentedReproducer) {
  const ParseResult result = Parse({});
  ASSERT_TRUE(result.ok) << result.error;
  const Options& o = result.options;
  EXPECT_EQ(o.mode, Mode::kFlat);
  EXPECT_EQ(o.iters, 1500);
  EXPECT_EQ(o.inner_steps, 10);
  EXPECT_EQ(o.EffectiveEphemeralSteps(), 10);
  EXPECT_EQ(o.dims, (std::vector<int>{64, 256, 256, 8}));
  EXPECT_EQ(o.batch, 64);
  EXPECT_EQ(o.allocator, AllocatorKind::kCubecl);
  EXPECT_EQ(o.EffectiveWarmup(), 50);
  EXPECT_EQ(o.timing, Timing::kIsolated);
  EXPECT_EQ(o.EffectiveSummaryWindow(), 75);
}

TEST(OptionsTest, ParsesBothValueFormsAndAliases) {
  const ParseResult result =
      Parse({"--mode",      "climb",         "--iters=20", "--inner",          "6",
             "--inner-e=3", "--pdims",       "8,16,4",     "--edims=8,32,4",   "--allocator",
             "cubecl",      "--retain-tiny", "2",          "--separate-pools", "--no-window",
             "--align=64",  "--meta-pool",   "separate",   "--json",           "--stats",
             "--reference", "--seed",        "7",          "--task",           "classification"});
  ASSERT_TRUE(result.ok) << result.error;
  const Options& o = result.options;
  EXPECT_EQ(o.mode, Mode::kClimb);
  EXPECT_EQ(o.iters, 20);
  EXPECT_EQ(o.inner_steps, 6);
  EXPECT_EQ(o.EffectiveEphemeralSteps(), 3);
  EXPECT_EQ(o.dims, (std::vector<int>{8, 16, 4}));
  EXPECT_EQ(o.EffectiveEphemeralDims(), (std::vector<int>{8, 32, 4}));
  EXPECT_EQ(o.retain_tiny, 2);
  EXPECT_TRUE(o.separate_pools);
  EXPECT_FALSE(o.persistent_window);
  EXPECT_EQ(o.align, 64u);
  EXPECT_TRUE(o.separate_meta_pool);
  EXPECT_TRUE(o.json);
  EXPECT_TRUE(o.stats);
  EXPECT_TRUE(o.reference);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_EQ(o.task, Task::kClassification);
  const AllocatorConfig config = MakeAllocatorConfig(o);
  EXPECT_EQ(config.cubecl.alignment, 64u);
  EXPECT_FALSE(config.cubecl.persistent_window);
  EXPECT_TRUE(config.cubecl.separate_meta_pool);
}

TEST(OptionsTest, HelpIsNotAnError) {
  const ParseResult result = Parse({"--iters", "5", "--help"});
  EXPECT_TRUE(result.help);
  EXPECT_NE(Usage().find("--mode flat|climb"), std::string::npos);
}

struct BadCase {
  std::vector<const char*> args;
  const char* expected_fragment;
};

TEST(OptionsTest, RefusesBadFlagsWithAMessageNamingThem) {
  const std::vector<BadCase> cases = {
      {{"--bogus"}, "unknown flag --bogus"},
      {{"positional"}, "unexpected argument"},
      {{"--iters"}, "--iters needs a value"},
      {{"--iters", "ten"}, "--iters expects an integer"},
      {{"--iters", "0"}, "--iters must be"},
      {{"--iters=-3"}, "--iters must be"},
      {{"--mode", "sideways"}, "--mode expects flat or climb"},
      {{"--allocator", "malloc"}, "--allocator expects"},
      {{"--json=yes"}, "--json takes no value"},
      {{"--nets", "0"}, "--nets must be"},
      {{"--nets", "17"}, "--nets must be"},
      {{"--dims", "64"}, "--dims: needs 2"},
      {{"--dims", "64,0,8"}, "width 0"},
      {{"--dims", "64,,8"}, "--dims expects comma-separated"},
      {{"--dims", "64,70000,8"}, "width 70000"},
      {{"--batch", "0"}, "--batch must be"},
      {{"--inner-steps", "4", "--ephemeral-steps", "5"}, "--ephemeral-steps must be"},
      {{"--retain-tiny", "1"}, "need --mode climb"},
      {{"--mode", "climb", "--retain-tiny", "11"}, "at most --ephemeral-steps"},
      {{"--allocator", "direct", "--no-window"}, "knobs of --allocator=cubecl"},
      {{"--allocator", "async", "--align", "64"}, "knobs of --allocator=cubecl"},
      {{"--align", "100"}, "power of two"},
      {{"--allocator", "direct", "--nvtx-mem"}, "--nvtx-mem"},
      {{"--release-threshold", "5"}, "applies to --allocator=async"},
      {{"--task", "classification", "--dims", "4,1"}, "output width of at least 2"},
      {{"--lr", "0"}, "--lr must be"},
      {{"--timing", "sometimes"}, "--timing expects isolated or overlapped"},
      {{"--gpu-warmup-ms", "-1"}, "--gpu-warmup-ms must be"},
      {{"--dims", "32768,32768,32768,32768,32768,32768"}, "GiB of device memory"},
      {{"--batch", "65536", "--dims", "65536,2"}, "2^31-1"},
  };
  for (const BadCase& c : cases) {
    std::vector<const char*> argv = {"cuclimb-adam"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const ParseResult result = ParseOptions(static_cast<int>(argv.size()), argv.data());
    EXPECT_FALSE(result.ok) << c.args.front();
    EXPECT_NE(result.error.find(c.expected_fragment), std::string::npos)
        << "error '" << result.error << "' lacks '" << c.expected_fragment << "'";
  }
}

TEST(OptionsTest, ReleaseThresholdAcceptsMax) {
  const ParseResult result = Parse({"--allocator", "async", "--release-threshold", "max"});
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(result.options.release_threshold_bytes, UINT64_MAX);
}

TEST(OptionsTest, DeviceEstimateGrowsWithSizes) {
  Options small;
  Options big;
  big.dims = {1024, 4096, 4096, 1024};
  EXPECT_GT(EstimateDeviceBytes(big), 16 * EstimateDeviceBytes(small));
  Options climb = small;
  climb.mode = Mode::kClimb;
  EXPECT_GT(EstimateDeviceBytes(climb), EstimateDeviceBytes(small));
}

}  // namespace
}  // namespace cuclimb::workloads
