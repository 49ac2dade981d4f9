// SPDX-License-Identifier: Apache-2.0
// Short training runs on the GPU: the loss goes down, every allocator completes both modes, and
// retention grows the cubecl model's 512-byte bucket while a plain climb does not.
#include <cmath>

#include <gtest/gtest.h>

#include "workloads/adam/report.h"
#include "workloads/adam/trainer.h"

namespace cuclimb::workloads {
namespace {

double MeanLoss(const TrainResult& result, int begin, int end) {
  double sum = 0.0;
  for (int i = begin; i < end; ++i) sum += result.iterations[i].loss[0];
  return sum / (end - begin);
}

TEST(TrainerGpuTest, RegressionLossGoesDown) {
  Options options;
  options.iters = 40;
  options.seed = 1234;
  const TrainResult result = Train(options, nullptr);
  ASSERT_EQ(result.iterations.size(), 40u);
  for (const auto& record : result.iterations) ASSERT_TRUE(std::isfinite(record.loss[0]));
  const double first = MeanLoss(result, 0, 3);
  const double last = MeanLoss(result, 37, 40);
  EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;
  EXPECT_GT(result.iterations.back().st_ms[0], 0.0);
  EXPECT_GT(result.iterations.back().gpu_st_ms[0], 0.0);
}

TEST(TrainerGpuTest, ClassificationLossGoesDown) {
  Options options;
  options.iters = 40;
  options.task = Task::kClassification;
  options.activation = ActivationKind::kGelu;
  options.seed = 99;
  const TrainResult result = Train(options, nullptr);
  const double first = MeanLoss(result, 0, 3);
  const double last = MeanLoss(result, 37, 40);
  EXPECT_NEAR(first, std::log(8.0), 0.5);  // starts near uniform over 8 classes
  EXPECT_LT(last, 0.75 * first) << "first " << first << " last " << last;
}

TEST(TrainerGpuTest, EveryAllocatorRunsBothModesWithSeveralNetworks) {
  for (const AllocatorKind kind : {AllocatorKind::kDirect, AllocatorKind::kAsync,
                                   AllocatorKind::kCaching, AllocatorKind::kCubecl}) {
    for (const Mode mode : {Mode::kFlat, Mode::kClimb}) {
      Options options;
      options.gpu_warmup_ms = 0;
      options.allocator = kind;
      options.mode = mode;
      options.iters = 4;
      options.inner_steps = 3;
      options.nets = 2;
      options.separate_pools = kind == AllocatorKind::kCaching;
      options.inplace_adam = kind == AllocatorKind::kAsync;
      int seen = 0;
      const TrainResult result = Train(options, [&](const IterationRecord&) { ++seen; });
      EXPECT_EQ(seen, 4) << AllocatorName(kind);
      ASSERT_EQ(result.names.size(), 2u);
      for (const auto& record : result.iterations) {
        EXPECT_TRUE(std::isfinite(record.loss[0]) && std::isfinite(record.loss[1]));
        if (mode == Mode::kClimb) {
          EXPECT_TRUE(std::isfinite(record.ephemeral_loss));
        }
      }
      EXPECT_EQ(result.iterations.back().stats.live_handles > 0, true) << AllocatorName(kind);
    }
  }
}

TEST(TrainerGpuTest, RetentionGrowsTheBucketAndPlainClimbDoesNot) {
  Options options;
  options.gpu_warmup_ms = 0;
  options.mode = Mode::kClimb;
  options.iters = 30;
  options.inner_steps = 4;
  const TrainResult plain = Train(options, nullptr);
  const auto plain_growth = plain.iterations.back().stats.largest_bucket_slots -
                            plain.iterations[5].stats.largest_bucket_slots;
  EXPECT_EQ(plain_growth, 0u);
  options.retain_tiny = 2;
  const TrainResult retained = Train(options, nullptr);
  const auto growth = retained.iterations.back().stats.largest_bucket_slots -
                      retained.iterations[5].stats.largest_bucket_slots;
  EXPECT_GE(growth, 2u * 24u);
  // The scans in the persistent network's steps grow with it.
  const auto scans = [](const TrainResult& r, int i) {
    return r.iterations[i].stats.slots_scanned - r.iterations[i - 1].stats.slots_scanned;
  };
  EXPECT_GT(scans(retained, 29), scans(retained, 6) + 100);
  EXPECT_LE(scans(plain, 29), scans(plain, 6) + scans(plain, 6) / 20);
}

// The reference network is p0's twin: same losses, its own timings, and no effect on p0.
TEST(TrainerGpuTest, ReferenceTwinTrainsLikeP0AndLeavesItAlone) {
  Options options;
  options.gpu_warmup_ms = 0;
  options.mode = Mode::kClimb;
  options.retain_tiny = 1;
  options.iters = 8;
  options.inner_steps = 3;
  const TrainResult plain = Train(options, nullptr);
  options.reference = true;
  const TrainResult twin = Train(options, nullptr);
  ASSERT_EQ(twin.iterations.size(), plain.iterations.size());
  for (std::size_t i = 0; i < twin.iterations.size(); ++i) {
    const IterationRecord& r = twin.iterations[i];
    EXPECT_GT(r.ref_st_ms, 0.0);
    EXPECT_GT(r.ref_gpu_st_ms, 0.0);
    EXPECT_NEAR(r.ref_loss, r.loss[0], 1e-5 * std::fabs(r.loss[0]) + 1e-7) << "iteration " << i;
    EXPECT_NEAR(r.loss[0], plain.iterations[i].loss[0], 1e-5 * std::fabs(r.loss[0]) + 1e-7);
    // The twin's allocator is not counted with the measured one.
    EXPECT_EQ(r.stats.largest_bucket_slots, plain.iterations[i].stats.largest_bucket_slots);
  }
  EXPECT_EQ(plain.iterations.back().ref_st_ms, 0.0);
}

TEST(TrainerGpuTest, SummaryOfAShortRunIsFinite) {
  Options options;
  options.iters = 12;
  options.inner_steps = 2;
  options.gpu_warmup_ms = 0;
  options.timing = Timing::kOverlapped;
  const TrainResult result = Train(options, nullptr);
  const Summary summary = Summarize(options, result.names, result.iterations);
  ASSERT_EQ(summary.rows.size(), 1u);
  EXPECT_GT(summary.rows[0].st_first_ms, 0.0);
  EXPECT_TRUE(std::isfinite(summary.rows[0].st_change_pct));
}

}  // namespace
}  // namespace cuclimb::workloads
