// Expert parallelism: the programs of actions with MoE layers, the all-to-alls on idle fabrics
// against closed forms, and DualPipe's overlap of one chunk's all-to-alls with the other's
// computation. Every expected time is written out by hand from the platform's figures:
// h100-node, 450 GB/s per NVSwitch port and direction, 3 us per route (1.5 us per port);
// dgx-h100, the same nodes with a 400 Gb/s (50 GB/s) NIC per GPU, 2.5 us per NIC, rail-optimized.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "schedules/registry.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/task_graph.h"
#include "tests/support/one_rank.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

constexpr EngineKind kEngines[] = {EngineKind::kCriticalPath, EngineKind::kSimGrid};

// One MoE layer of 1 ms attention and 2 ms MLP forward; I 1.5 ms and 3 ms, W 0.5 ms and 1 ms; a
// stage whose F, I and W are 4 ms, 5 ms and 2 ms (so 1 ms, 0.5 ms and 0.5 ms are the rest).
MoeStage Layer(int32_t layers, int64_t dispatch_bytes, int64_t combine_bytes) {
  MoeStage moe;
  moe.layers = layers;
  moe.layer_seconds.forward_attention_s = 1e-3;
  moe.layer_seconds.forward_mlp_s = 2e-3;
  moe.layer_seconds.input_attention_s = 1.5e-3;
  moe.layer_seconds.input_mlp_s = 3e-3;
  moe.layer_seconds.weight_attention_s = 0.5e-3;
  moe.layer_seconds.weight_mlp_s = 1e-3;
  moe.dispatch_bytes = dispatch_bytes;
  moe.combine_bytes = combine_bytes;
  return moe;
}

StageCosts SplitCosts(int32_t stages, const MoeStage& moe) {
  StageCosts costs;
  costs.forward_s.assign(stages, 4e-3);
  costs.backward_input_s.assign(stages, 5e-3);
  costs.backward_weight_s.assign(stages, 2e-3);
  costs.backward_s.assign(stages, 7e-3);
  costs.activation_bytes.assign(stages, 0);
  costs.activation_w_bytes.assign(stages, 0);
  costs.message_bytes.assign(stages, 0);
  costs.moe.assign(stages, moe);
  return costs;
}

// "F dispatch 0 800" style: each part as kind, name, layer and duration (ms) or bytes.
std::vector<std::string> Describe(const TaskProgram& program) {
  static const char* kNames[] = {"rest", "attention", "dispatch", "mlp", "combine"};
  std::vector<std::string> out;
  for (const TaskPart& part : program) {
    std::string text = std::to_string(part.chunk) + (part.backward ? " B " : " F ") +
                       kNames[static_cast<int>(part.name)] + " " + std::to_string(part.layer);
    if (part.kind == PartKind::kCompute) {
      char ms[32];
      std::snprintf(ms, sizeof(ms), " %.3gms", part.duration_s * 1e3);
      text += ms;
    } else {
      text += " " + std::to_string(part.bytes) + "B";
    }
    out.push_back(text);
  }
  return out;
}

Op OpOf(OpKind kind, int32_t stage, int32_t microbatch = 0) {
  return Op{kind, StageIndex(stage), MicrobatchIndex(microbatch)};
}

TEST(AllToAll, ForwardAndBackwardPrograms) {
  // 2 layers; dispatch 800 and combine 1600 bytes to the whole group of 8: 100 and 200 per peer.
  StageCosts costs = SplitCosts(1, Layer(2, 800, 1600));
  costs.forward_s = {7e-3};
  costs.backward_input_s = {10e-3};
  EXPECT_EQ(
      Describe(ProgramOf(costs, Action::Single(OpOf(OpKind::kForward, 0)), 8, 1)),
      (std::vector<std::string>{"0 F rest 0 1ms",  // 7 - 2 x (1 + 2)
                                "0 F attention 0 1ms", "0 F dispatch 0 100B", "0 F mlp 0 2ms",
                                "0 F combine 0 200B", "0 F attention 1 1ms", "0 F dispatch 1 100B",
                                "0 F mlp 1 2ms", "0 F combine 1 200B"}));
  // I: layers in reverse, the combine's gradient first; both gradient all-to-alls in 16 bits
  // (the combine's size); the rest (10 - 2 x 4.5) last.
  EXPECT_EQ(
      Describe(ProgramOf(costs, Action::Single(OpOf(OpKind::kBackwardInput, 0)), 8, 1)),
      (std::vector<std::string>{"0 B combine 1 200B", "0 B mlp 1 3ms", "0 B dispatch 1 200B",
                                "0 B attention 1 1.5ms", "0 B combine 0 200B", "0 B mlp 0 3ms",
                                "0 B dispatch 0 200B", "0 B attention 0 1.5ms", "0 B rest 0 1ms"}));
  // W has no all-to-all; ep 1 has none at all.
  EXPECT_TRUE(ProgramOf(costs, Action::Single(OpOf(OpKind::kBackwardWeight, 0)), 8, 1).empty());
  EXPECT_TRUE(ProgramOf(costs, Action::Single(OpOf(OpKind::kForward, 0)), 1, 1).empty());
}

