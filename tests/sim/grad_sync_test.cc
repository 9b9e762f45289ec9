// The data-parallel gradient synchronisation: bucketed all-reduces overlapping the last backward
// (--grad-bucket), and ZeRO-1's reduce-scatter, optimizer step and all-gather. Expected times are
// written out by hand from the ring's closed form, 2(d - 1) steps of (latency + chunk/bandwidth),
// with the chunk = bytes/d, on an ideal network where nothing contends.
#include <gtest/gtest.h>

#include <algorithm>

#include "schedules/registry.h"
#include "sim/communication.h"
#include "sim/engine.h"
#include "sim/task_graph.h"
#include "tests/support/one_rank.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

constexpr double kLatency = 0.01;
constexpr double kBandwidth = 1e9;

// `graph`'s makespan on `platform` with SimGrid, which the critical-path engine must equal (the
// ideal platform has no contention); `dp`: SimGrid's rank 0 "dp" communication, when given.
double OnBothEngines(const TaskGraph& graph, const PlatformSpec& platform,
                     CommSeconds* dp = nullptr) {
  double makespans[2] = {0, 0};
  int k = 0;
  for (EngineKind engine : {EngineKind::kCriticalPath, EngineKind::kSimGrid}) {
    Timeline timeline;
    EXPECT_TRUE(Execute(engine, graph, platform, &timeline).ok());
    for (double end : timeline.end_s) makespans[k] = std::max(makespans[k], end);
    if (dp != nullptr && engine == EngineKind::kSimGrid) {
      *dp =
          ComputeCommunication(graph, timeline, 1).ranks[0].kinds[static_cast<int>(CommKind::kDp)];
    }
    ++k;
  }
  EXPECT_NEAR(makespans[0], makespans[1], 1e-9);
  return makespans[1];
}

// One rank, one microbatch, two replicas: F [0, 1], B [1, 5], then the gradients' sync.
double Makespan(int64_t gradient_bytes, int64_t bucket_bytes, double bandwidth,
                std::vector<int64_t> gather_bytes = {}, std::vector<double> optimizer_s = {}) {
  const Schedule s = OneRankOneMicrobatch();
  StageCosts costs = OneStageCosts(1, 4);
  costs.gradient_bytes = {gradient_bytes};
  costs.param_gather_bytes = std::move(gather_bytes);
  costs.optimizer_step_s = std::move(optimizer_s);
  Parallelism parallelism{{.dp = 2, .tp = 1}, P2pMode::kEager};
  parallelism.grad_bucket_bytes = bucket_bytes;
  TaskGraph graph;
  EXPECT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
  return OnBothEngines(graph, PlatformOrDie(IdealChoice(kLatency, bandwidth), 1, 2, 1));
}

TEST(GradientBuckets, OneAllReduceAfterTheBackward) {
  // 2 steps of (0.01 + 2e8 / 1e9) after B ends at 5.
  EXPECT_NEAR(Makespan(400'000'000, 0, kBandwidth), 5 + 2 * (kLatency + 0.2), 1e-9);
}

TEST(GradientBuckets, BucketsHideTheAllReduceBehindALongBackward) {
  // 4 buckets of 1e8 ready at 2, 3, 4 and 5; each ring takes 2 x (0.01 + 0.05) = 0.12 < 1, so
  // only the last bucket's ring is left after the backward.
  EXPECT_NEAR(Makespan(400'000'000, 100'000'000, kBandwidth), 5 + 2 * (kLatency + 0.05), 1e-9);
}

TEST(GradientBuckets, BucketsQueueWhenTheirRingsOutlastTheBackward) {
  // At 1e8 B/s a bucket's ring takes 2 x (0.01 + 0.5) = 1.02 > 1: each starts when the previous
  // one ends (one NCCL stream), from 2: 2 + 4 x 1.02.
  EXPECT_NEAR(Makespan(400'000'000, 100'000'000, 1e8), 2 + 4 * 2 * (kLatency + 0.5), 1e-9);
}

TEST(GradientBuckets, UnevenBucketsSplitTheBytes) {
  // 3e8 in buckets of 2e8: 2 buckets of 1.5e8 each (split evenly), ready at 3 and 5.
  EXPECT_NEAR(Makespan(300'000'000, 200'000'000, kBandwidth), 5 + 2 * (kLatency + 0.075), 1e-9);
}

TEST(ZeroOne, ReduceScatterThenTheStepThenAllGather) {
  // Reduce-scatter: one step of 0.01 + 2e8/1e9 after 5; the step 0.5; all-gather of the 2e8
  // bytes of parameters: one step of 0.01 + 1e8/1e9.
  EXPECT_NEAR(Makespan(400'000'000, 0, kBandwidth, {200'000'000}, {0.5}),
              5 + (kLatency + 0.2) + 0.5 + (kLatency + 0.1), 1e-9);
  // Without an optimizer step the all-gather follows the reduce-scatter.
  EXPECT_NEAR(Makespan(400'000'000, 0, kBandwidth, {200'000'000}),
              5 + (kLatency + 0.2) + (kLatency + 0.1), 1e-9);
}

