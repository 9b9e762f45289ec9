// Cluster presets, files in three formats, --set overrides and their error messages.
#include "platforms/cluster.h"

#include <gtest/gtest.h>

#include <fstream>

#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "tests/support/cli.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

Status Load(const PlatformChoice& choice, PlatformSpec* platform) {
  return LoadCluster(choice, FlagLocator(), platform);
}

std::string LoadError(const PlatformChoice& choice) {
  PlatformSpec platform;
  return Load(choice, &platform).message();
}

// Datasheet numbers (sources in platforms/presets/).
TEST(ClusterPresets, CarryTheDatasheetNumbers) {
  struct Expected {
    const char* name;
    double bf16;
    double fp8;
    int64_t memory;
    int32_t gpus_per_node;
    double intra;
    double nic;
    int32_t sms;  // the architecture whitepapers' SM counts
  };
  const Expected expected[] = {
      {"h100-node", 989e12, 1979e12, 80LL << 30, 8, 450e9, 50e9, 132},
      {"dgx-a100", 312e12, 0, 80LL << 30, 8, 300e9, 25e9, 108},
      {"dgx-h100", 989e12, 1979e12, 80LL << 30, 8, 450e9, 50e9, 132},
      // DeepSeek-V3 report Sec. 3.2.2: NVLink 160 GB/s, IB 50 GB/s.
      {"h800-cluster", 989e12, 1979e12, 80LL << 30, 8, 160e9, 50e9, 132},
      {"hgx-h200", 989e12, 1979e12, 141'000'000'000, 8, 450e9, 50e9, 132},
      {"dgx-b200", 2.25e15, 4.5e15, 180'000'000'000, 8, 900e9, 50e9, 148},
      {"gb200-nvl72", 2.5e15, 5e15, 186'000'000'000, 72, 900e9, 50e9, 148},
      {"gb300-nvl72", 2.5e15, 5e15, 277'000'000'000, 72, 900e9, 100e9, 160},
      {"pcie-l40s", 362e12, 733e12, 48'000'000'000, 8, 31.5e9, 25e9, 142},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.name);
    PlatformSpec p;
    ASSERT_TRUE(Load(PresetChoice(e.name), &p).ok());
    EXPECT_EQ(p.gpu.dense_bf16_flops_per_s, e.bf16);
    EXPECT_EQ(p.gpu.dense_fp8_flops_per_s, e.fp8);
    EXPECT_EQ(p.gpu.memory_bytes, e.memory);
    EXPECT_EQ(p.gpus_per_node, e.gpus_per_node);
    EXPECT_EQ(p.num_nodes, 1);
    EXPECT_EQ(p.intra_bandwidth_bytes_per_s, e.intra);
    EXPECT_EQ(p.nic_bandwidth_bytes_per_s, e.nic);
    EXPECT_EQ(p.gpu.sms, e.sms);
  }
  EXPECT_EQ(ClusterPresetNames(),
            "ideal, h100-node, dgx-a100, dgx-h100, h800-cluster, hgx-h200, dgx-b200, gb200-nvl72, "
            "gb300-nvl72, pcie-l40s");
}

TEST(ClusterPresets, EveryPresetScalesToSeveralNodes) {
  for (const ClusterPreset& preset : AllClusterPresets()) {
    if (preset.name == "ideal") continue;
    SCOPED_TRACE(std::string(preset.name));
    PlatformSpec p;
    ASSERT_TRUE(
        BuildPlatform(PresetChoice(std::string(preset.name), {}, 4), {.pp = 4}, FlagLocator(), &p)
            .ok());
    EXPECT_EQ(p.num_nodes, 4);
    // A printed preset is a valid cluster file describing the same cluster.
    const std::string path =
        WriteFile(std::string(preset.name) + ".textproto", std::string(preset.text));
    PlatformSpec from_file;
    ASSERT_TRUE(
        BuildPlatform(PresetChoice(path, {}, 4), {.pp = 4}, FlagLocator(), &from_file).ok());
    ASSERT_EQ(from_file.num_links(), p.num_links());
    for (int32_t i = 0; i < p.num_links(); ++i) {
      EXPECT_EQ(from_file.Link(i).name, p.Link(i).name);
      EXPECT_EQ(from_file.Link(i).bandwidth_bytes_per_s, p.Link(i).bandwidth_bytes_per_s);
      EXPECT_EQ(from_file.Link(i).latency_s, p.Link(i).latency_s);
    }
  }
}

constexpr const char* kTextProto = R"(name: "lab"
gpu { name: "X1" dense_bf16: "1PFLOP/s" memory: "96GiB" }
gpus_per_node: 4
nodes: 3
intra_node { kind: NVSWITCH bandwidth: "400GB/s" latency: "1us" }
nic { attachment: PER_NODE bandwidth: "200Gbps" latency: "2us" }
network { topology: FAT_TREE nodes_per_leaf: 2 oversubscription: 1.5 uplink_latency: "300ns" }
)";

constexpr const char* kJson = R"({"name": "lab",
  "gpu": {"name": "X1", "dense_bf16": "1PFLOP/s", "memory": "96GiB"},
  "gpus_per_node": 4, "nodes": 3,
  "intra_node": {"kind": "NVSWITCH", "bandwidth": "400GB/s", "latency": "1us"},
  "nic": {"attachment": "PER_NODE", "bandwidth": "200Gbps", "latency": "2us"},
  "network": {"topology": "FAT_TREE", "nodesPerLeaf": 2, "oversubscription": 1.5,
              "uplink_latency": "300ns"}}
)";

constexpr const char* kYaml = R"(name: lab
gpu: {name: X1, dense_bf16: 1PFLOP/s, memory: 96GiB}
gpus_per_node: 4
nodes: 3
intra_node:
  kind: NVSWITCH
  bandwidth: 400GB/s
  latency: 1us
nic: {attachment: PER_NODE, bandwidth: 200Gbps, latency: 2us}
network:
  topology: FAT_TREE
  nodes_per_leaf: 2
  oversubscription: 1.5
  uplink_latency: 300ns
)";

TEST(ClusterFiles, TheThreeFormatsDescribeTheSameCluster) {
  std::vector<PlatformSpec> platforms;
  for (const auto& [name, text] : {std::pair{"lab.textproto", kTextProto},
                                   std::pair{"lab.json", kJson}, std::pair{"lab.yaml", kYaml}}) {
    PlatformSpec p;
    const Status status =
        BuildPlatform(PresetChoice(WriteFile(name, text)), {.pp = 12}, FlagLocator(), &p);
    ASSERT_TRUE(status.ok()) << status.message();
    platforms.push_back(p);
  }
  const PlatformSpec& p = platforms[0];
  EXPECT_EQ(p.name, "lab");
  EXPECT_EQ(p.gpu.dense_bf16_flops_per_s, 1e15);
  EXPECT_EQ(p.gpu.memory_bytes, 96LL << 30);
  // 12 NVSwitch ports x 2, 3 nodes x 1 NIC x 2, 2 leaves x 2.
  ASSERT_EQ(p.num_links(), 24 + 6 + 4);
  // Leaf uplink: 2 nodes x 1 NIC x 25 GB/s / 1.5.
  EXPECT_DOUBLE_EQ(p.Link(30).bandwidth_bytes_per_s, 2 * 25e9 / 1.5);
  EXPECT_EQ(p.Link(30).name, "leaf0.up");
  EXPECT_DOUBLE_EQ(p.RouteLatency(0, 11), 2e-6 + 0.3e-6 + 0.3e-6 + 2e-6);
  for (const PlatformSpec& other : platforms) {
    ASSERT_EQ(other.num_links(), p.num_links());
    for (int32_t i = 0; i < p.num_links(); ++i) {
      EXPECT_EQ(other.Link(i).name, p.Link(i).name);
      EXPECT_EQ(other.Link(i).bandwidth_bytes_per_s, p.Link(i).bandwidth_bytes_per_s);
      EXPECT_EQ(other.Link(i).latency_s, p.Link(i).latency_s);
    }
  }
}

TEST(ClusterFiles, ReportEveryProblemWhereItIs) {
  const std::string path = WriteFile("bad.yaml", R"(gpu: {dense_bf16: 1PFLOPS/s, memory: 0}
gpus_per_node: 4
nodes: 2
intra_node: {kind: NVSWITCH, latency: -1us}
nic: {attachment: PER_NODE}
network: {topology: RAIL_OPTIMIZED, oversubscription: 0.5}
)");
  EXPECT_EQ(LoadError(PresetChoice(path)),
            path +
                ":1:19: gpu.dense_bf16: invalid FLOP rate '1PFLOPS/s'; expected a positive "
                "FLOP rate such as 989TFLOP/s or 2.25PFLOPS (a bare number is FLOP/s)\n" +
                path + ":1:38: gpu.memory: must be more than 0 bytes\n" + path +
                ": intra_node.bandwidth: required; e.g. 450GB/s\n" + path +
                ":4:39: intra_node.latency: negative duration '-1us'; durations must be "
                ">= 0\n" +
                path + ": nic.bandwidth: required with 2 nodes; e.g. 400Gbps\n" + path +
                ": network.nodes_per_leaf: 0; RAIL_OPTIMIZED needs the nodes under one leaf "
                "switch, from 1 to 2^24\n" +
                path +
                ":6:21: network.topology: RAIL_OPTIMIZED needs a NIC per GPU "
                "(nic.attachment PER_GPU); got PER_NODE\n" +
                path +
                ":6:55: network.oversubscription: 0.5; the ratio of leaf down- to uplink "
                "bandwidth is from 1 (non-blocking) to 1e6");
  const std::string typo = WriteFile("typo.json", R"({"gpu": {"dense_bf16": "1PFLOP/s"},
  "intra_node": {"kind": "NVSWICH"}, "nics": {}})");
  EXPECT_EQ(LoadError(PresetChoice(typo)),
            typo +
                ":2:26: intra_node.kind: unknown value 'NVSWICH'; valid: NVSWITCH, NVLINK, "
                "PCIE, UNLIMITED (did you mean NVSWITCH?)\n" +
                typo + ":2:38: nics: unknown field; did you mean nic?");
}

