// The data-parallel collectives' algorithms (sim/collective_plan.h CollectivePlan) on idle fabrics,
// against their closed forms written out by hand: one rank, one microbatch (F 1 ms, B 2 ms), dp
// replicas, the collective of S = 1.6 GB after the backward. H100 node: a port of 450 GB/s and
// 1.5 us per GPU, so a step inside a node costs 3 us + bytes / 450e9; across nodes a NIC of
// 50 GB/s and 2.5 us at each end: 5 us + bytes / 50e9 (one switch, no uplink).
// Each is checked on both engines, and folded (replica 0 for all) against the full simulation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "platforms/cluster.h"
#include "sim/engine.h"
#include "sim/task_graph.h"
#include "tests/support/one_rank.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

constexpr double kBytes = 1.6e9;
constexpr double kIntraStep = 3e-6;  // latency of a step inside a node
constexpr double kIntraBandwidth = 450e9;
constexpr double kNicStep = 5e-6;
constexpr double kNicBandwidth = 50e9;

// The collective's time: the makespan after the backward ends at 3 ms, on `engine`.
double CollectiveTime(const CollectivePlan& plan, int32_t dp, int32_t nodes, bool fold,
                      EngineKind engine, int32_t tp = 1) {
  const Schedule s = OneRankOneMicrobatch();
  StageCosts costs = OneStageCosts(1e-3, 2e-3);
  costs.gradient_bytes = {static_cast<int64_t>(kBytes)};
  Parallelism parallelism{{.dp = dp, .tp = tp}, P2pMode::kEager};
  parallelism.fold_replicas = fold;
  parallelism.reduce_plans = {plan};
  TaskGraph graph;
  EXPECT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
  PlatformSpec platform;
  EXPECT_TRUE(BuildPlatform(PresetChoice("h100-node", {}, nodes), {.pp = 1, .dp = dp, .tp = tp},
                            FlagLocator(), &platform)
                  .ok());
  Timeline timeline;
  EXPECT_TRUE(Execute(engine, graph, platform, &timeline).ok());
  double makespan = 0;
  for (double end : timeline.end_s) makespan = std::max(makespan, end);
  return makespan - 3e-3;
}

// Checks `expected` on both engines, folded and in full.
void ExpectTime(const CollectivePlan& plan, int32_t dp, int32_t nodes, double expected) {
  for (EngineKind engine : {EngineKind::kCriticalPath, EngineKind::kSimGrid}) {
    for (bool fold : {true, false}) {
      SCOPED_TRACE(std::string(EngineName(engine)) + (fold ? " folded" : " full"));
      EXPECT_NEAR(CollectiveTime(plan, dp, nodes, fold, engine), expected, 1e-9 * expected);
    }
  }
}

CollectivePlan Plan(CollectiveAlgorithm algorithm, int32_t ppn, int32_t chunks = 1,
                    double wire_factor = 1) {
  CollectivePlan plan;
  plan.algorithm = algorithm;
  plan.members_per_node = ppn;
  plan.pipeline_chunks = chunks;
  plan.wire_factor = wire_factor;
  return plan;
}

TEST(Collectives, RingTakesItsClosedForm) {
  // 2(n - 1) steps of S/n: 8 GPUs in a node.
  ExpectTime(Plan(CollectiveAlgorithm::kRing, 8), 8, 1,
             14 * (kIntraStep + kBytes / 8 / kIntraBandwidth));
  // LL moves 16 bytes per 8 of data: twice the bytes.
  ExpectTime(Plan(CollectiveAlgorithm::kRing, 8, 1, 2.0), 8, 1,
             14 * (kIntraStep + 2 * kBytes / 8 / kIntraBandwidth));
}

TEST(Collectives, HierarchicalIsARingInTheNodeOneAcrossAndOneInTheNode) {
  // 16 GPUs on 2 nodes: 7 steps of S/8 in the node, 2 of S/16 across, 7 of S/8 in the node.
  ExpectTime(Plan(CollectiveAlgorithm::kHierarchical, 8), 16, 2,
             14 * (kIntraStep + kBytes / 8 / kIntraBandwidth) +
                 2 * (kNicStep + kBytes / 16 / kNicBandwidth));
}

