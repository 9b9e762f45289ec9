// Context parallelism: ring attention's K/V passes alongside the compute, and the gradients'
// rings over the data- and context-parallel GPUs. Expected times are written out by hand on an
// idle NVSwitch (h100-node: 450 GB/s per port and direction, 3 us per route).
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

constexpr double kBandwidth = 450e9;
constexpr double kRoute = 3e-6;

// One rank of tp x cp GPUs, one microbatch: F (1 ms) and B (2 ms).
TaskGraph Compile(int32_t tp, int32_t cp, int64_t cp_forward, int64_t cp_backward,
                  int64_t gradient_bytes = 0) {
  const Schedule s = OneRankOneMicrobatch();
  StageCosts costs = OneStageCosts(1e-3, 2e-3);
  costs.gradient_bytes = {gradient_bytes};
  costs.cp_forward_bytes = {cp_forward};
  costs.cp_backward_bytes = {cp_backward};
  Parallelism parallelism{{.dp = 1, .tp = tp}, P2pMode::kEager};
  parallelism.layout.cp = cp;
  TaskGraph graph;
  EXPECT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
  return graph;
}

TEST(CpRing, RingAttentionRunsAlongsideTheCompute) {
  const int32_t tp = 2, cp = 4;
  const PlatformSpec platform = PlatformOrDie(PresetChoice("h100-node"), 1, 1, tp * cp);
  // F's K/V passes (0.09 GB: 0.2 ms) hide behind its 1 ms; B's (0.9 GB: 2 ms + 3 us) do not.
  const TaskGraph graph = Compile(tp, cp, 90'000'000, 900'000'000);
  // F's ring attention: a part of its program.
  const size_t ring = graph.RingRecord(0, PartKind::kCpRing);
  ASSERT_NE(ring, TaskGraph::kNoRecord);
  for (EngineKind engine : {EngineKind::kCriticalPath, EngineKind::kSimGrid}) {
    SCOPED_TRACE(EngineName(engine));
    Timeline timeline;
    ASSERT_TRUE(Execute(engine, graph, platform, &timeline).ok());
    EXPECT_NEAR(timeline.end_s[0], 1e-3, 1e-12);
    EXPECT_NEAR(timeline.part_end_s[ring], kRoute + 90e6 / kBandwidth, 1e-12);
    EXPECT_NEAR(timeline.end_s[1], 1e-3 + kRoute + 900e6 / kBandwidth, 1e-12);
    RunMetrics metrics;
    metrics.makespan_s = timeline.end_s[1];
    ComputeLinkMetrics(graph, platform, timeline, &metrics);
    // Every one of the 8 GPUs sends to its peer in the next slice, in both ops.
    EXPECT_EQ(metrics.intra_node.transfers, 2 * tp * cp);
    EXPECT_EQ(metrics.intra_node.bytes, tp * cp * (90'000'000LL + 900'000'000LL));
  }
}

TEST(CpRing, GradientsAreReducedOverTheContextParallelGpus) {
  // dp 1, cp 2, tp 1: a ring of the 2 GPUs holding the same parameters, 2 steps of G/2 after B.
  const PlatformSpec platform = PlatformOrDie(PresetChoice("h100-node"), 1, 1, 2);
  const TaskGraph graph = Compile(1, 2, 0, 0, 900'000'000);
  for (EngineKind engine : {EngineKind::kCriticalPath, EngineKind::kSimGrid}) {
    SCOPED_TRACE(EngineName(engine));
    Timeline timeline;
    ASSERT_TRUE(Execute(engine, graph, platform, &timeline).ok());
    double makespan = 0;
    for (double end : timeline.end_s) makespan = std::max(makespan, end);
    EXPECT_NEAR(makespan, 3e-3 + 2 * (kRoute + 450e6 / kBandwidth), 1e-12);
  }
}

}  // namespace
}  // namespace ppsim
