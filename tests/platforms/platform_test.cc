// Clusters as descriptions: presets, routes, link bandwidths and the placement of ranks. No
// SimGrid here; tests/sim/network_test.cc runs transfers over these platforms.
#include "platforms/platform.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "platforms/cluster.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

Status Build(const PlatformChoice& choice, int32_t ranks, int32_t dp, int32_t tp,
             PlatformSpec* platform) {
  return BuildPlatform(choice, {.pp = ranks, .dp = dp, .tp = tp}, FlagLocator(), platform);
}

std::vector<std::string> LinkNames(const PlatformSpec& p, int32_t src, int32_t dst) {
  std::vector<std::string> names;
  const Route route = p.RouteBetween(src, dst);
  for (int i = 0; i < route.num_links; ++i) names.push_back(p.Link(route.links[i]).name);
  return names;
}

TEST(Platform, IdealHasAsManyGpusAsTheRunNeedsOnOneFatPipe) {
  PlatformSpec p = IdealPlatform(64);
  EXPECT_EQ(p.num_gpus(), 64);
  EXPECT_EQ(p.UncontendedTransferTime(0, 1, 1'000'000'000), 0.0);
  p = IdealPlatform(4, 5e-6, 50e9);
  EXPECT_DOUBLE_EQ(p.UncontendedTransferTime(3, 2, 1'000'000'000), 5e-6 + 0.02);
  EXPECT_EQ(LinkNames(p, 3, 2), std::vector<std::string>{"fabric"});
  EXPECT_TRUE(p.Link(0).fatpipe);
  // dp and tp multiply the GPUs.
  ASSERT_TRUE(Build(IdealChoice(), 4, 2, 2, &p).ok());
  EXPECT_EQ(p.num_gpus(), 16);
}

TEST(Platform, H100NodeRoutesCrossTwoNvlinkPorts) {
  const PlatformSpec p = PlatformOrDie(PresetChoice("h100-node"), 8);
  EXPECT_EQ(p.num_gpus(), 8);
  EXPECT_EQ(LinkNames(p, 0, 7),
            (std::vector<std::string>{"node0.gpu0.nvlink.tx", "node0.gpu7.nvlink.rx"}));
  EXPECT_DOUBLE_EQ(p.RouteLatency(0, 7), 3e-6);
  EXPECT_EQ(p.RouteBandwidth(0, 7), 450e9);
  EXPECT_EQ(p.gpu.dense_bf16_flops_per_s, 989e12);
  EXPECT_EQ(p.gpu.memory_bytes, 80LL << 30);
}

TEST(Platform, SplicedRouteTakesTheSendingHalfAndTheReceivingHalf) {
  const PlatformSpec p = PlatformOrDie(PresetChoice("dgx-h100", {}, 4), 32);
  auto names = [&](const Route& route) {
    std::vector<std::string> out;
    for (int i = 0; i < route.num_links; ++i) out.push_back(p.Link(route.links[i]).name);
    return out;
  };
  // Out of GPU 3 towards node 1's GPU 0 (PXN: over NVSwitch to GPU 0, out of NIC 0), into GPU 3
  // from node 3's GPU 3 (rail 3's leaf): node 0's NIC 3 in.
  EXPECT_EQ(names(p.SplicedRoute(3, 8, 27, 3)),
            (std::vector<std::string>{"node0.gpu3.nvlink.tx", "node0.gpu0.nvlink.rx",
                                      "node0.nic0.tx", "node0.nic3.rx"}));
  // Across scalable units (32 nodes per leaf): out through rail 3's uplink, in through its downlink.
  const PlatformSpec two_units = PlatformOrDie(PresetChoice("dgx-h100", {}, 33), 16);
  EXPECT_EQ(LinkNames(two_units, 3, 32 * 8 + 3),
            (std::vector<std::string>{"node0.nic3.tx", "leaf3.up", "leaf11.down",
                                      "node32.nic3.rx"}));
  std::vector<std::string> spliced;
  const Route route = two_units.SplicedRoute(3, 32 * 8 + 3, 32 * 8 + 3, 3);
  for (int i = 0; i < route.num_links; ++i) spliced.push_back(two_units.Link(route.links[i]).name);
  EXPECT_EQ(spliced, (std::vector<std::string>{"node0.nic3.tx", "leaf3.up", "leaf3.down",
                                               "node0.nic3.rx"}));
  // Inside a node: GPU 0's port out (to GPU 1), GPU 0's port in (from GPU 7).
  EXPECT_EQ(names(p.SplicedRoute(0, 1, 7, 0)),
            (std::vector<std::string>{"node0.gpu0.nvlink.tx", "node0.gpu0.nvlink.rx"}));
  // The ideal fabric is one link: once.
  const PlatformSpec ideal = IdealPlatform(4, 1e-6, 1e9);
  EXPECT_EQ(ideal.SplicedRoute(0, 1, 3, 0).num_links, 1);
  EXPECT_DOUBLE_EQ(ideal.UncontendedTransferTime(ideal.SplicedRoute(0, 1, 3, 0), 1000), 2e-6);
}

TEST(Platform, RailOptimizedRoutesUseTheRailLeafPxnOrTheSpine) {
  const PlatformSpec p = PlatformOrDie(PresetChoice("dgx-h100", {}, 2), 16);
  // Same rail (GPU 3 of both nodes): NIC to NIC through the rail's leaf, 2 x 2.5 us, 400 Gb/s.
  EXPECT_EQ(LinkNames(p, 3, 11), (std::vector<std::string>{"node0.nic3.tx", "node1.nic3.rx"}));
  EXPECT_DOUBLE_EQ(p.RouteLatency(3, 11), 5e-6);
  EXPECT_EQ(p.RouteBandwidth(3, 11), 50e9);
  // Across rails, PXN as NCCL does it: over NVSwitch to GPU 0 (2 x 1.5 us), out of its NIC on
  // rail 0, through rail 0's leaf.
  EXPECT_TRUE(p.Pxn());
  EXPECT_EQ(LinkNames(p, 3, 8), (std::vector<std::string>{"node0.gpu3.nvlink.tx",
                                                           "node0.gpu0.nvlink.rx",
                                                           "node0.nic0.tx", "node1.nic0.rx"}));
  EXPECT_DOUBLE_EQ(p.RouteLatency(3, 8), 8e-6);
  // Between scalable units a rail's traffic goes up its leaf to the spine: a rail leaf has 32
  // nodes' NICs below it and is non-blocking, 32 x 50 GB/s up.
  const PlatformSpec units = PlatformOrDie(PresetChoice("dgx-h100", {}, 33), 16);
  EXPECT_EQ(units.Link(units.RouteBetween(3, 32 * 8 + 3).links[1]).bandwidth_bytes_per_s,
            32 * 50e9);
  EXPECT_TRUE(units.Link(units.RouteBetween(3, 32 * 8 + 3).links[1]).inter_node);
}

TEST(Platform, FatTreeUplinksAreOversubscribed) {
  // hgx-h200: 4 nodes (32 NICs of 400 Gb/s) per leaf; 2:1 halves the uplink.
  const PlatformSpec p = PlatformOrDie(
      PresetChoice("hgx-h200", {"network.oversubscription=2"}, 8), 64);
  EXPECT_EQ(LinkNames(p, 0, 31), (std::vector<std::string>{"node0.nic0.tx", "node3.nic7.rx"}));
  EXPECT_EQ(LinkNames(p, 0, 32), (std::vector<std::string>{"node0.nic0.tx", "leaf0.up",
                                                           "leaf1.down", "node4.nic0.rx"}));
  EXPECT_EQ(p.Link(p.RouteBetween(0, 32).links[1]).bandwidth_bytes_per_s, 32 * 50e9 / 2);
}

TEST(Platform, PcieTrafficToTheSharedNicCrossesTheGpusPort) {
  const PlatformSpec p = PlatformOrDie(PresetChoice("pcie-l40s", {}, 2), 16);
  EXPECT_EQ(LinkNames(p, 1, 9), (std::vector<std::string>{"node0.gpu1.pcie.tx", "node0.nic0.tx",
                                                          "node1.nic0.rx", "node1.gpu1.pcie.rx"}));
  EXPECT_EQ(p.RouteBandwidth(1, 9), 25e9);  // the 200 Gb/s NIC, below PCIe's 31.5 GB/s
  EXPECT_DOUBLE_EQ(p.RouteLatency(1, 9), 1e-6 + 2.5e-6 + 2.5e-6 + 1e-6);
}

TEST(Platform, PointToPointNvlinkHasALinkPerOrderedPair) {
  const PlatformSpec p = PlatformOrDie(
      PresetChoice("h100-node", {"intra_node.kind=NVLINK", "intra_node.bandwidth=64GB/s",
                                 "gpus_per_node=4"}),
      4);
  EXPECT_EQ(p.num_links(), 12);  // 4 x 3 directed pairs, one node
  EXPECT_EQ(LinkNames(p, 2, 1), std::vector<std::string>{"node0.gpu2->gpu1"});
  EXPECT_EQ(LinkNames(p, 1, 2), std::vector<std::string>{"node0.gpu1->gpu2"});
  EXPECT_DOUBLE_EQ(p.RouteLatency(1, 2), 1.5e-6);
}

TEST(Placement, ContiguousIsMegatronOrderTensorThenDataThenPipeline) {
  PlatformSpec p;
  ASSERT_TRUE(Build(PresetChoice("dgx-h100", {}, 2), 4, 2, 2, &p).ok());
  // Group j = rank x dp + replica takes GPUs 2j, 2j + 1.
  EXPECT_EQ(p.GpuOf(0, 0, 0), 0);
  EXPECT_EQ(p.GpuOf(1, 0, 0), 2);
  EXPECT_EQ(p.GpuOf(0, 1, 1), 5);
  EXPECT_EQ(p.GpuOf(1, 3, 0), 14);
}

TEST(Placement, RoundRobinDealsGroupsOverNodes) {
  PlatformChoice choice = PresetChoice("dgx-h100", {}, 2);
  ASSERT_TRUE(ParsePlacement("--placement", "round-robin", &choice.placement).ok());
  const PlatformSpec p = PlatformOrDie(choice, 4);
  EXPECT_EQ(p.GpuOf(0, 0, 0), 0);
  EXPECT_EQ(p.GpuOf(0, 1, 0), 8);
  EXPECT_EQ(p.GpuOf(0, 2, 0), 1);
  EXPECT_EQ(p.GpuOf(0, 3, 0), 9);
}

TEST(Placement, ExplicitListsTheFirstGpuOfEachGroup) {
  PlatformChoice choice = PresetChoice("dgx-h100", {}, 2);
  ASSERT_TRUE(ParsePlacement("--placement", "8,0", &choice.placement).ok());
  const PlatformSpec p = PlatformOrDie(choice, 2);
  EXPECT_EQ(p.GpuOf(0, 0, 0), 8);
  EXPECT_EQ(p.GpuOf(0, 1, 0), 0);
}

TEST(Placement, ReportsWhatDoesNotFit) {
  PlatformSpec p;
  EXPECT_EQ(Build(PresetChoice("h100-node"), 9, 1, 1, &p).message(),
            "--pp: 9 ranks need 9 GPUs; platform h100-node has 8 (1 node of 8; more with --nodes)");
  EXPECT_EQ(Build(PresetChoice("dgx-h100", {}, 2), 16, 2, 1, &p).message(),
            "--pp: 16 ranks x --dp 2 x --tp 1 need 32 GPUs; platform dgx-h100 has 16 (2 nodes "
            "of 8; more with --nodes)");
  EXPECT_EQ(Build(PresetChoice("h100-node"), 2, 1, 3, &p).message(),
            "--tp: 3 does not divide the 8 GPUs per node of h100-node; a tensor-parallel group "
            "stays inside one node");
  PlatformChoice choice = PresetChoice("dgx-h100", {}, 2);
  ASSERT_TRUE(ParsePlacement("--placement", "0,0", &choice.placement).ok());
  EXPECT_EQ(Build(choice, 2, 1, 1, &p).message(),
            "--placement: GPU 0 is given to rank groups 0 and 1; each GPU runs one rank");
  ASSERT_TRUE(ParsePlacement("--placement", "0,7", &choice.placement).ok());
  EXPECT_EQ(Build(choice, 2, 1, 2, &p).message(),
            "--placement: entry 1 (rank 1, replica 0): GPU 7: the group of --tp 2 GPUs would "
            "cross a node boundary; a node has 8 GPUs");
  ASSERT_TRUE(ParsePlacement("--placement", "0,16", &choice.placement).ok());
  EXPECT_EQ(Build(choice, 2, 1, 1, &p).message(),
            "--placement: entry 1 (rank 1, replica 0): GPU 16 is out of range; platform dgx-h100 "
            "has GPUs 0..15");
  EXPECT_EQ(Build(choice, 3, 1, 1, &p).message(),
            "--placement: 2 GPUs for 3 rank groups (--pp 3 x --dp 1); give the first GPU of "
            "each, rank-major: rank 0 of every replica, then rank 1, ...");
  EXPECT_EQ(ParsePlacement("--placement", "0,x", &choice.placement).message(),
            "--placement: invalid placement '0,x'; valid: contiguous, round-robin, or a comma "
            "list of GPU numbers (the first GPU of each rank's group), e.g. 0,8,1,9");
}

// Context parallelism across nodes: tp x cp groups of whole nodes, GPU first + cp_index x tp +
// tp_index (Megatron's order).
Status BuildCp(const PlatformChoice& choice, int32_t ranks, int32_t dp, int32_t tp, int32_t cp,
               PlatformSpec* platform) {
  ParallelLayout layout{.pp = ranks, .dp = dp, .tp = tp};
  layout.cp = cp;
  return BuildPlatform(choice, layout, FlagLocator(), platform);
}

TEST(Placement, ContextParallelGroupsTakeWholeNodes) {
  PlatformSpec p;
  // 2 ranks x dp 2 of tp 4 x cp 4 = 16 GPUs: two nodes per group, eight nodes.
  for (const char* kind : {"contiguous", "round-robin"}) {
    PlatformChoice choice = PresetChoice("dgx-h100", {}, 8);
    ASSERT_TRUE(ParsePlacement("--placement", kind, &choice.placement).ok());
    ASSERT_TRUE(BuildCp(choice, 2, 2, 4, 4, &p).ok());
    EXPECT_EQ(p.GpuOf(0, 0, 0), 0);
    EXPECT_EQ(p.GpuOf(1, 0, 0), 16);
    EXPECT_EQ(p.GpuOf(0, 1, 0), 32);
    EXPECT_EQ(p.GpuOf(1, 1, 15), 63);
    // cp index 2, tp index 1: GPU 2 x 4 + 1 of the group, on its second node.
    EXPECT_EQ(p.NodeOf(p.GpuOf(0, 1, 9)), 5);
  }
  PlatformChoice choice = PresetChoice("dgx-h100", {}, 4);
  ASSERT_TRUE(ParsePlacement("--placement", "16,0", &choice.placement).ok());
  ASSERT_TRUE(BuildCp(choice, 2, 1, 8, 2, &p).ok());
  EXPECT_EQ(p.GpuOf(0, 0, 8), 24);
  ASSERT_TRUE(ParsePlacement("--placement", "0,12", &choice.placement).ok());
  EXPECT_EQ(BuildCp(choice, 2, 1, 8, 2, &p).message(),
            "--placement: entry 1 (rank 1, replica 0): GPU 12: the group of --tp 8 x --cp 2 = 16 "
            "GPUs spans nodes and must start a node (a multiple of 8)");
  EXPECT_EQ(BuildCp(PresetChoice("dgx-h100", {}, 4), 1, 1, 4, 3, &p).message(),
            "--cp: --tp 4 x --cp 3 = 12 neither divides nor is a multiple of the 8 GPUs per node "
            "of dgx-h100; a rank's group of GPUs fits in a node or takes whole nodes");
  EXPECT_EQ(BuildCp(PresetChoice("dgx-h100", {}, 4), 1, 1, 16, 2, &p).message(),
            "--tp: 16 does not divide the 8 GPUs per node of dgx-h100; a tensor-parallel group "
            "stays inside one node");
}

}  // namespace
}  // namespace ppsim