TEST(Collectives, TreeFillsDrainsAndPipelinesTwiceTheBytesThroughEachNic) {
  // One GPU per node (tp 8 fills it), 4 nodes: 2 log2(4) = 4 empty steps, then 8 chunks of
  // 2S/8 across.
  const CollectivePlan plan = Plan(CollectiveAlgorithm::kTree, 1, 8);
  for (EngineKind engine : {EngineKind::kCriticalPath, EngineKind::kSimGrid}) {
    for (bool fold : {true, false}) {
      SCOPED_TRACE(std::string(EngineName(engine)) + (fold ? " folded" : " full"));
      const double expected = 4 * kNicStep + 8 * (kNicStep + 2 * kBytes / 8 / kNicBandwidth);
      EXPECT_NEAR(CollectiveTime(plan, 4, 4, fold, engine, 8), expected, 1e-9 * expected);
    }
  }
  // 8 GPUs per node on 2 nodes: 2 x 7 empty steps in the node, 2 x 1 across, then 4 chunks,
  // each 2S/4 along the chain in the node beside 2S/(4 x 8) through each GPU's NIC.
  const double chain = kIntraStep + 2 * kBytes / 4 / kIntraBandwidth;
  const double nic = kNicStep + 2 * kBytes / (4 * 8) / kNicBandwidth;
  ExpectTime(Plan(CollectiveAlgorithm::kTree, 8, 4), 16, 2,
             14 * kIntraStep + 2 * kNicStep + 4 * std::max(chain, nic));
}

TEST(Collectives, RingAcrossNodesSendsEachChannelsShareThroughItsOwnNic) {
  // 16 GPUs on 2 nodes, 8 channels: each of the 2 x 15 steps sends 7/8 of S/16 to the next GPU
  // in the node beside 1/8 of it to the same GPU of the next node.
  const double in_node = kIntraStep + kBytes * 7 / 8 / 16 / kIntraBandwidth;
  const double across = kNicStep + kBytes / 8 / 16 / kNicBandwidth;
  ExpectTime(Plan(CollectiveAlgorithm::kRing, 8), 16, 2, 30 * std::max(in_node, across));
}

TEST(Collectives, NvlsMovesTheBytesAndAnEighthEachWayAtFiveSixthsOfTheBus) {
  // S to the switch's reductions, S/8 of multicast, both x 6/5: two steps.
  ExpectTime(Plan(CollectiveAlgorithm::kNvls, 8), 8, 1,
             2 * kIntraStep + 1.2 * kBytes * 9 / 8 / kIntraBandwidth);
}

TEST(Collectives, NvlsTreePipelinesTheSwitchWithTheTreeAcrossNodes) {
  // 2 nodes of 8: 2 empty steps across, then 2 chunks, each 6/5 S (1 + 1/8) / 2 through the
  // switch beside 2S/(8 x 2) through each GPU's NIC.
  const double nvls = kIntraStep + 1.2 * kBytes * 9 / 8 / 2 / kIntraBandwidth;
  const double nic = kNicStep + 2 * kBytes / 16 / kNicBandwidth;
  ExpectTime(Plan(CollectiveAlgorithm::kNvlsTree, 8, 2), 16, 2,
             2 * kNicStep + 2 * std::max(nvls, nic));
}

// The tasks with an edge into `task`.
std::vector<TaskId> PredecessorsOf(const TaskGraph& graph, TaskId task) {
  std::vector<TaskId> from;
  for (TaskId t = 0; t < graph.num_tasks(); ++t) {
    for (TaskId v : boost::make_iterator_range(boost::adjacent_vertices(t, graph.dag))) {
      if (v == task) from.push_back(t);
    }
  }
  return from;
}

TaskGraph FullGraph(const CollectivePlan& plan, int32_t dp) {
  const Schedule s = OneRankOneMicrobatch();
  StageCosts costs = OneStageCosts(1e-3, 2e-3);
  costs.gradient_bytes = {static_cast<int64_t>(kBytes)};
  Parallelism parallelism{{.dp = dp, .tp = 1}, P2pMode::kEager};
  parallelism.reduce_plans = {plan};
  TaskGraph graph;
  EXPECT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
  return graph;
}