TEST(ClusterSettings, OverrideAnyFieldAndReportTheKey) {
  PlatformSpec p;
  ASSERT_TRUE(Load(PresetChoice("dgx-h100", {"nic.bandwidth=200Gbps", "network.topology=FAT_TREE",
                                             "network.nodes_per_leaf=4", "gpu.memory=96GiB"}),
                   &p)
                  .ok());
  EXPECT_EQ(p.nic_bandwidth_bytes_per_s, 25e9);
  EXPECT_EQ(p.topology, Topology::kFatTree);
  EXPECT_EQ(p.nodes_per_leaf, 4);
  EXPECT_EQ(p.gpu.memory_bytes, 96LL << 30);
  EXPECT_EQ(LoadError(PresetChoice("dgx-h100", {"nic.bandwith=1"})),
            "--set nic.bandwith: unknown key; valid: name, description, gpu.name, gpu.dense_bf16, "
            "gpu.dense_fp8, gpu.memory, gpu.memory_bandwidth, gpu.sms, gpu.matmul_efficiency, "
            "gpu.matmul_efficiency_fp8, "
            "gpu.attention_efficiency, gpu.memory_efficiency, gpu.mxfp8, gpus_per_node, nodes, "
            "intra_node.kind, intra_node.bandwidth, intra_node.latency, nic.attachment, "
            "nic.bandwidth, nic.latency, network.topology, network.nodes_per_leaf, "
            "network.oversubscription, network.uplink_latency, host_link.bandwidth, "
            "host_link.latency (did you mean nic.bandwidth?)");
  EXPECT_EQ(LoadError(PresetChoice("dgx-h100", {"nic"})),
            "--set nic: expected PATH=VALUE, e.g. --set nic.bandwidth=200Gbps");
  EXPECT_EQ(LoadError(PresetChoice("dgx-h100", {"nic.bandwidth=fast"})),
            "--set nic.bandwidth: invalid bandwidth 'fast'; expected a positive rate such as "
            "450GB/s, 50GiB/s, 400Gbps or 400Gb/s (a bare number is bytes per second), or inf");
  EXPECT_EQ(LoadError(PresetChoice("dgx-h100", {"network.topology=RING"})),
            "--set network.topology: unknown value 'RING'; valid: SINGLE_SWITCH, FAT_TREE, "
            "RAIL_OPTIMIZED");
  EXPECT_EQ(LoadError(PresetChoice("dgx-h100", {"gpu.matmul_efficiency=1.5"})),
            "--set gpu.matmul_efficiency: 1.5 is not a fraction of peak; give a value in (0, 1]");
  EXPECT_EQ(LoadError(PresetChoice("dgx-h100", {"gpu.sms=-1"})),
            "--set gpu.sms: -1 streaming multiprocessors; give 0 (no wave quantization) to 100000");
  EXPECT_EQ(LoadError(PresetChoice("dgx-h100", {"nodes=two"})),
            "--set nodes: expected an integer, got 'two'");
  EXPECT_EQ(LoadError(PresetChoice("dgx-h100", {"nodes=0"})),
            "--set nodes: 0 nodes; give at least 1");
  EXPECT_EQ(LoadError(PresetChoice("dgx-h100", {"network.oversubscription=x"})),
            "--set network.oversubscription: expected a number, got 'x'");
  EXPECT_EQ(LoadError(PresetChoice("dgx-h100", {"network.oversubscription=inf"})),
            "--set network.oversubscription: expected a finite number, got 'inf'");
  // --nodes is the nodes field; a one-node cluster without NICs cannot grow.
  EXPECT_EQ(LoadError(PresetChoice("ideal", {}, 2)),
            "--platform ideal: gpus_per_node: 0; give at least 1 (0, as many as the run needs, "
            "only with one node)\n--platform ideal: nic.attachment: required with 2 nodes; valid: "
            "PER_GPU, PER_NODE\n--platform ideal: nic.bandwidth: required with 2 nodes; e.g. "
            "400Gbps\n--platform ideal: network.topology: required with 2 nodes; valid: "
            "SINGLE_SWITCH, FAT_TREE, RAIL_OPTIMIZED");
}