TEST(AllToAll, FullRecomputationRerunsTheForwardInTheBackward) {
  MoeStage moe = Layer(1, 80, 160);
  moe.full_recompute = true;
  StageCosts costs = SplitCosts(1, moe);
  costs.backward_s = {11e-3};  // 1 + 2 recomputed, 4.5 + 1.5 backward, 2 rest
  EXPECT_EQ(
      Describe(ProgramOf(costs, Action::Single(OpOf(OpKind::kBackward, 0)), 8, 1)),
      (std::vector<std::string>{"0 F attention 0 1ms", "0 F dispatch 0 10B", "0 F mlp 0 2ms",
                                "0 F combine 0 20B", "0 B combine 0 20B", "0 B mlp 0 4ms",
                                "0 B dispatch 0 20B", "0 B attention 0 2ms", "0 B rest 0 2ms"}));
}

TEST(AllToAll, OverlappedPairInterleavesAsDeepSeekV3Figure4) {
  const StageCosts costs = SplitCosts(2, Layer(1, 800, 800));
  const Action pair =
      Action::OverlapForwardBackward(OpOf(OpKind::kForward, 0, 1), OpOf(OpKind::kBackward, 1, 0));
  // Compute parts x 1.25 (32 of 160 SMs to communication).
  EXPECT_EQ(Describe(ProgramOf(costs, pair, 8, 1.25)),
            (std::vector<std::string>{
                "0 F rest 0 1.25ms", "0 F attention 0 1.25ms", "1 B combine 0 100B",
                "1 B mlp 0 5ms", "0 F dispatch 0 100B", "0 F mlp 0 2.5ms", "1 B dispatch 0 100B",
                "1 B attention 0 2.5ms", "0 F combine 0 100B", "1 B rest 0 1.25ms"}));
  // --overlap gives the pair's duration: no parts.
  StageCosts given = costs;
  given.overlap_s = {9e-3, 9e-3};
  EXPECT_TRUE(ProgramOf(given, pair, 8, 1).empty());
}

// One rank, one microbatch (F then B), dp replicas of one GPU each on `platform`.
struct OneRankRun {
  TaskGraph graph;
  Timeline timeline;
};
OneRankRun RunOneRank(const PlatformSpec& platform, EngineKind engine, int32_t dp, int32_t ep,
                      const MoeStage& moe, bool fold, bool node_limited = false) {
  OneRankRun run;
  StageCosts costs = OneStageCosts(4e-3, 7e-3);
  costs.gradient_bytes = {0};
  costs.moe = {moe};
  Parallelism parallelism{{.dp = dp, .tp = 1}, P2pMode::kEager};
  parallelism.layout.ep = ep;
  parallelism.fold_replicas = fold;
  parallelism.node_limited_routing = node_limited;
  EXPECT_TRUE(CompileTaskGraph(OneRankOneMicrobatch(), costs, parallelism, &run.graph).ok());
  EXPECT_TRUE(Execute(engine, run.graph, platform, &run.timeline).ok());
  return run;
}

// The merged flows the SimGrid engine runs for the one rank's all-to-alls of a folded run
// (GroupAllToAllFlows, then EqualizeAllToAllGroups over every rank: here the only one).
std::vector<AllToAllGroup> MergedFlowsOfRank0(const OneRankRun& run, const PlatformSpec& platform,
                                              const std::vector<TaskGpus>& flows) {
  std::map<std::pair<int32_t, int32_t>, std::vector<AllToAllGroup>> groups;
  const std::pair<int32_t, int32_t> rank0{0, 0};
  groups[rank0] =
      GroupAllToAllFlows(run.graph, platform, flows, AllToAllTotalLoads(run.graph, platform),
                         AllToAllShares(run.graph, platform));
  EqualizeAllToAllGroups(platform, &groups);
  return groups[rank0];
}

TEST(AllToAll, IntraNodeNvswitchClosedForm) {
  // ep 8 over the 8 GPUs of an h100-node (dp 8, tp 1). Each GPU sends 1/8 of D to each of 7
  // peers at once: 7 flows share its port (and 7 share each receiver's): 3 us + (7/8) D / 450 GB/s.
  const PlatformSpec platform = PlatformOrDie(PresetChoice("h100-node"), 1, 8, 1);
  const int64_t dispatch = 576'000'000, combine = 1'152'000'000;
  auto a2a = [](int64_t bytes) { return 3e-6 + 7.0 / 8 * static_cast<double>(bytes) / 450e9; };
  const MoeStage moe = Layer(1, dispatch, combine);
  for (bool fold : {true, false}) {
    for (EngineKind engine : kEngines) {
      SCOPED_TRACE(std::string(EngineName(engine)) + (fold ? " folded" : " every replica"));
      const OneRankRun run = RunOneRank(platform, engine, 8, 8, moe, fold);
      // F: rest 1 ms, attention 1 ms, dispatch, MLP 2 ms, combine.
      const double forward = 4e-3 + a2a(dispatch) + a2a(combine);
      EXPECT_NEAR(run.timeline.end_s[0], forward, 1e-12);
      // B (I + W): the layer's MLP 4 ms and attention 2 ms, the two gradient all-to-alls of the
      // combine's size, then the rest (7 - 6 = 1 ms).
      EXPECT_NEAR(run.timeline.end_s[1], forward + 7e-3 + 2 * a2a(combine), 1e-12);
      // The part records: F's dispatch (part 2) starts after rest and attention.
      EXPECT_NEAR(run.timeline.part_start_s[2], 2e-3, 1e-12);
      EXPECT_NEAR(run.timeline.part_end_s[2], 2e-3 + a2a(dispatch), 1e-12);
    }
  }
}

