// The cluster presets are files (platforms/presets/NAME.textproto) read and checked as a user's
// cluster file is.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "base/embedded.h"
#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "platforms/cluster.h"

namespace ppsim {
namespace {

// Every field of every preset, written down from the text the presets had in
// platforms/cluster.cc before they were files (with units worked out: 400 Gbps = 50e9 B/s).
struct Expected {
  const char* name;
  const char* gpu;
  double bf16, fp8;
  int64_t memory;
  double memory_bandwidth;
  int32_t sms;
  double matmul_efficiency;  // attention 0.6 and memory 0.85 everywhere: the defaults
  int32_t gpus_per_node;
  IntraNodeKind intra;
  double intra_bandwidth, intra_latency;
  NicAttachment nic;
  double nic_bandwidth, nic_latency;
  Topology topology;
  int32_t nodes_per_leaf;
  double uplink_latency;
  double host_link_bandwidth, host_link_latency;  // for activation offload (issue 30)
};

TEST(ClusterPresetFiles, GiveEveryFieldAsBeforeInTheListOrder) {
  constexpr int64_t k80GiB = int64_t{80} << 30;
  const auto kNvswitch = IntraNodeKind::kNvswitch;
  const auto kPerGpu = NicAttachment::kPerGpu;
  const auto kRail = Topology::kRailOptimized;
  // clang-format off
  const Expected expected[] = {
      {"ideal", "H100 SXM", 989e12, 1979e12, k80GiB, 3.35e12, 132, 0.75, 0,
       IntraNodeKind::kUnlimited, INFINITY, 0, kPerGpu, 0, 0, Topology::kSingleSwitch, 0, 0,
       INFINITY, 0},
      {"h100-node", "H100 SXM", 989e12, 1979e12, k80GiB, 3.35e12, 132, 0.75, 8, kNvswitch, 450e9,
       1.5e-6, kPerGpu, 50e9, 2.5e-6, Topology::kSingleSwitch, 0, 0, 63e9, 1e-6},
      {"dgx-a100", "A100 SXM4 80GB", 312e12, 0, k80GiB, 2039e9, 108, 0.8, 8, kNvswitch, 300e9,
       1.5e-6, kPerGpu, 25e9, 2.5e-6, kRail, 20, 0.5e-6, 31.5e9, 1e-6},
      {"dgx-h100", "H100 SXM", 989e12, 1979e12, k80GiB, 3.35e12, 132, 0.75, 8, kNvswitch, 450e9,
       1.5e-6, kPerGpu, 50e9, 2.5e-6, kRail, 32, 0.5e-6, 63e9, 1e-6},
      {"h800-cluster", "H800 SXM", 989e12, 1979e12, k80GiB, 3.35e12, 132, 0.75, 8, kNvswitch, 160e9,
       1.5e-6, kPerGpu, 50e9, 2.5e-6, kRail, 32, 0.5e-6, 63e9, 1e-6},
      {"hgx-h200", "H200 SXM", 989e12, 1979e12, 141'000'000'000, 4.8e12, 132, 0.75, 8, kNvswitch,
       450e9, 1.5e-6, kPerGpu, 50e9, 2.5e-6, Topology::kFatTree, 4, 0.5e-6, 63e9, 1e-6},
      {"dgx-b200", "B200", 2.25e15, 4.5e15, 180'000'000'000, 8e12, 148, 0.75, 8, kNvswitch, 900e9,
       1.5e-6, kPerGpu, 50e9, 2.5e-6, kRail, 32, 0.5e-6, 63e9, 1e-6},
      {"gb200-nvl72", "GB200", 2.5e15, 5e15, 186'000'000'000, 8e12, 148, 0.75, 72, kNvswitch, 900e9,
       1.5e-6, kPerGpu, 50e9, 2.5e-6, Topology::kSingleSwitch, 0, 0, 225e9, 1e-6},
      // gb300-nvl72: 20 TB / 72 rounded down to 277 GB; 800 Gb/s = 100e9 B/s; NVLink-C2C
      // 900 GB/s bidirectional over two GPUs = 225e9 B/s per direction per GPU.
      {"gb300-nvl72", "GB300", 2.5e15, 5e15, 277'000'000'000, 8e12, 160, 0.75, 72, kNvswitch, 900e9,
       1.5e-6, kPerGpu, 100e9, 2.5e-6, Topology::kSingleSwitch, 0, 0, 225e9, 1e-6},
      {"pcie-l40s", "L40S", 362e12, 733e12, 48'000'000'000, 864e9, 142, 0.75, 8,
       IntraNodeKind::kPcie, 31.5e9, 1e-6, NicAttachment::kPerNode, 25e9, 2.5e-6,
       Topology::kSingleSwitch, 0, 0, 31.5e9, 1e-6},
  };
  // clang-format on
  const std::vector<ClusterPreset>& presets = AllClusterPresets();
  ASSERT_EQ(presets.size(), std::size(expected));
  for (size_t i = 0; i < presets.size(); ++i) {
    const Expected& e = expected[i];
    SCOPED_TRACE(e.name);
    EXPECT_EQ(presets[i].name, e.name);
    PlatformChoice choice;
    choice.platform = e.name;
    PlatformSpec p;
    ASSERT_TRUE(LoadCluster(choice, FlagLocator(), &p).ok());
    EXPECT_EQ(p.name, e.name);
    EXPECT_EQ(p.gpu.name, e.gpu);
    EXPECT_DOUBLE_EQ(p.gpu.dense_bf16_flops_per_s, e.bf16);
    EXPECT_DOUBLE_EQ(p.gpu.dense_fp8_flops_per_s, e.fp8);
    EXPECT_EQ(p.gpu.memory_bytes, e.memory);
    EXPECT_DOUBLE_EQ(p.gpu.memory_bandwidth_bytes_per_s, e.memory_bandwidth);
    EXPECT_EQ(p.gpu.sms, e.sms);
    EXPECT_DOUBLE_EQ(p.gpu.matmul_efficiency, e.matmul_efficiency);
    EXPECT_DOUBLE_EQ(p.gpu.attention_efficiency, 0.6);
    EXPECT_DOUBLE_EQ(p.gpu.memory_efficiency, 0.85);
    EXPECT_EQ(p.gpus_per_node, e.gpus_per_node);
    EXPECT_EQ(p.num_nodes, 1);
    EXPECT_EQ(p.intra_node, e.intra);
    EXPECT_DOUBLE_EQ(p.intra_bandwidth_bytes_per_s, e.intra_bandwidth);
    EXPECT_DOUBLE_EQ(p.intra_latency_s, e.intra_latency);
    EXPECT_EQ(p.nic_attachment, e.nic);
    EXPECT_DOUBLE_EQ(p.nic_bandwidth_bytes_per_s, e.nic_bandwidth);
    EXPECT_DOUBLE_EQ(p.nic_latency_s, e.nic_latency);
    EXPECT_EQ(p.topology, e.topology);
    EXPECT_EQ(p.nodes_per_leaf, e.nodes_per_leaf);
    EXPECT_DOUBLE_EQ(p.oversubscription, 1);
    EXPECT_DOUBLE_EQ(p.uplink_latency_s, e.uplink_latency);
    EXPECT_DOUBLE_EQ(p.host_link_bandwidth_bytes_per_s, e.host_link_bandwidth);
    EXPECT_DOUBLE_EQ(p.host_link_latency_s, e.host_link_latency);
  }
}

// gb300-nvl72's numbers worked out from the rack figures its file cites, independently of the
// file: NVIDIA's per-rack FP16/BF16 360 and FP8/FP6 720 PFLOP/s are with sparsity (dense is half),
// 20 TB HBM3e and 576 TB/s over 72 GPUs, a ConnectX-8 800 Gb/s per GPU, NVLink-C2C 900 GB/s
// bidirectional per Grace CPU and its two GPUs; the FP8 efficiency is 0.75 x the B300 SXM's
// measured FP8/BF16 MAMF ratio (models/measured/mamf.csv, the B300 SXM rows: 1769 of 2250 BF16,
// 3353.3 of 4500 FP8).
TEST(ClusterPresetFiles, Gb300Nvl72IsTheRackDividedBy72) {
  PlatformChoice choice;
  choice.platform = "gb300-nvl72";
  PlatformSpec p;
  ASSERT_TRUE(LoadCluster(choice, FlagLocator(), &p).ok());
  EXPECT_DOUBLE_EQ(p.gpu.dense_bf16_flops_per_s, 360e15 / 2 / 72);
  EXPECT_DOUBLE_EQ(p.gpu.dense_fp8_flops_per_s, 720e15 / 2 / 72);
  EXPECT_EQ(p.gpu.memory_bytes, static_cast<int64_t>(std::floor(20e12 / 72 / 1e9)) * 1'000'000'000);
  EXPECT_DOUBLE_EQ(p.gpu.memory_bandwidth_bytes_per_s, 576e12 / 72);
  EXPECT_DOUBLE_EQ(p.intra_bandwidth_bytes_per_s, 1.8e12 / 2);
  EXPECT_DOUBLE_EQ(p.nic_bandwidth_bytes_per_s, 800e9 / 8);
  EXPECT_DOUBLE_EQ(p.host_link_bandwidth_bytes_per_s, 900e9 / 2 / 2);
  EXPECT_EQ(p.gpu.sms, 160);
  EXPECT_DOUBLE_EQ(p.gpu.matmul_efficiency, 0.75);
  EXPECT_DOUBLE_EQ(p.gpu.matmul_efficiency_fp8,
                   std::round(100 * 0.75 * (3353.3 / 4500) / (1769.0 / 2250)) / 100);
  EXPECT_DOUBLE_EQ(p.gpu.matmul_efficiency_fp8, 0.71);
}

TEST(ClusterPresetFiles, AreTheSourceFilesWithTheirCitations) {
  const EmbeddedFiles files = ClusterPresetFiles();
  ASSERT_EQ(files.size(), AllClusterPresets().size());
  for (size_t i = 0; i < files.size(); ++i) {
    const ClusterPreset& preset = AllClusterPresets()[i];
    SCOPED_TRACE(preset.file);
    EXPECT_EQ(preset.file, "platforms/" + std::string(files[i].name));
    EXPECT_EQ(preset.name, EmbeddedFileStem(files[i]));
    std::ifstream in(std::string(PPSIM_SOURCE_DIR) + "/" + preset.file, std::ios::binary);
    ASSERT_TRUE(in) << "cannot read the source file";
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), files[i].bytes);
    // The sources come first; what `ppsim platforms NAME` prints is the rest, from the name on.
    EXPECT_TRUE(files[i].bytes.starts_with("# " + preset.name)) << "its sources first";
    EXPECT_EQ(preset.text.substr(0, preset.name.size() + 9), "name: \"" + preset.name + "\"\n");
    EXPECT_TRUE(files[i].bytes.ends_with(preset.text));
  }
}

TEST(ClusterPresetFiles, ABrokenFileIsAnInternalErrorLocatedInIt) {
  const EmbeddedFile broken{"presets/lab.textproto",
                            "# lab: no source.\n"
                            "\n"
                            "name: \"lab2\"\n"
                            "gpu { dense_bf16: \"1PFLOP/s\" memory: \"80Gix\" }\n"
                            "gpus_per_node: 8\n"
                            "intra_node { kind: NVSWITCH bandwidth: \"450GB/s\" }\n"};
  ClusterPreset preset;
  proto::Cluster cluster;
  const Status status = ReadClusterPresetFile(broken, &preset, &cluster);
  EXPECT_EQ(preset.name, "lab");
  EXPECT_EQ(preset.file, "platforms/presets/lab.textproto");
  EXPECT_EQ(preset.text, broken.bytes.substr(19));
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_EQ(status.message(),
            "the cluster preset lab does not load (a bug in this build of ppsim):\n"
            "platforms/presets/lab.textproto:3:7: name: 'lab2' differs from the file's name, lab\n"
            "platforms/presets/lab.textproto:4:38: gpu.memory: invalid size '80Gix'; expected a "
            "non-negative whole number of bytes with unit B, KB, MB, GB, TB, KiB, MiB, GiB or TiB "
            "(a bare number is bytes), e.g. 512MiB");

  const EmbeddedFile unparsable{"presets/lab.textproto", "name: \"lab\"\ngpus_per_node: x\n"};
  EXPECT_EQ(ReadClusterPresetFile(unparsable, &preset, &cluster).message(),
            "the cluster preset lab does not load (a bug in this build of ppsim):\n"
            "platforms/presets/lab.textproto:2:16: Expected integer, got: x");
}

}  // namespace
}  // namespace ppsim