// The GPU's link to host memory (for activation offload, issue 30): optional, so that cluster
// files written before it still load; set, overridden and checked like the other links.
TEST(ClusterHostLink, IsOptionalSettableAndChecked) {
  PlatformSpec p;
  ASSERT_TRUE(Load(PresetChoice(WriteFile("old.textproto", kTextProto)), &p).ok());
  EXPECT_EQ(p.host_link_bandwidth_bytes_per_s, 0);
  EXPECT_EQ(p.host_link_latency_s, 0);
  ASSERT_TRUE(
      Load(PresetChoice("dgx-b200", {"host_link.bandwidth=128GB/s", "host_link.latency=2us"}), &p)
          .ok());
  EXPECT_EQ(p.host_link_bandwidth_bytes_per_s, 128e9);
  EXPECT_EQ(p.host_link_latency_s, 2e-6);
  EXPECT_EQ(DescribePlatform(p),
            "8 GPUs per node (B200: 2.25 PFLOP/s bf16, 167.6 GiB); NVSwitch 900 GB/s per GPU port; "
            "NIC 50 GB/s per GPU, rail-optimized 32 nodes/leaf; host link 128 GB/s per GPU");
  EXPECT_EQ(LoadError(PresetChoice("gb200-nvl72", {"host_link.bandwidth=fast"})),
            "--set host_link.bandwidth: invalid bandwidth 'fast'; expected a positive rate such as "
            "450GB/s, 50GiB/s, 400Gbps or 400Gb/s (a bare number is bytes per second), or inf");
  EXPECT_EQ(LoadError(PresetChoice("gb200-nvl72", {"host_link.latency=-1us"})),
            "--set host_link.latency: negative duration '-1us'; durations must be >= 0");
  const std::string path = WriteFile("host.yaml", R"(gpu: {dense_bf16: 1PFLOP/s, memory: 80GiB}
gpus_per_node: 4
intra_node: {kind: NVSWITCH, bandwidth: 450GB/s}
host_link: {bandwidth: 0GB/s}
)");
  EXPECT_EQ(LoadError(PresetChoice(path)).rfind(path + ":4:24: host_link.bandwidth: ", 0), 0u)
      << LoadError(PresetChoice(path));
}