TEST(AllToAll, InterNodeRailsClosedForm) {
  // ep 16 over 2 dgx-h100 nodes (dp 16, tp 1), NVLink latency 0. Each GPU sends D/16 to each of
  // 15 peers; to the 8 on the other node over PXN: every NIC carries the flows of its node's 8
  // GPUs to the other node's GPU on its rail, 8 flows of D/16 at 50/8 GB/s each, after the two
  // NICs' 2 x 2.5 us (the NVLink flows end sooner): 5 us + D / (2 x 50 GB/s).
  const PlatformSpec platform =
      PlatformOrDie(PresetChoice("dgx-h100", {"intra_node.latency=0"}, 2), 1, 16, 1);
  const int64_t dispatch = 100'000'000, combine = 200'000'000;
  auto a2a = [](int64_t bytes) { return 5e-6 + static_cast<double>(bytes) / 100e9; };
  for (bool fold : {true, false}) {
    for (EngineKind engine : kEngines) {
      SCOPED_TRACE(std::string(EngineName(engine)) + (fold ? " folded" : " every replica"));
      const OneRankRun run =
          RunOneRank(platform, engine, 16, 16, Layer(1, dispatch, combine), fold);
      const double forward = 4e-3 + a2a(dispatch) + a2a(combine);
      EXPECT_NEAR(run.timeline.end_s[0], forward, 1e-9);
      EXPECT_NEAR(run.timeline.end_s[1], forward + 7e-3 + 2 * a2a(combine), 1e-9);
      RunMetrics metrics = ComputeMetrics(OneRankOneMicrobatch(), OneStageCosts(4e-3, 7e-3),
                                          run.graph, run.timeline);
      // 4 all-to-alls per GPU, each 15 sends of D/16 or C/16; compiled GPUs: 1 or 16.
      const int64_t gpus = fold ? 1 : 16;
      EXPECT_EQ(metrics.num_alltoall_tasks, 4 * gpus);
      metrics.makespan_s = run.timeline.end_s[1];
      ComputeLinkMetrics(run.graph, platform, run.timeline, &metrics);
      EXPECT_EQ(metrics.alltoall_bytes, gpus * 15 * (dispatch + 3 * combine) / 16);
      // Of each GPU's sends, 7 of 15 stay in its node and 8 cross.
      EXPECT_EQ(metrics.intra_node.alltoall_bytes, gpus * 7 * (dispatch + 3 * combine) / 16);
      EXPECT_EQ(metrics.inter_node.alltoall_bytes, gpus * 8 * (dispatch + 3 * combine) / 16);
    }
  }
}

TEST(AllToAll, NodeLimitedRoutingClosedForm) {
  // ep 32 over 4 dgx-h100 nodes, NVLink latency 0. Node-limited, each GPU sends X to the GPU of
  // its index on each of the 3 other nodes (its own NIC carries its 3 flows: X / (50/3 GB/s)
  // after 2 x 2.5 us) beside Y = 4 x D/32 (the 4 nodes' tokens for its node's experts) to each of
  // the 7 GPUs of its node (7Y at 450 GB/s: less).
  const PlatformSpec platform =
      PlatformOrDie(PresetChoice("dgx-h100", {"intra_node.latency=0"}, 4), 1, 32, 1);
  MoeStage moe = Layer(1, 320'000'000, 640'000'000);
  moe.group_nodes = 4;
  moe.node_dispatch_bytes = 40'000'000;
  moe.node_combine_bytes = 80'000'000;
  auto a2a = [](int64_t node_bytes) { return 5e-6 + 3.0 * node_bytes / 50e9; };
  for (bool fold : {true, false}) {
    for (EngineKind engine : kEngines) {
      SCOPED_TRACE(std::string(EngineName(engine)) + (fold ? " folded" : " every replica"));
      const OneRankRun run = RunOneRank(platform, engine, 32, 32, moe, fold, true);
      const double forward = 4e-3 + a2a(40'000'000) + a2a(80'000'000);
      EXPECT_NEAR(run.timeline.end_s[0], forward, 1e-9);
      EXPECT_NEAR(run.timeline.end_s[1], forward + 7e-3 + 2 * a2a(80'000'000), 1e-9);
      RunMetrics metrics = ComputeMetrics(OneRankOneMicrobatch(), OneStageCosts(4e-3, 7e-3),
                                          run.graph, run.timeline);
      metrics.makespan_s = run.timeline.end_s[1];
      ComputeLinkMetrics(run.graph, platform, run.timeline, &metrics);
      const int64_t gpus = fold ? 1 : 32;
      EXPECT_EQ(metrics.intra_node.alltoall_bytes, gpus * 7 * (40'000'000 + 3 * 80'000'000));
      EXPECT_EQ(metrics.inter_node.alltoall_bytes, gpus * 3 * (40'000'000 + 3 * 80'000'000));
    }
  }
}

