// Context parallelism: ring attention's K/V passes alongside the compute, and the gradients'
// rings over the data- and context-parallel GPUs. Expected times are written out by hand on an
// idle NVSwitch (h100-node: 450 GB/s per port and direction, 3 us per route), and across nodes
// on dgx-h100's NICs (400 Gb/s = 50 GB/s per NIC and direction, 2.5 us per NIC: 5 us per route
// between two nodes under one leaf).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "schedules/registry.h"
#include "sim/communication.h"
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

TEST(CpRing, SerialExchangesRunBeforeTheCompute) {
  // --cp-comm-type allgather or a2a: the compute waits for the exchange. F: 0.09 GB at 450 GB/s
  // + 3 us, then 1 ms; B: 0.9 GB + 3 us, then 2 ms.
  const int32_t tp = 2, cp = 4;
  const PlatformSpec platform = PlatformOrDie(PresetChoice("h100-node"), 1, 1, tp * cp);
  const Schedule s = OneRankOneMicrobatch();
  StageCosts costs = OneStageCosts(1e-3, 2e-3);
  costs.cp_forward_bytes = {90'000'000};
  costs.cp_backward_bytes = {900'000'000};
  costs.cp_serial = true;
  Parallelism parallelism{{.dp = 1, .tp = tp}, P2pMode::kEager};
  parallelism.layout.cp = cp;
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
  const size_t ring = graph.RingRecord(0, PartKind::kCpRing);
  const double f_end = kRoute + 90e6 / kBandwidth + 1e-3;
  for (EngineKind engine : {EngineKind::kCriticalPath, EngineKind::kSimGrid}) {
    SCOPED_TRACE(EngineName(engine));
    Timeline timeline;
    ASSERT_TRUE(Execute(engine, graph, platform, &timeline).ok());
    EXPECT_NEAR(timeline.part_end_s[ring], kRoute + 90e6 / kBandwidth, 1e-12);
    EXPECT_NEAR(timeline.end_s[0], f_end, 1e-12);
    EXPECT_NEAR(timeline.end_s[1], f_end + kRoute + 900e6 / kBandwidth + 2e-3, 1e-12);
    // Nothing hides the exchanges: all of their time is exposed.
    const RunCommunication comm = ComputeCommunication(graph, timeline, 1);
    const double cp_s = 2 * kRoute + 990e6 / kBandwidth;
    EXPECT_NEAR(comm.max[static_cast<int>(CommKind::kCp)].total_s, cp_s, 1e-12);
    EXPECT_NEAR(comm.max[static_cast<int>(CommKind::kCp)].exposed_s, cp_s, 1e-12);
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

// A rank's tp x cp GPUs placed on `nodes` nodes of dgx-h100 (`sets` applied).
PlatformSpec DgxH100(int32_t nodes, int32_t tp, int32_t cp, std::vector<std::string> sets = {}) {
  PlatformSpec platform;
  ParallelLayout layout{.pp = 1, .dp = 1, .tp = tp};
  layout.cp = cp;
  const Status status = BuildPlatform(PresetChoice("dgx-h100", std::move(sets), nodes), layout,
                                      FlagLocator(), &platform);
  EXPECT_TRUE(status.ok()) << status.message();
  return platform;
}

// F's ring attention alone (B sends nothing): the end of its ring part on `platform`.
double RingEnd(const PlatformSpec& platform, int32_t tp, int32_t cp, int64_t bytes) {
  const TaskGraph graph = Compile(tp, cp, bytes, 0);
  const size_t ring = graph.RingRecord(0, PartKind::kCpRing);
  EXPECT_NE(ring, TaskGraph::kNoRecord);
  Timeline timeline;
  EXPECT_TRUE(Execute(EngineKind::kSimGrid, graph, platform, &timeline).ok());
  Timeline critical;
  EXPECT_TRUE(Execute(EngineKind::kCriticalPath, graph, platform, &critical).ok());
  EXPECT_NEAR(critical.part_end_s[ring], timeline.part_end_s[ring], 1e-12);
  return timeline.part_end_s[ring];
}

TEST(CpRing, AcrossNodesTheRingGoesOverTheNics) {
  // tp 1 x cp 2 on two one-GPU nodes: the K/V block crosses GPU 0's NIC out and GPU 1's NIC in
  // (2 x 2.5 us) at 50 GB/s: 5 us + 0.5 GB / 50 GB/s = 10.005 ms; in one node of two GPUs, over
  // NVSwitch (2 x 1.5 us) at 450 GB/s: 3 us + 0.5 GB / 450 GB/s.
  const int64_t bytes = 500'000'000;
  const PlatformSpec across = DgxH100(2, 1, 2, {"gpus_per_node=1"});
  EXPECT_EQ(across.NodeOf(across.GpuOf(0, 0, 0)), 0);
  EXPECT_EQ(across.NodeOf(across.GpuOf(0, 0, 1)), 1);
  EXPECT_NEAR(RingEnd(across, 1, 2, bytes), 5e-6 + 500e6 / 50e9, 1e-12);
  const PlatformSpec inside = DgxH100(1, 1, 2);
  EXPECT_NEAR(RingEnd(inside, 1, 2, bytes), kRoute + 500e6 / kBandwidth, 1e-12);
}

TEST(CpRing, TensorParallelInsideNodesContextParallelAcross) {
  // tp 8 x cp 2 on two DGX H100 nodes (Megatron-Bridge's Llama 3.1 405B layout): slice 0 is node
  // 0's 8 GPUs, slice 1 node 1's; GPU k sends to GPU k + 8 (the same TP index) on its own rail,
  // one NIC each: 5 us + 0.2 GB / 50 GB/s.
  const PlatformSpec platform = DgxH100(2, 8, 2);
  for (int32_t k = 0; k < 8; ++k) {
    EXPECT_EQ(platform.GpuOf(0, 0, k), k);
    EXPECT_EQ(platform.GpuOf(0, 0, 8 + k), 8 + k);
  }
  EXPECT_NEAR(RingEnd(platform, 8, 2, 200'000'000), 5e-6 + 200e6 / 50e9, 1e-12);
}

TEST(CpRing, HierarchicalAllToAllInsideNodesRingAcross) {
  // --cp-comm-type a2a+p2p, tp 4 x cp 4 with A 2 (Megatron's --hierarchical-context-parallel-sizes
  // 2 2) on two DGX H100 nodes: slices 0 and 1 (node 0) and 2 and 3 (node 1) form the inner
  // groups, their all-to-alls over NVSwitch (3 us + bytes / 450 GB/s), before the compute; the
  // outer ring passes slice j to slice j + 2, across the nodes on each GPU's own NIC (5 us +
  // bytes / 50 GB/s), alongside the compute. F: 45 MB inner, 100 MB outer; B: 90 MB, 200 MB.
  const int32_t tp = 4, cp = 4;
  const PlatformSpec platform = DgxH100(2, tp, cp);
  const Schedule s = OneRankOneMicrobatch();
  StageCosts costs = OneStageCosts(1e-3, 2e-3);
  costs.cp_forward_bytes = {100'000'000};
  costs.cp_backward_bytes = {200'000'000};
  costs.cp_a2a_forward_bytes = {45'000'000};
  costs.cp_a2a_backward_bytes = {90'000'000};
  costs.cp_a2a_size = 2;
  Parallelism parallelism{{.dp = 1, .tp = tp}, P2pMode::kEager};
  parallelism.layout.cp = cp;
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
  const size_t a2a = graph.RingRecord(0, PartKind::kCpA2a);
  const size_t ring = graph.RingRecord(0, PartKind::kCpRing);
  ASSERT_NE(a2a, TaskGraph::kNoRecord);
  ASSERT_NE(ring, TaskGraph::kNoRecord);
  const double f_a2a = kRoute + 45e6 / kBandwidth;     // 0.103 ms
  const double f_ring = 5e-6 + 100e6 / 50e9;           // 2.005 ms > F's 1 ms
  const double b_a2a = kRoute + 90e6 / kBandwidth;     // 0.203 ms
  const double b_ring = 5e-6 + 200e6 / 50e9;           // 4.005 ms > B's 2 ms
  for (EngineKind engine : {EngineKind::kCriticalPath, EngineKind::kSimGrid}) {
    SCOPED_TRACE(EngineName(engine));
    Timeline timeline;
    ASSERT_TRUE(Execute(engine, graph, platform, &timeline).ok());
    EXPECT_NEAR(timeline.part_end_s[a2a], f_a2a, 1e-12);
    EXPECT_NEAR(timeline.part_start_s[ring], f_a2a, 1e-12);
    EXPECT_NEAR(timeline.part_end_s[ring], f_a2a + f_ring, 1e-12);
    EXPECT_NEAR(timeline.end_s[0], f_a2a + f_ring, 1e-12);
    EXPECT_NEAR(timeline.end_s[1], f_a2a + f_ring + b_a2a + b_ring, 1e-12);
    // The inner all-to-alls stay in the nodes (16 GPUs x 2 ops), the ring crosses them.
    RunMetrics metrics;
    metrics.makespan_s = timeline.end_s[1];
    ComputeLinkMetrics(graph, platform, timeline, &metrics);
    EXPECT_EQ(metrics.intra_node.transfers, 2 * tp * cp);
    EXPECT_EQ(metrics.intra_node.bytes, tp * cp * 135'000'000LL);
    EXPECT_EQ(metrics.inter_node.transfers, 2 * tp * cp);
    EXPECT_EQ(metrics.inter_node.bytes, tp * cp * 300'000'000LL);
    // The all-to-alls are exposed, the ring's time beyond the compute too.
    const RunCommunication comm = ComputeCommunication(graph, timeline, 1);
    EXPECT_NEAR(comm.max[static_cast<int>(CommKind::kCp)].total_s,
                f_a2a + f_ring + b_a2a + b_ring, 1e-12);
    EXPECT_NEAR(comm.max[static_cast<int>(CommKind::kCp)].exposed_s,
                f_a2a + b_a2a + (f_ring - 1e-3) + (b_ring - 2e-3), 1e-12);
  }
}

}  // namespace
}  // namespace ppsim