// FSDP (ZeRO-3) over the same two replicas: 2 units, the stage's gradients of 4e8 bytes
// reduce-scattered unit by unit (2 buckets of 2e8: one step of 0.01 + 1e8/1e9 = 0.11 each, ready
// halfway through B and at its end), and the 16-bit parameters (`gather_bytes`, 2 units of
// gather_bytes / 2) all-gathered before F (and before B with `reshard`): one step each of
// 0.01 + gather_bytes / 4 / 1e9.
double FsdpMakespan(int64_t gather_bytes, bool reshard, CommSeconds* dp = nullptr) {
  const Schedule s = OneRankOneMicrobatch();
  StageCosts costs = OneStageCosts(1, 4);
  costs.gradient_bytes = {400'000'000};
  costs.fsdp_units = {2};
  costs.fsdp_gather_bytes = {gather_bytes};
  costs.fsdp_reshard = reshard;
  Parallelism parallelism{{.dp = 2, .tp = 1}, P2pMode::kEager};
  TaskGraph graph;
  EXPECT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
  return OnBothEngines(graph, PlatformOrDie(IdealChoice(kLatency, kBandwidth), 1, 2, 1), dp);
}

TEST(Fsdp, PrefetchHidesAllButTheFirstUnit) {
  // Units of 1e8: 0.01 + 0.05 = 0.06 each. Unit 1 [0, 0.06], F [0.06, 1.06]; unit 2 [0.06, 0.12]
  // under F. B [1.06, 5.06]; reduce-scatters ready at 3.06 and 5.06: 5.06 + 0.11.
  EXPECT_NEAR(FsdpMakespan(200'000'000, false), 0.06 + 1 + 4 + 0.11, 1e-9);
}

TEST(Fsdp, AGatherLongerThanTheComputeIsExposed) {
  // Units of 3e9: 0.01 + 1.5 = 1.51 each. Unit 1 [0, 1.51], F [1.51, 2.51]; unit 2 [1.51, 3.02]
  // outlasts F: B [3.02, 7.02]; the last reduce-scatter 7.02 + 0.11.
  CommSeconds dp;
  EXPECT_NEAR(FsdpMakespan(6'000'000'000, false, &dp), 1.51 + 1.51 + 4 + 0.11, 1e-9);
  // The gathers and reduce-scatters are "dp" communication: in flight [0, 3.02] and the two
  // reduce-scatters [5.02, 5.13], [7.02, 7.13]; exposed outside F [1.51, 2.51] and B
  // [3.02, 7.02]: 1.51 + 0.51 + 0.11.
  EXPECT_NEAR(dp.total_s, 3.02 + 0.11 + 0.11, 1e-9);
  EXPECT_NEAR(dp.exposed_s, 1.51 + 0.51 + 0.11, 1e-9);
}

TEST(Fsdp, ReshardAfterForwardGathersAgainForTheBackward) {
  // As PrefetchHides..., then B's units: unit 1 after F [1.06, 1.12], B [1.12, 5.12] (unit 2
  // under it), the last reduce-scatter 5.12 + 0.11.
  EXPECT_NEAR(FsdpMakespan(200'000'000, true), 0.06 + 1 + 0.06 + 4 + 0.11, 1e-9);
}

// HSDP: four replicas, shard groups of two (replicas 0-1 and 2-3, torchtitan's mesh), the same
// stage as FsdpMakespan's. Each unit's gathers and reduce-scatters run over its shard group's two
// GPUs, and each reduce-scatter is followed by the all-reduce of its half over the two shard
// groups (replicas 0 and 2, 1 and 3), on the same stream. `fold`: replica 0 compiled alone.
double HsdpMakespan(bool fold) {
  const Schedule s = OneRankOneMicrobatch();
  StageCosts costs = OneStageCosts(1, 4);
  costs.gradient_bytes = {400'000'000};
  costs.fsdp_units = {2};
  costs.fsdp_gather_bytes = {200'000'000};
  costs.fsdp_shard = 2;
  Parallelism parallelism{{.dp = 4, .tp = 1}, P2pMode::kEager};
  parallelism.fold_replicas = fold;
  TaskGraph graph;
  EXPECT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
  return OnBothEngines(graph, PlatformOrDie(IdealChoice(kLatency, kBandwidth), 1, 4, 1));
}

TEST(Hsdp, ShardGroupsReduceScatterThenReplicasAllReduceTheShard) {
  // Gathers over 2 GPUs, as FsdpMakespan(2e8): unit 1 [0, 0.06], F [0.06, 1.06], B [1.06, 5.06].
  // Buckets of 2e8 ready at 3.06 and 5.06; each reduce-scattered over 2 GPUs (one step of 0.01 +
  // 1e8/1e9 = 0.11), then its 1e8 shard all-reduced over 2 groups (2 steps of 0.01 + 5e7/1e9 =
  // 0.06): the first [3.06, 3.29], the second [5.06, 5.29].
  const double expected = 0.06 + 1 + 4 + 0.11 + 2 * 0.06;
  EXPECT_NEAR(HsdpMakespan(false), expected, 1e-9);
  EXPECT_NEAR(HsdpMakespan(true), expected, 1e-9);
}

}  // namespace
}  // namespace ppsim
