// Transfers through SimGrid on cluster platforms: each expected time is a closed form from the
// links' latencies and bandwidths (one transfer: latency + bytes / bandwidth; n transfers sharing a
// link: each at bandwidth / n).
#include <gtest/gtest.h>

#include "schedules/registry.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "tests/support/platforms.h"
#include "tests/support/runs.h"
#include "tests/support/costs.h"

namespace ppsim {
namespace {

struct Flow {
  int32_t src_gpu;
  int32_t dst_gpu;
  int64_t bytes;
};

// Every flow starts at time 0; returns when each ends. Rank r is GPU r (contiguous placement of
// one rank per GPU, every GPU a rank).
std::vector<double> FlowEnds(const PlatformChoice& choice, const std::vector<Flow>& flows,
                             RunMetrics* metrics = nullptr) {
  PlatformSpec platform;
  {
    PlatformSpec cluster;
    EXPECT_TRUE(LoadCluster(choice, FlagLocator(), &cluster).ok());
    // `ideal` has as many GPUs as the run needs: the flows' GPUs.
    int32_t gpus = cluster.num_gpus();
    for (const Flow& flow : flows) gpus = std::max({gpus, flow.src_gpu + 1, flow.dst_gpu + 1});
    platform = PlatformOrDie(choice, gpus);
  }
  TaskGraph graph;
  graph.compute_begin.assign(static_cast<size_t>(platform.layout.pp) + 1, 0);
  for (const Flow& flow : flows) {
    Task task;
    task.kind = TaskKind::kTransfer;
    task.rank = flow.src_gpu;
    task.peer = flow.dst_gpu;
    task.bytes = flow.bytes;
    graph.tasks.push_back(task);
  }
  const TaskId n = static_cast<TaskId>(flows.size());
  graph.num_predecessors.assign(n, 0);
  for (TaskId t = 0; t < n; ++t) graph.topological_order.push_back(t);
  const std::vector<std::pair<TaskId, TaskId>> no_edges;
  graph.dag = TaskDag(boost::edges_are_unsorted_multi_pass, no_edges.begin(), no_edges.end(), n);
  Timeline timeline;
  const Status status = RunSimGrid(graph, platform, &timeline);
  EXPECT_TRUE(status.ok()) << status.message();
  if (metrics != nullptr) {
    metrics->makespan_s = *std::max_element(timeline.end_s.begin(), timeline.end_s.end());
    ComputeLinkMetrics(graph, platform, timeline, metrics);
  }
  return timeline.end_s;
}

constexpr double kTolerance = 1e-12;

TEST(Network, OneTransferTakesLatencyPlusBytesOverBandwidth) {
  const PlatformChoice dgx = PresetChoice("dgx-h100", {}, 2);
  const std::vector<double> ends =
      FlowEnds(dgx, {{0, 1, 450'000'000}, {2, 10, 1'000'000'000}, {3, 12, 1'000'000'000}});
  EXPECT_NEAR(ends[0], 3e-6 + 1e-3, kTolerance);   // NVSwitch: 2 ports of 1.5 us, 450 GB/s
  EXPECT_NEAR(ends[1], 5e-6 + 0.02, kTolerance);   // same rail: 2 NICs of 2.5 us, 50 GB/s
  EXPECT_NEAR(ends[2], 8e-6 + 0.02, kTolerance);   // across rails, PXN: + GPU 3 to 4 over NVSwitch
  const std::vector<double> ideal = FlowEnds(IdealChoice(7e-6, 100e9), {{0, 1, 1'000'000'000}});
  EXPECT_NEAR(ideal[0], 7e-6 + 0.01, kTolerance);
}

TEST(Network, TwoTransfersThroughOneSharedNicTakeTwiceAsLong) {
  // One NIC per node: GPU 0 -> 8 and GPU 1 -> 9 share node 0's NIC out and node 1's NIC in.
  const PlatformChoice shared = PresetChoice(
      "dgx-h100", {"nic.attachment=PER_NODE", "network.topology=SINGLE_SWITCH"}, 2);
  RunMetrics m;
  const std::vector<double> ends =
      FlowEnds(shared, {{0, 8, 1'000'000'000}, {1, 9, 1'000'000'000}}, &m);
  EXPECT_NEAR(ends[0], 5e-6 + 2 * 0.02, kTolerance);
  EXPECT_NEAR(ends[1], 5e-6 + 2 * 0.02, kTolerance);
  // The NIC carried both: 2 GB, busy the whole time, at full capacity after the latency.
  ASSERT_EQ(m.links.size(), 2u);
  EXPECT_EQ(m.links[0].name, "node0.nic0.tx");
  EXPECT_EQ(m.links[0].transfers, 2u);
  EXPECT_EQ(m.links[0].bytes, 2'000'000'000);
  EXPECT_NEAR(m.links[0].busy_s, 5e-6 + 0.04, kTolerance);
  EXPECT_NEAR(m.links[0].utilization, 2e9 / (50e9 * (5e-6 + 0.04)), kTolerance);
  EXPECT_EQ(m.links[1].name, "node1.nic0.rx");
  EXPECT_EQ(m.inter_node.transfers, 2u);
  EXPECT_EQ(m.inter_node.bytes, 2'000'000'000);
  EXPECT_EQ(m.intra_node.transfers, 0u);
  // A NIC per GPU (the preset's rails): the same two transfers do not meet.
  const std::vector<double> rails =
      FlowEnds(PresetChoice("dgx-h100", {}, 2), {{0, 8, 1'000'000'000}, {1, 9, 1'000'000'000}});
  EXPECT_NEAR(rails[0], 5e-6 + 0.02, kTolerance);
  EXPECT_NEAR(rails[1], 5e-6 + 0.02, kTolerance);
}

TEST(Network, NvlinkPairsInARingDoNotInterfere) {
  std::vector<Flow> ring;
  for (int32_t g = 0; g < 8; ++g) ring.push_back({g, (g + 1) % 8, 450'000'000});
  for (double end : FlowEnds(PresetChoice("h100-node"), ring)) {
    EXPECT_NEAR(end, 3e-6 + 1e-3, kTolerance);
  }
  // One GPU sending to two others shares its port: each at half the bandwidth.
  for (double end :
       FlowEnds(PresetChoice("h100-node"), {{0, 1, 450'000'000}, {0, 2, 450'000'000}})) {
    EXPECT_NEAR(end, 3e-6 + 2e-3, kTolerance);
  }
}

TEST(Network, OversubscribedUplinksSlowTrafficBetweenLeaves) {
  // 2 nodes per leaf, one 25 GB/s NIC each, 2:1: the uplink carries 25 GB/s. Both NICs of leaf 0
  // send to leaf 1 at once and share it.
  const PlatformChoice choice = PresetChoice(
      "pcie-l40s", {"network.topology=FAT_TREE", "network.nodes_per_leaf=2",
                    "network.oversubscription=2", "intra_node.bandwidth=inf"},
      4);
  const std::vector<double> ends =
      FlowEnds(choice, {{0, 16, 1'000'000'000}, {8, 24, 1'000'000'000}});
  // PCIe ports (1 us each way, infinite here), 2 NICs (2.5 us), 2 uplinks (no latency set).
  EXPECT_NEAR(ends[0], 7e-6 + 2 * 0.04, kTolerance);
  EXPECT_NEAR(ends[1], 7e-6 + 2 * 0.04, kTolerance);
}

TEST(Network, SharedLinksSplitBandwidthInInverseProportionToRouteLatency) {
  // SimGrid's CM02 weights each flow on a bottleneck by its route's latency. On pcie-l40s, GPU 0
  // sends 1 GB to GPU 1 (route latency 2 us) and 1 GB to GPU 8 on the next node (7 us); both
  // leave through GPU 0's 31.5 GB/s PCIe port, which gives them 7/9 and 2/9 of it: 24.5 and
  // 7 GB/s. The first ends after ~1 GB / 24.5 GB/s; the second then runs at its NIC's 25 GB/s.
  const std::vector<double> ends = FlowEnds(PresetChoice("pcie-l40s", {}, 2),
                                            {{0, 1, 1'000'000'000}, {0, 8, 1'000'000'000}});
  const double first = 1e9 / 24.5e9;
  EXPECT_NEAR(ends[0], first, 1e-4 * first);
  const double second = first + (1e9 - 7e9 * first) / 25e9;
  EXPECT_NEAR(ends[1], second, 1e-4 * second);
}

// GPipe with one microbatch on 2 ranks: F, transfer, F, B, transfer back, B.
proto::RunConfig TwoRanks(const std::string& placement, const std::string& message) {
  proto::RunConfig spec = IdealRun("GPipe", 2, 1, "1ms", "2ms", EngineKind::kSimGrid);
  spec.set_platform("dgx-h100");
  spec.set_nodes(2);
  spec.set_placement(placement);
  spec.set_message_bytes(message);
  return spec;
}

TEST(Network, RanksSplitOverTwoNodesAreSlowerByWhatInfinibandPredicts) {
  for (EngineKind engine : kBothEngines) {
    proto::RunConfig one_node = TwoRanks("0,1", "1GB");
    proto::RunConfig two_nodes = TwoRanks("0,8", "1GB");
    SetEngine(&one_node, engine);
    SetEngine(&two_nodes, engine);
    const double t1 = RunOk(one_node).metrics.makespan_s;
    const double t2 = RunOk(two_nodes).metrics.makespan_s;
    // Two 1 GB messages (activation, gradient) over NVSwitch or over the rail's NICs.
    const double nvlink = 3e-6 + 1e9 / 450e9;
    const double infiniband = 5e-6 + 1e9 / 50e9;
    EXPECT_NEAR(t1, 2 * 1e-3 + 2 * 2e-3 + 2 * nvlink, kTolerance);
    EXPECT_NEAR(t2 - t1, 2 * (infiniband - nvlink), kTolerance);
  }
}

TEST(Network, TensorParallelGroupsSplitAMessageOverTheirGpus) {
  // tp 2: ranks on GPUs {0, 1} and {2, 3}; each half of 900 MB goes through its own ports.
  proto::RunConfig spec = IdealRun("GPipe", 2, 1, "0", "0", EngineKind::kSimGrid);
  spec.set_platform("h100-node");
  spec.set_tp(2);
  spec.set_message_bytes("900MB");
  for (EngineKind engine : kBothEngines) {
    SetEngine(&spec, engine);
    const RunResult r = RunOk(spec);
    EXPECT_NEAR(r.metrics.makespan_s, 2 * (3e-6 + 1e-3), kTolerance);
    EXPECT_EQ(r.metrics.num_transfer_tasks, 4u);
    EXPECT_EQ(r.metrics.intra_node.bytes, 1'800'000'000);
  }
}

// The platform fields of a request.
proto::RunConfig PlatformRun(const std::string& name) {
  proto::RunConfig config;
  config.set_platform(name);
  return config;
}
proto::RunConfig IdealPlatformRun(double latency_s, double bandwidth_bytes_per_s) {
  proto::RunConfig config = PlatformRun("ideal");
  config.set_p2p_latency(ExactText(latency_s));
  config.set_p2p_bandwidth(ExactText(bandwidth_bytes_per_s));
  return config;
}

// Zero compute, one rank, dp replicas: the iteration is the all-reduce of `bytes` gradients.
proto::RunConfig AllReduceOnly(proto::RunConfig platform, int32_t dp, int32_t tp,
                               const std::string& bytes) {
  proto::RunConfig spec = IdealRun("GPipe", 1, 1, "0", "0", EngineKind::kSimGrid);
  spec.MergeFrom(platform);
  spec.set_dp(dp);
  spec.set_tp(tp);
  spec.set_grad_bytes(bytes);
  return spec;
}

// 2(N - 1) latency + 2(N - 1)/N x S / bandwidth.
double RingAllReduce(int32_t n, double latency_s, double bytes, double bandwidth) {
  return 2 * (n - 1) * latency_s + 2.0 * (n - 1) / n * bytes / bandwidth;
}

TEST(Network, RingAllReduceTakesTheClosedForm) {
  for (EngineKind engine : kBothEngines) {
    SCOPED_TRACE(std::string(EngineName(engine)));
    proto::RunConfig ideal = AllReduceOnly(IdealPlatformRun(4e-6, 100e9), 5, 1, "1GB");
    SetEngine(&ideal, engine);
    RunResult r = RunOk(ideal);
    // NCCL's ring starts after its fixed latency: baseLat of Simple, 8.4 us.
    EXPECT_NEAR(r.metrics.makespan_s, 8.4e-6 + RingAllReduce(5, 4e-6, 1e9, 100e9), kTolerance);
    // Replica 0 stands for all (--replicas one, the default): its member's 2 x 4 steps of 1/5.
    EXPECT_EQ(r.metrics.num_allreduce_tasks, 2u * 4);
    EXPECT_EQ(r.metrics.allreduce_bytes, 2 * 4 * 1'000'000'000LL / 5);
    ideal.set_replicas("all");
    r = RunOk(ideal);
    EXPECT_NEAR(r.metrics.makespan_s, 8.4e-6 + RingAllReduce(5, 4e-6, 1e9, 100e9), kTolerance);
    EXPECT_EQ(r.metrics.num_allreduce_tasks, 2u * 4 * 5);
    EXPECT_EQ(r.metrics.allreduce_bytes, 2 * 4 * 1'000'000'000LL);
    {
      // Each member's steps are one chain over one route: one transfer of the DAG (Task::steps =
      // 8) whose timer holds 7 of the 8 latencies; the makespans above are the closed form.
      PreparedRun prepared;
      ASSERT_TRUE(PrepareRun(SpecOf(ideal), &prepared).ok());
      int32_t members = 0;
      for (const Task& task : prepared.graph.tasks) {
        if (task.kind != TaskKind::kAllReduce) continue;
        ++members;
        EXPECT_EQ(task.steps, 8);
        EXPECT_EQ(task.bytes, 8 * 1'000'000'000LL / 5);
      }
      EXPECT_EQ(members, 5);
    }
    // A ring over the 8 NVSwitch ports of a node: each step every port sends one chunk and
    // receives one, so nothing contends.
    proto::RunConfig node = AllReduceOnly(PlatformRun("h100-node"), 8, 1, "8GB");
    node.set_collective_algorithm("ring");  // NCCL would take NVLS here
    SetEngine(&node, engine);
    r = RunOk(node);
    EXPECT_NEAR(r.metrics.makespan_s, 8.4e-6 + RingAllReduce(8, 3e-6, 8e9, 450e9), kTolerance);
    // tp 2: two rings of 4 GPUs side by side, one per tensor-parallel shard.
    proto::RunConfig shards = AllReduceOnly(PlatformRun("h100-node"), 4, 2, "4GB");
    shards.set_collective_algorithm("ring");
    SetEngine(&shards, engine);
    r = RunOk(shards);
    EXPECT_NEAR(r.metrics.makespan_s, 8.4e-6 + RingAllReduce(4, 3e-6, 4e9, 450e9), kTolerance);
  }
}

TEST(Network, DataParallelReplicasShareTheFabric) {
  // Rank 0 of both replicas on node 0 (GPUs 0, 1), rank 1 on node 1 (GPUs 8, 9): the replicas'
  // boundary messages cross at the same time. With one NIC per node they share it.
  Schedule schedule;
  ASSERT_TRUE(GenerateSchedule("GPipe", ScheduleParams{2, 1, 1}, &schedule).ok());
  StageCosts costs;
  ASSERT_TRUE(BuildCosts({{"f", "0"}, {"b", "0"}, {"message_bytes", "1GB"}}, 2, &costs).ok());
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(schedule, costs, Parallelism{{.dp = 2, .tp = 1}}, &graph).ok());
  for (const bool shared : {true, false}) {
    PlatformChoice choice =
        shared ? PresetChoice("dgx-h100",
                              {"nic.attachment=PER_NODE", "network.topology=SINGLE_SWITCH"}, 2)
               : PresetChoice("dgx-h100", {}, 2);
    ASSERT_TRUE(ParsePlacement("--placement", "0,1,8,9", &choice.placement).ok());
    const PlatformSpec platform = PlatformOrDie(choice, 2, 2, 1);
    Timeline timeline;
    ASSERT_TRUE(RunSimGrid(graph, platform, &timeline).ok());
    const RunMetrics m = ComputeMetrics(schedule, costs, graph, timeline);
    EXPECT_NEAR(m.makespan_s, 2 * (5e-6 + (shared ? 2 : 1) * 0.02), kTolerance);
  }
}

}  // namespace
}  // namespace ppsim