TEST(AllToAll, EightNodeGroupMergesSymmetricFlowsAndMeetsClosedForm) {
  // ep 64 over 8 dgx-h100 nodes (dp 64, tp 1), NVLink latency 0: DeepSeek-V3's expert-parallel
  // group. Each GPU sends D/64 to each of 63 peers; each NIC carries its rail's flows to the 7
  // other nodes: its own GPU's 7 and, over PXN, 7 from each of the 7 other GPUs of its node, 56
  // flows of D/64 at 50/56 GB/s each (and as many in), after 2 x 2.5 us: 5 us + (56/64) D /
  // 50 GB/s (NVLink carries 56 flows of D/64 per port at 450 GB/s: less).
  const PlatformSpec platform =
      PlatformOrDie(PresetChoice("dgx-h100", {"intra_node.latency=0"}, 8), 1, 64, 1);
  const int64_t dispatch = 64'000'000, combine = 128'000'000;
  auto a2a = [](int64_t bytes) { return 5e-6 + 56.0 / 64 * static_cast<double>(bytes) / 50e9; };
  for (bool fold : {true, false}) {
    for (EngineKind engine : kEngines) {
      SCOPED_TRACE(std::string(EngineName(engine)) + (fold ? " folded" : " every replica"));
      const OneRankRun run =
          RunOneRank(platform, engine, 64, 64, Layer(1, dispatch, combine), fold);
      const double forward = 4e-3 + a2a(dispatch) + a2a(combine);
      EXPECT_NEAR(run.timeline.end_s[0], forward, 1e-9);
      EXPECT_NEAR(run.timeline.end_s[1], forward + 7e-3 + 2 * a2a(combine), 1e-9);
      if (!fold || engine != EngineKind::kSimGrid) continue;
      // The folded GPU's 63 sends and 63 receives: in groups of 7 that move alike, each crossing
      // one link or 7 different ones at every hop. Sends: to its node's 7 GPUs (one port out, 7
      // ports in); to the GPU of its rail on each of 7 nodes (its NIC out, 7 NICs in); over PXN to
      // the GPUs of rail r (r = 1..7) on the 7 nodes (its port, GPU r's port in and NIC out, 7
      // NICs in). Receives alike: 2 + 7 groups.
      const std::vector<TaskGpus> flows = AllToAllFlows(run.graph, platform, run.graph.tasks[0]);
      ASSERT_EQ(flows.size(), 126u);
      const std::vector<AllToAllGroup> groups = MergedFlowsOfRank0(run, platform, flows);
      ASSERT_EQ(groups.size(), 18u);
      for (const AllToAllGroup& group : groups) {
        EXPECT_EQ(group.count, 7);
        EXPECT_EQ(group.members.size(), 7u);
      }
    }
  }
}