TEST(ClusterChoice, ReportsUnknownPlatformsAndMisplacedFlags) {
  EXPECT_EQ(LoadError(PresetChoice("dgx-h10")),
            "--platform: unknown platform 'dgx-h10'; valid: ideal, h100-node, dgx-a100, dgx-h100, "
            "h800-cluster, hgx-h200, dgx-b200, gb200-nvl72, gb300-nvl72, pcie-l40s, a cluster file "
            "(.textproto, .json, "
            ".yaml) or a SimGrid .xml (did you mean dgx-h100?)");
  PlatformChoice choice = PresetChoice("h100-node");
  choice.p2p_latency = "1us";
  EXPECT_EQ(LoadError(choice),
            "--p2p-latency: applies to --platform ideal only; use --set intra_node.latency=... or "
            "--set intra_node.bandwidth=... on h100-node");
  choice = IdealChoice();
  choice.p2p_bandwidth = "0";
  EXPECT_EQ(
      LoadError(choice),
      "--p2p-bandwidth: bandwidth '0' is out of range; bandwidths are from 1KB/s to 1EB/s, or "
      "inf");
  EXPECT_EQ(LoadError(PresetChoice("missing.yaml")).rfind("missing.yaml: cannot read", 0), 0u);
  choice = PresetChoice(WriteFile("p.xml", "<platform/>"));
  EXPECT_EQ(LoadError(choice),
            "--hosts: required with an XML platform; give the host of every GPU in order, e.g. "
            "--hosts gpu0,gpu1,gpu2,gpu3");
  choice.hosts = {"a"};
  choice.sets = {"nic.bandwidth=1Gbps"};
  EXPECT_EQ(LoadError(choice), "--set nic.bandwidth: an XML platform's links come from " +
                                   choice.platform + "; only gpu.* keys apply");
}

}  // namespace
}  // namespace ppsim
