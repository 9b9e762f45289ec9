// Tensor-parallel collectives inside F and I: a ring over the group's GPUs, on the cluster's links.
// Expected times are the ring all-reduce's closed form, 2(t - 1) (S/(tB) + alpha) (Patarasuk and
// Yuan 2009; NCCL's ring), on an idle NVSwitch: B the port bandwidth, alpha the route latency.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "schedules/registry.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/task_graph.h"
#include "tests/support/one_rank.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

constexpr int32_t kTp = 8;
constexpr double kBandwidth = 450e9;  // h100-node: NVSwitch port, per direction
constexpr double kRoute = 3e-6;       // two ports of 1.5 us
constexpr double kActivation = 64.0 * 1024 * 1024;  // S: one s x b x h activation in 16 bits

// One rank, one microbatch: F (1 ms) with one all-reduce, B (2 ms) with two.
TaskGraph Compile(bool overlap, const PlatformSpec& platform) {
  const Schedule s = OneRankOneMicrobatch();
  StageCosts costs = OneStageCosts(1e-3, 2e-3);
  costs.tp_forward_steps = {2 * (kTp - 1)};
  costs.tp_backward_steps = {4 * (kTp - 1)};
  costs.tp_step_bytes = {static_cast<int64_t>(kActivation / kTp)};
  Parallelism parallelism{{.dp = 1, .tp = kTp}, P2pMode::kEager};
  parallelism.tp_comm_overlap = overlap;
  const int32_t first = platform.GpuOf(0, 0, 0);
  parallelism.tp_step_latency_s = platform.UncontendedTransferTime(first, first + 1, 0);
  TaskGraph graph;
  EXPECT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
  return graph;
}

double AllReduce() { return 2 * (kTp - 1) * (kActivation / kTp / kBandwidth + kRoute); }

TEST(TpRing, AnAllReduceTakesTheRingFormulaOnAnIdleNvswitch) {
  const PlatformSpec platform = PlatformOrDie(PresetChoice("h100-node"), 1, 1, kTp);
  ASSERT_DOUBLE_EQ(platform.UncontendedTransferTime(0, 1, 0), kRoute);
  const TaskGraph graph = Compile(/*overlap=*/false, platform);
  // F's rings: a part of its program.
  const size_t ring = graph.RingRecord(0, PartKind::kTpRing);
  ASSERT_NE(ring, TaskGraph::kNoRecord);
  for (EngineKind engine : {EngineKind::kCriticalPath, EngineKind::kSimGrid}) {
    SCOPED_TRACE(EngineName(engine));
    Timeline timeline;
    ASSERT_TRUE(Execute(engine, graph, platform, &timeline).ok());
    // F: its compute, then one all-reduce; B: its compute, then two.
    EXPECT_NEAR(timeline.end_s[0], 1e-3 + AllReduce(), 1e-12);
    EXPECT_NEAR(timeline.end_s[1], timeline.end_s[0] + 2e-3 + 2 * AllReduce(), 1e-12);
    EXPECT_NEAR(timeline.part_start_s[ring], 1e-3 + (2 * (kTp - 1) - 1) * kRoute, 1e-12);
    EXPECT_NEAR(timeline.part_end_s[ring], timeline.end_s[0], 1e-12);
    RunMetrics metrics;
    metrics.makespan_s = timeline.end_s[1];
    ComputeLinkMetrics(graph, platform, timeline, &metrics);
    // Each of the t GPUs sends 2(t - 1)/t x S per all-reduce to the next (three all-reduces, in
    // one transfer per GPU and task).
    EXPECT_EQ(metrics.intra_node.transfers, 2 * kTp);
    EXPECT_EQ(metrics.intra_node.bytes,
              static_cast<int64_t>(kTp * 3 * 2 * (kTp - 1) * (kActivation / kTp)));
  }
}

TEST(TpRing, OverlapHidesTheRingBehindLongerCompute) {
  const PlatformSpec platform = PlatformOrDie(PresetChoice("h100-node"), 1, 1, kTp);
  const TaskGraph graph = Compile(/*overlap=*/true, platform);
  const size_t ring = graph.RingRecord(0, PartKind::kTpRing);
  ASSERT_NE(ring, TaskGraph::kNoRecord);
  for (EngineKind engine : {EngineKind::kCriticalPath, EngineKind::kSimGrid}) {
    SCOPED_TRACE(EngineName(engine));
    Timeline timeline;
    ASSERT_TRUE(Execute(engine, graph, platform, &timeline).ok());
    // The ring (its bytes, ~0.26 ms) runs alongside the compute, which holds the step
    // latencies but one: F lasts its compute and those latencies.
    const double f = 1e-3 + (2 * (kTp - 1) - 1) * kRoute;
    ASSERT_LT(2 * (kTp - 1) * kActivation / kTp / kBandwidth + kRoute, f);
    EXPECT_NEAR(timeline.end_s[0], f, 1e-12);
    EXPECT_NEAR(timeline.part_start_s[ring], 0, 1e-12);
    EXPECT_NEAR(timeline.part_end_s[ring], 2 * (kTp - 1) * kActivation / kTp / kBandwidth + kRoute,
                1e-12);
  }
}

}  // namespace
}  // namespace ppsim