TEST(AllToAll, FlowsOfUnequalGroupsCrossLinksOfTheirOwnAndMeetTheClosedForm) {
  // ep 4 over 4 dgx-h100 nodes of one GPU, 2 nodes to a leaf (dp 4, tp 1). Each GPU sends D/4 to
  // each of 3 peers: to the other node of its leaf over its NIC and the peer's (2 x 2.5 us), to the
  // 2 nodes of the other leaf also up and down the leaves' uplinks (+ 2 x 0.5 us; 100 GB/s each,
  // 4 flows: 25 GB/s a flow). Each NIC carries 3 flows out and 3 in: 50/3 GB/s each, the
  // narrowest share. At their fair shares (the critical path; folded, the merged flows' links of
  // their own) every flow ends by 6 us + (D/4) / (50/3 GB/s) = 6 us + (3/4) D / 50 GB/s. With
  // every flow simulated, SimGrid's sharing keeps each NIC busy from the first flow's latency on
  // (5 us: the leaf's other node) until its 3 D/4 bytes have passed: 5 us + (3/4) D / 50 GB/s.
  const PlatformSpec platform = PlatformOrDie(
      PresetChoice("dgx-h100", {"gpus_per_node=1", "network.nodes_per_leaf=2"}, 4), 1, 4, 1);
  const int64_t dispatch = 40'000'000, combine = 80'000'000;
  for (bool fold : {true, false}) {
    for (EngineKind engine : kEngines) {
      SCOPED_TRACE(std::string(EngineName(engine)) + (fold ? " folded" : " every replica"));
      const double latency_s = !fold && engine == EngineKind::kSimGrid ? 5e-6 : 6e-6;
      auto a2a = [&](int64_t bytes) {
        return latency_s + 0.75 * static_cast<double>(bytes) / 50e9;
      };
      const OneRankRun run = RunOneRank(platform, engine, 4, 4, Layer(1, dispatch, combine), fold);
      const double forward = 4e-3 + a2a(dispatch) + a2a(combine);
      EXPECT_NEAR(run.timeline.end_s[0], forward, 1e-9);
      EXPECT_NEAR(run.timeline.end_s[1], forward + 7e-3 + 2 * a2a(combine), 1e-9);
      if (!fold || engine != EngineKind::kSimGrid) continue;
      // The folded GPU's sends: one to its leaf's other node, and the two to the other leaf's
      // nodes, which cross the same uplinks, as one flow of 2 (NICs in: different links). Its
      // receives alike. On its NIC out a flow of 1 meets a flow of 2 (and on its NIC in): each
      // crosses a link of its own there, with its members' fair shares (1 or 2 x 50/3 GB/s).
      const std::vector<TaskGpus> flows = AllToAllFlows(run.graph, platform, run.graph.tasks[0]);
      ASSERT_EQ(flows.size(), 6u);
      std::multiset<int32_t> counts;
      for (const AllToAllGroup& group : MergedFlowsOfRank0(run, platform, flows)) {
        counts.insert(group.count);
        const Route route = platform.RouteBetween(group.ends.src, group.ends.dst);
        const bool sends = group.ends.src == flows[0].src;
        // The NIC this GPU's flows share: out (first link) for sends, in (last) for receives.
        EXPECT_TRUE(group.distinct >> (sends ? 0 : route.num_links - 1) & 1);
      }
      EXPECT_EQ(counts, (std::multiset<int32_t>{1, 1, 2, 2}));
    }
  }
}