TEST(Collectives, AStepWaitsForWhoSentToItInThePhaseBefore) {
  // Hierarchical over 2 nodes of 8, every replica compiled: replica 1's first step across nodes
  // (to replica 9) waits for the last in-node step that replica 0 sent it (the reduce-scatter's
  // last chunk), not for replica 9's (which sent it nothing).
  const TaskGraph graph = FullGraph(Plan(CollectiveAlgorithm::kHierarchical, 8), 16);
  TaskId across = TaskGraph::kNoTask;
  for (TaskId t = 0; t < graph.num_tasks() && across == TaskGraph::kNoTask; ++t) {
    const Task& task = graph.tasks[t];
    if (task.kind == TaskKind::kAllReduce && task.replica == 1 && task.peer_replica == 9) across = t;
  }
  ASSERT_NE(across, TaskGraph::kNoTask);
  std::vector<int32_t> from;
  for (TaskId t : PredecessorsOf(graph, across)) from.push_back(graph.tasks[t].replica);
  std::sort(from.begin(), from.end());
  EXPECT_EQ(from, (std::vector<int32_t>{0, 1}));
}

TEST(Collectives, ACollectiveEndsWhenItsLastPartsArrive) {
  // A ring over 2 nodes of 8 with channels: the last step has two parts; replica 1's end waits
  // for its own two and for those of replica 0 (in the node) and replica 9 (across) into it.
  const TaskGraph graph = FullGraph(Plan(CollectiveAlgorithm::kRing, 8), 16);
  TaskId join = TaskGraph::kNoTask;
  for (TaskId t = 0; t < graph.num_tasks(); ++t) {
    const Task& task = graph.tasks[t];
    if (task.kind == TaskKind::kDelay && task.replica == 1 && task.duration_s == 0) join = t;
  }
  ASSERT_NE(join, TaskGraph::kNoTask);
  std::vector<std::pair<int32_t, int32_t>> from;
  for (TaskId t : PredecessorsOf(graph, join)) {
    from.emplace_back(graph.tasks[t].replica, graph.tasks[t].peer_replica);
  }
  std::sort(from.begin(), from.end());
  EXPECT_EQ(from, (std::vector<std::pair<int32_t, int32_t>>{{0, 1}, {0, 8}, {1, 2}, {1, 9},
                                                            {9, 1}, {9, 10}}));
}

TEST(Collectives, ZeroOnesAllGatherWaitsForTheOptimizerStep) {
  // ZeRO-1 with channelled rings over 2 nodes: no all-gather step (nor its timer) starts before
  // the optimizer step of its replica ends, folded or not.
  for (bool fold : {true, false}) {
    SCOPED_TRACE(fold ? "folded" : "full");
    const Schedule s = OneRankOneMicrobatch();
    StageCosts costs = OneStageCosts(1e-3, 2e-3);
    costs.gradient_bytes = {static_cast<int64_t>(kBytes)};
    costs.param_gather_bytes = {static_cast<int64_t>(kBytes / 2)};
    costs.optimizer_step_s = {1e-3};
    Parallelism parallelism{{.dp = 16, .tp = 1}, P2pMode::kEager};
    parallelism.fold_replicas = fold;
    CollectivePlan plan = Plan(CollectiveAlgorithm::kRing, 8);
    plan.fixed_latency_s = 8.4e-6;
    parallelism.reduce_plans = {plan};
    parallelism.gather_plans = {plan};
    TaskGraph graph;
    ASSERT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
    PlatformSpec platform;
    ASSERT_TRUE(BuildPlatform(PresetChoice("h100-node", {}, 2), {.pp = 1, .dp = 16}, FlagLocator(),
                              &platform)
                    .ok());
    Timeline timeline;
    ASSERT_TRUE(Execute(EngineKind::kSimGrid, graph, platform, &timeline).ok());
    double optimizer_end = 0;
    for (TaskId t = static_cast<TaskId>(graph.optimizers_begin()); t < graph.num_tasks(); ++t) {
      optimizer_end = std::max(optimizer_end, timeline.end_s[t]);
    }
    ASSERT_GT(optimizer_end, 0);
    // The all-gather's steps: 7/8 of P/16 in the node, 1/8 across (P = 0.8 GB), against the
    // reduce-scatter's 87.5 and 12.5 MB.
    for (TaskId t = 0; t < graph.num_tasks(); ++t) {
      const Task& task = graph.tasks[t];
      if (task.kind != TaskKind::kAllReduce ||
          (task.bytes != 43'750'000 && task.bytes != 6'250'000)) {
        continue;
      }
      EXPECT_GE(timeline.start_s[t], optimizer_end - 1e-12) << "task " << t;
    }
  }
}

}  // namespace
}  // namespace ppsim
