// Replica folding (Parallelism::fold_replicas): replica 0 standing for every data-parallel
// replica gives exactly the full simulation's times wherever replicas are symmetric. The oracle is
// the full replica-by-replica simulation on SimGrid, with contention (pipeline transfers and
// gradient rings on the same NICs, buckets overlapping the backward, ZeRO-1, replicas sharing a
// NIC); folded and full must agree to 1e-9 relative on every task of replica 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "platforms/cluster.h"
#include "schedules/registry.h"
#include "sim/engine.h"
#include "sim/task_graph.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

struct Case {
  std::string schedule = "1F1B";
  int32_t pp = 2;
  int32_t microbatches = 4;
  int32_t dp = 4;
  int32_t tp = 1;
  int32_t cp = 1;
  int64_t gradient_bytes = 400'000'000;
  int64_t message_bytes = 100'000'000;
  int64_t bucket_bytes = 0;
  int64_t gather_bytes = 0;  // ZeRO-1's parameters all-gather, per stage
  PlatformChoice platform;
};

struct Simulated {
  TaskGraph graph;
  Timeline timeline;
  double makespan_s = 0;
};

Simulated Simulate(const Case& c, bool fold) {
  ScheduleParams params;
  params.num_ranks = c.pp;
  params.num_microbatches = c.microbatches;
  if (c.schedule == "Interleaved1F1B") params.stages_per_rank = 2;
  Schedule schedule;
  EXPECT_TRUE(GenerateSchedule(c.schedule, params, &schedule).ok());
  StageCosts costs;
  const int32_t stages = schedule.num_stages;
  costs.forward_s.assign(stages, 2e-3);
  costs.backward_s.assign(stages, 4e-3);
  costs.activation_bytes.assign(stages, 0);
  costs.activation_w_bytes.assign(stages, 0);
  costs.message_bytes.assign(stages, c.message_bytes);
  costs.gradient_bytes.assign(stages, c.gradient_bytes);
  if (c.gather_bytes > 0) {
    costs.param_gather_bytes.assign(stages, c.gather_bytes);
    costs.optimizer_step_s.assign(stages, 1e-3);
  }
  Parallelism parallelism{{.dp = c.dp, .tp = c.tp}, P2pMode::kEager};
  parallelism.layout.cp = c.cp;
  parallelism.grad_bucket_bytes = c.bucket_bytes;
  parallelism.fold_replicas = fold;
  Simulated out;
  EXPECT_TRUE(CompileTaskGraph(schedule, costs, parallelism, &out.graph).ok());
  PlatformSpec platform;
  const Status built = BuildPlatform(c.platform, {.pp = c.pp, .dp = c.dp, .tp = c.tp, .cp = c.cp},
                                     FlagLocator(), &platform);
  EXPECT_TRUE(built.ok()) << built.message();
  EXPECT_TRUE(Execute(EngineKind::kSimGrid, out.graph, platform, &out.timeline).ok());
  for (double end : out.timeline.end_s) out.makespan_s = std::max(out.makespan_s, end);
  return out;
}

// Folded and full agree on the makespan and on every compute task of replica 0.
void ExpectFoldedEqualsFull(const Case& c) {
  const Simulated full = Simulate(c, false);
  const Simulated folded = Simulate(c, true);
  EXPECT_EQ(folded.graph.num_replicas, 1);
  EXPECT_EQ(full.graph.num_replicas, c.dp);
  EXPECT_LT(folded.graph.num_tasks(), full.graph.num_tasks());
  EXPECT_NEAR(folded.makespan_s, full.makespan_s, 1e-9 * full.makespan_s);
  for (TaskId t = 0; t < folded.graph.compute_per_replica; ++t) {
    EXPECT_NEAR(folded.timeline.start_s[t], full.timeline.start_s[t], 1e-9 * full.makespan_s);
    EXPECT_NEAR(folded.timeline.end_s[t], full.timeline.end_s[t], 1e-9 * full.makespan_s);
  }
  // The gradient rings took time: they are on the makespan (the backward ends earlier).
  double last_compute = 0;
  for (TaskId t = 0; t < full.graph.num_compute_tasks(); ++t) {
    last_compute = std::max(last_compute, full.timeline.end_s[t]);
  }
  EXPECT_GT(full.makespan_s, last_compute);
}

TEST(ReplicaFolding, EqualsTheFullSimulationInsideAnNvswitchNode) {
  Case c;
  c.platform = PresetChoice("h100-node");
  ExpectFoldedEqualsFull(c);
  c.bucket_bytes = 100'000'000;
  ExpectFoldedEqualsFull(c);
  c.gather_bytes = 200'000'000;
  ExpectFoldedEqualsFull(c);
}

TEST(ReplicaFolding, EqualsTheFullSimulationAcrossNodesWithPipelineTrafficOnTheSameNics) {
  // A node per (rank, replica) group: the rings cross the NICs the pipeline's transfers use.
  Case c;
  c.tp = 8;
  c.microbatches = 8;
  c.bucket_bytes = 50'000'000;
  c.platform = PresetChoice("h100-node", {}, 8);
  ExpectFoldedEqualsFull(c);
  c.schedule = "Interleaved1F1B";
  c.gather_bytes = 100'000'000;
  c.platform = PresetChoice("dgx-h100", {}, 8);
  ExpectFoldedEqualsFull(c);
}

TEST(ReplicaFolding, EqualsTheFullSimulationWhenReplicasShareANic) {
  // Two GPUs and one NIC per node: both replicas of a rank send their pipeline transfers
  // through it, so replica 0 gets half of it.
  Case c;
  c.dp = 2;
  c.platform = PresetChoice(
      "h100-node", {"gpus_per_node=2", "nic.attachment=PER_NODE", "nic.bandwidth=80GB/s"}, 2);
  ExpectFoldedEqualsFull(c);
}

TEST(ReplicaFolding, EqualsTheFullSimulationWithContextParallelRings) {
  // The rings run over dp x cp GPUs: replica 0's two slices, the second sending to replica 1.
  Case c;
  c.cp = 2;
  c.platform = PresetChoice("h100-node", {}, 2);
  ExpectFoldedEqualsFull(c);
}

TEST(ReplicaFolding, CompilesOneReplicaAndChainsEachRingMember) {
  Case c;
  c.platform = PresetChoice("h100-node");
  const Simulated folded = Simulate(c, true);
  // 8 actions per rank, one replica; per stage one member's 2(4 - 1) steps, all mirrored.
  size_t steps = 0, mirrored = 0;
  for (const Task& task : folded.graph.tasks) {
    steps += task.kind == TaskKind::kAllReduce;
    mirrored += task.mirrored;
  }
  EXPECT_EQ(folded.graph.num_compute_tasks(), 16u);
  EXPECT_EQ(steps, 2u * 6);
  EXPECT_EQ(mirrored, steps);
  // The ring's closed form on NVLink ports nothing else uses then: rank 0's last backward ends
  // last, then 6 steps of (2 x 1.5 us + 4e8/4 B / 450 GB/s).
  double last_backward = 0;
  for (TaskId t = 0; t < folded.graph.num_compute_tasks(); ++t) {
    last_backward = std::max(last_backward, folded.timeline.end_s[t]);
  }
  EXPECT_NEAR(folded.makespan_s - last_backward, 6 * (3e-6 + 1e8 / 450e9), 1e-12);
}

}  // namespace
}  // namespace ppsim