// The span of one OVERLAP_F_B pair (F of stage 0 beside B of stage 0) whose 4 all-to-alls each
// take t seconds, computed by hand from the Figure 4 order for compute parts fa, fm (forward)
// and bm, ba (backward, W included) and the rests (forward's first, backward's last):
//   t <= every part: F and B's compute back to back, the all-to-alls hidden;
//   t >= every part: each chunk waits for its all-to-alls: the communication stream is busy from
//   B combine (from 0) to F combine, back to back: 4t, and the pair ends after F's combine
//   unless the backward's rest after its attention ends later.
TEST(AllToAll, OverlappedPairHidesAllToAllsUntilTheyOutlastComputation) {
  const PlatformSpec platform = PlatformOrDie(PresetChoice("h100-node"), 1, 8, 1);
  for (EngineKind engine : kEngines) {
    SCOPED_TRACE(EngineName(engine));
    for (int64_t bytes : {int64_t{72'000'000}, int64_t{3'000'000'000}}) {
      // 7/8 x bytes at 450 GB/s: 0.14 ms (hidden) or 5.83 ms (longer than every part).
      const double t = 3e-6 + 7.0 / 8 * static_cast<double>(bytes) / 450e9;
      MoeStage moe = Layer(1, bytes, bytes);
      StageCosts costs = OneStageCosts(4e-3, 7e-3);
      costs.moe = {moe};
      costs.gradient_bytes = {0};
      Schedule s;
      s.num_ranks = 1;
      s.num_stages = 1;
      s.num_microbatches = 2;
      s.stage_to_rank = {RankIndex(0)};
      s.orders = {{Action::Single(OpOf(OpKind::kForward, 0, 0)),
                   Action::OverlapForwardBackward(OpOf(OpKind::kForward, 0, 1),
                                                  OpOf(OpKind::kBackward, 0, 0)),
                   Action::Single(OpOf(OpKind::kBackward, 0, 1))}};
      Parallelism parallelism{{.dp = 8, .tp = 1}, P2pMode::kEager};
      parallelism.layout.ep = 8;
      parallelism.fold_replicas = true;
      TaskGraph graph;
      ASSERT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
      Timeline timeline;
      ASSERT_TRUE(Execute(engine, graph, platform, &timeline).ok());
      const double pair = timeline.end_s[1] - timeline.start_s[1];
      // fa 1, fm 2, bm 4, ba 2 ms; rests 1 and 1 ms.
      if (bytes < 100'000'000) {
        EXPECT_NEAR(pair, 1e-3 + 1e-3 + 4e-3 + 2e-3 + 2e-3 + 1e-3, 1e-12);
      } else {
        // B combine 0..t; F rest and attention 0..2 ms; B MLP t..t+4 ms beside F dispatch t..2t;
        // F MLP 2t..2t+2 ms beside B dispatch 2t..3t; B attention 3t..3t+2 ms beside F combine
        // 3t..4t; B rest 3t+2..3t+3 ms: the pair ends with F's combine at 4t.
        EXPECT_NEAR(pair, 4 * t, 1e-9);
      }
    }
  }
}

TEST(AllToAll, DelayedWgradSplitsTheBackwardsWeightPartsOff) {
  // --delay-wgrad-compute, as Megatron-LM's TransformerLayerSchedulePlan.run
  // (megatron/core/models/common/model_chunk_schedule_plan.py at d98e8a64) orders a layer: compute
  // F attention | B MLP, B MLP's wgrad (mlp.backward_dw), F MLP | B attention, its wgrad
  // (pre_dispatch_computation.backward_dw); communication B combine | F dispatch, B dispatch |
  // F combine. The W parts are chunk 2 (kWeightChunk): no all-to-all waits for them. B's rest:
  // 7 - (1.5 + 3) - (0.5 + 1) = 1 ms.
  StageCosts costs = SplitCosts(2, Layer(1, 800, 800));
  costs.delay_wgrad = true;
  const Action pair =
      Action::OverlapForwardBackward(OpOf(OpKind::kForward, 0, 1), OpOf(OpKind::kBackward, 1, 0));
  EXPECT_EQ(
      Describe(ProgramOf(costs, pair, 8, 1)),
      (std::vector<std::string>{"0 F rest 0 1ms", "0 F attention 0 1ms", "1 B combine 0 100B",
                                "1 B mlp 0 3ms", "2 B mlp 0 1ms", "0 F dispatch 0 100B",
                                "0 F mlp 0 2ms", "1 B dispatch 0 100B", "1 B attention 0 1.5ms",
                                "2 B attention 0 0.5ms", "0 F combine 0 100B", "1 B rest 0 1ms"}));
  // A backward alone (warm-up and cool-down steps run the same layer plan without a forward).
  EXPECT_EQ(Describe(ProgramOf(costs, Action::Single(OpOf(OpKind::kBackward, 0)), 8, 1)),
            (std::vector<std::string>{"0 B combine 0 100B", "0 B mlp 0 3ms", "2 B mlp 0 1ms",
                                      "0 B dispatch 0 100B", "0 B attention 0 1.5ms",
                                      "2 B attention 0 0.5ms", "0 B rest 0 1ms"}));
  // I alone keeps its program (no W in it).
  StageCosts plain = SplitCosts(1, Layer(1, 800, 800));
  EXPECT_EQ(Describe(ProgramOf(costs, Action::Single(OpOf(OpKind::kBackwardInput, 0)), 8, 1)),
            Describe(ProgramOf(plain, Action::Single(OpOf(OpKind::kBackwardInput, 0)), 8, 1)));
}

TEST(AllToAll, DelayedWgradHidesTheBackwardsDispatchUnderTheMlpWeightGradient) {
  // One rank, ep 8 on an h100-node: F0, (F1;B0) pair, B1, as Megatron without pipelining. Each
  // all-to-all takes t = 3 us + 7/8 x bytes / 450 GB/s. F 4 ms (rest 1, attention 1, MLP 2),
  // B 7 ms (combine, MLP I 3, W 1, dispatch, attention I 1.5, W 0.5, rest 1).
  const PlatformSpec platform = PlatformOrDie(PresetChoice("h100-node"), 1, 8, 1);
  for (EngineKind engine : kEngines) {
    SCOPED_TRACE(EngineName(engine));
    for (int64_t bytes : {int64_t{72'000'000}, int64_t{3'000'000'000}}) {
      const double t = 3e-6 + 7.0 / 8 * static_cast<double>(bytes) / 450e9;
      for (bool delay : {false, true}) {
        SCOPED_TRACE(delay ? "delayed wgrad" : "wgrad in the backward");
        StageCosts costs = OneStageCosts(4e-3, 7e-3);
        costs.moe = {Layer(1, bytes, bytes)};
        costs.gradient_bytes = {0};
        costs.delay_wgrad = delay;
        ScheduleParams params{1, 0, 2, 0};
        params.moe_a2a_overlap = true;
        Schedule s;
        ASSERT_TRUE(GenerateSchedule("1F1B", params, &s).ok());
        Parallelism parallelism{{.dp = 8, .tp = 1}, P2pMode::kEager};
        parallelism.layout.ep = 8;
        parallelism.fold_replicas = true;
        TaskGraph graph;
        ASSERT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
        Timeline timeline;
        ASSERT_TRUE(Execute(engine, graph, platform, &timeline).ok());
        // Tasks in order: F0, the pair, B1.
        const double pair = timeline.end_s[1] - timeline.start_s[1];
        const double last = timeline.end_s[2] - timeline.start_s[2];
        if (bytes < 100'000'000) {
          // t = 0.143 ms hides under every compute part: the pair is its compute, 11 ms.
          EXPECT_NEAR(pair, 11e-3, 1e-12);
          // B alone: combine t, MLP 4 ms (I + W), dispatch t, attention 2 ms, rest 1: 2t + 7 ms;
          // delayed, the dispatch runs beside MLP's 1 ms W: t + 3 + max(t, 1) + 1.5 + 0.5 + 1.
          EXPECT_NEAR(last, delay ? t + 7e-3 : 2 * t + 7e-3, 1e-9);
        } else {
          // t = 5.83 ms outlasts every part: the pair ends with F's combine at 4t either way
          // (B combine, F dispatch, B dispatch, F combine back to back on the one stream).
          EXPECT_NEAR(pair, 4 * t, 1e-9);
          // B alone: 2t + 7 ms; delayed, MLP's W (1 ms) hides under the dispatch: 2t + 6 ms.
          EXPECT_NEAR(last, delay ? 2 * t + 6e-3 : 2 * t + 7e-3, 1e-9);
        }
      }
    }
  }
}

TEST(AllToAll, ExpertGradientsReduceOverTheExpertDataParallelGroup) {
  // dp 8 on an h100-node, ep 4: the dense gradients' ring over the 8 replicas (14 steps of D/8),
  // then the experts' over the 2 GPUs holding the same experts, replicas r and r + 4 (2 steps of
  // X/2), each step 3 us + its bytes at 450 GB/s, after F (4 ms) and B (7 ms).
  const PlatformSpec platform = PlatformOrDie(PresetChoice("h100-node"), 1, 8, 1);
  const int64_t dense = 800'000'000, experts = 900'000'000;
  StageCosts costs = OneStageCosts(4e-3, 7e-3);
  costs.gradient_bytes = {dense + experts};
  costs.expert_gradient_bytes = {experts};
  for (bool fold : {true, false}) {
    Parallelism parallelism{{.dp = 8, .tp = 1}, P2pMode::kEager};
    parallelism.layout.ep = 4;
    parallelism.fold_replicas = fold;
    TaskGraph graph;
    ASSERT_TRUE(CompileTaskGraph(OneRankOneMicrobatch(), costs, parallelism, &graph).ok());
    for (EngineKind engine : kEngines) {
      SCOPED_TRACE(std::string(EngineName(engine)) + (fold ? " folded" : " every replica"));
      Timeline timeline;
      ASSERT_TRUE(Execute(engine, graph, platform, &timeline).ok());
      double makespan = 0;
      for (double end : timeline.end_s) makespan = std::max(makespan, end);
      EXPECT_NEAR(makespan, 11e-3 + 14 * (3e-6 + 100e6 / 450e9) + 2 * (3e-6 + 450e6 / 450e9), 1e-9);
    }
  }
}

// A pipeline of 4 ranks, each 16 GPUs on 2 dgx-h100 nodes (dp 16, ep 16), every stage one MoE
// layer whose 4 all-to-alls each take t = 5 us + D / (2 x NIC bandwidth) (InterNodeRailsClosedForm;
// NVLink latency 0), D = 20 MB: 0.205 ms at 400 Gb/s, 0.805 ms at 100 Gb/s, 6.005 ms at
// 13.333 Gb/s. Boundary messages are empty.
struct PipelineRun {
  Schedule schedule;
  TaskGraph graph;
  Timeline timeline;
  double makespan_s = 0;
  double Busy(int32_t rank) const {
    double busy = 0;
    for (TaskId t = graph.compute_begin[rank]; t < graph.compute_begin[rank + 1]; ++t) {
      busy += timeline.end_s[t] - timeline.start_s[t];
    }
    return busy;
  }
};
PipelineRun RunPipeline(const std::string& name, const std::string& nic, EngineKind engine,
                        int32_t ranks = 4, int32_t microbatches = 32) {
  PipelineRun run;
  ScheduleParams params;
  params.num_ranks = ranks;
  params.num_microbatches = microbatches;
  EXPECT_TRUE(GenerateSchedule(name, params, &run.schedule).ok());
  const StageCosts costs = SplitCosts(run.schedule.num_stages, Layer(1, 20'000'000, 20'000'000));
  Parallelism parallelism{{.dp = 16, .tp = 1}, P2pMode::kEager};
  parallelism.layout.ep = 16;
  parallelism.fold_replicas = true;
  EXPECT_TRUE(CompileTaskGraph(run.schedule, costs, parallelism, &run.graph).ok());
  const PlatformSpec platform = PlatformOrDie(
      PresetChoice("dgx-h100", {"intra_node.latency=0", "nic.bandwidth=" + nic}, 2 * ranks), ranks,
      16, 1);
  EXPECT_TRUE(Execute(engine, run.graph, platform, &run.timeline).ok());
  for (double end : run.timeline.end_s) run.makespan_s = std::max(run.makespan_s, end);
  return run;
}

// What a rank's actions take, by hand, with all-to-alls of t: F 4 ms + 2t, B 7 ms + 2t, I 5 ms +
// 2t, W 2 ms, and a pair max(11 ms, ...) as
// OverlappedPairHidesAllToAllsUntilTheyOutlastComputation: 11 ms while t is under every part (1
// ms), 4t once it is over every part (4 ms).
double ExpectedBusy(const Schedule& schedule, int32_t rank, double t) {
  double busy = 0;
  for (const Action& action : schedule.orders[rank]) {
    if (action.is_overlap()) {
      busy += t < 1e-3 ? 11e-3 : 4 * t;
      continue;
    }
    switch (action.op(0).kind) {
      case OpKind::kForward:
        busy += 4e-3 + 2 * t;
        break;
      case OpKind::kBackward:
        busy += 7e-3 + 2 * t;
        break;
      case OpKind::kBackwardInput:
        busy += 5e-3 + 2 * t;
        break;
      case OpKind::kBackwardWeight:
        busy += 2e-3;
        break;
    }
  }
  return busy;
}

TEST(AllToAll, SlowerNicHurts1F1BMoreThanDualPipeV) {
  const double fast = 5e-6 + 20e6 / 100e9;              // 400 Gb/s
  const double slow = 5e-6 + 20e6 / 25e9;               // 100 Gb/s: still under every compute part
  const double slower = 5e-6 + 20e6 / 3.33333333333e9;  // 13.33 Gb/s: over every part
  for (EngineKind engine : kEngines) {
    SCOPED_TRACE(EngineName(engine));
    const PipelineRun one_fast = RunPipeline("1F1B", "400Gbps", engine);
    const PipelineRun one_slow = RunPipeline("1F1B", "100Gbps", engine);
    // 1F1B: (m + p - 1) F + B on the critical path, 4 exposed all-to-alls each.
    EXPECT_NEAR(one_slow.makespan_s - one_fast.makespan_s, (32 + 4 - 1) * 4 * (slow - fast), 1e-9);
    const PipelineRun v_fast = RunPipeline("DualPipeV", "400Gbps", engine);
    const PipelineRun v_slow = RunPipeline("DualPipeV", "100Gbps", engine);
    const PipelineRun v_slower = RunPipeline("DualPipeV", "13.3333333333Gbps", engine);
    for (int32_t rank = 0; rank < 4; ++rank) {
      EXPECT_NEAR(one_slow.Busy(rank), ExpectedBusy(one_slow.schedule, rank, slow), 1e-9);
      EXPECT_NEAR(v_fast.Busy(rank), ExpectedBusy(v_fast.schedule, rank, fast), 1e-9);
      EXPECT_NEAR(v_slow.Busy(rank), ExpectedBusy(v_slow.schedule, rank, slow), 1e-9);
      EXPECT_NEAR(v_slower.Busy(rank), ExpectedBusy(v_slower.schedule, rank, slower), 1e-9);
    }
    const double one_loss = one_slow.makespan_s - one_fast.makespan_s;
    const double v_loss = v_slow.makespan_s - v_fast.makespan_s;
    // DualPipeV hides the all-to-alls of its pairs: only its unpaired warm-up and cool-down ops
    // lose time (25 ms of 1F1B's 84 ms here).
    EXPECT_LT(v_loss, one_loss / 3);
    // Past the compute parts every pair lasts 4t: DualPipeV's iteration grows with t.
    EXPECT_GT(v_slower.makespan_s - v_slow.makespan_s, 4 * (slower - slow) * 8);
  }
}

TEST(AllToAll, DualPipeRunsAsWithTheHandComputedOverlap) {
  // DualPipe's all-to-alls simulated part by part give the iteration that the same schedule gives
  // with each op's hand-computed span as its duration: F = 4 ms + 2t, B = 7 ms + 2t, I = 5 ms +
  // 2t, W = 2 ms, and F&B (--overlap) 11 ms with t hidden, or 4t once t outlasts every part.
  for (EngineKind engine : kEngines) {
    SCOPED_TRACE(EngineName(engine));
    for (const char* nic : {"400Gbps", "13.3333333333Gbps"}) {
      const double t = 5e-6 + 20e6 / (nic[0] == '4' ? 100e9 : 3.33333333333e9);
      const PipelineRun run = RunPipeline("DualPipe", nic, engine, 8, 20);
      StageCosts spans = SplitCosts(run.schedule.num_stages, MoeStage());
      spans.moe.clear();
      spans.forward_s.assign(spans.forward_s.size(), 4e-3 + 2 * t);
      spans.backward_input_s.assign(spans.forward_s.size(), 5e-3 + 2 * t);
      spans.backward_s.assign(spans.forward_s.size(), 7e-3 + 2 * t);
      spans.overlap_s.assign(spans.forward_s.size(), t < 1e-3 ? 11e-3 : 4 * t);
      TaskGraph graph;
      ASSERT_TRUE(CompileTaskGraph(run.schedule, spans, Parallelism(), &graph).ok());
      Timeline timeline;
      // The empty boundary messages take the 5 us of two NICs, as on the ideal platform.
      ASSERT_TRUE(
          Execute(EngineKind::kCriticalPath, graph, IdealPlatform(8, 5e-6), &timeline).ok());
      double makespan = 0;
      for (double end : timeline.end_s) makespan = std::max(makespan, end);
      EXPECT_NEAR(run.makespan_s, makespan, 1e-9) << nic;
    }
  }
}

}  // namespace
}  // namespace ppsim
