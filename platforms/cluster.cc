#include "platforms/cluster.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "config/config_file.h"
#include "platforms/xml_platform.h"
#include "config/units.h"
#include "base/escape.h"
#include "base/names.h"
#include "base/numbers.h"

namespace ppsim {
namespace {

namespace pb = google::protobuf;

// The presets. Every constant cites where it comes from; "assumption" marks the ones that are
// ours. Latencies are per link crossed: a GPU-to-GPU route through a switch crosses two ports, a
// route between nodes two NICs (and two leaf uplinks between leaves).
//
// The op cost model's constants (models/op_costs.h), per GPU:
// - sms: streaming multiprocessors, from NVIDIA's architecture whitepapers: A100 108 ("NVIDIA A100
//   Tensor Core GPU Architecture", 2020), H100 SXM5 132 ("NVIDIA H100 Tensor Core GPU
//   Architecture", 2022; H200 is the same die); L40S 142 (Ada whitepaper: one RT core per SM,
//   142 RT cores in the L40S datasheet); B200 148 (Blackwell: assumption, as publicly reported).
// - matmul_efficiency: the fraction of the dense peak a large GEMM with full waves reaches. A100
//   0.8: the zero-bubble paper's profiled W times (arXiv 2401.10241v1, Table 9: W is only the
//   weight-gradient GEMMs) of its 1.5B, 6.2B and 14.6B models on A100 are 80.5%, 81% and 76% of
//   the peak for the FLOPs counted here, with 94-98% of the tiles useful (so 0.78-0.85 before
//   quantization). Other GPUs 0.75: assumption (cuBLAS BF16 GEMMs on H100 are commonly reported
//   at 700-750 of 989 TFLOP/s); users calibrate it per GPU with --set gpu.matmul_efficiency=X.
// - attention_efficiency 0.6: FlashAttention-2 reaches 50-73% of A100's peak in the forward and
//   less in the backward (Dao 2023, arXiv 2307.08691, Sec. 4.1); FlashAttention-3 75% on H100
//   (Shah et al. 2024, arXiv 2407.08608). Assumption for the others.
// - memory_efficiency 0.85: streaming kernels reach about this share of the HBM bandwidth.
//   Assumption.
// These are also the defaults of a cluster file's gpu block (the A100's).
constexpr double kDefaultMatmulEfficiency = 0.8;
constexpr double kDefaultAttentionEfficiency = 0.6;
constexpr double kDefaultMemoryEfficiency = 0.85;

// H100 SXM5 (NVIDIA H100 Tensor Core GPU datasheet): 989 TFLOP/s dense BF16, 1,979 dense FP8
// (3,958 with sparsity), 80 GB HBM3 = 5 stacks of 16 GiB (nvidia-smi: 81,559 MiB), 3.35 TB/s;
// NVLink 4: 18 links x 25 GB/s per direction = 450 GB/s per direction (the "900 GB/s").
constexpr char kH100Gpu[] = R"(
gpu {
  name: "H100 SXM"
  dense_bf16: "989TFLOP/s"
  dense_fp8: "1979TFLOP/s"
  memory: "80GiB"
  memory_bandwidth: "3.35TB/s"
  sms: 132
  matmul_efficiency: 0.75
}
)";

// NVSwitch port latency: a few microseconds GPU to GPU for small NCCL point-to-point messages
// (nccl-tests sendrecv on DGX-class nodes): 1.5 us per port, 3 us per route. Assumption.
// InfiniBand: ~5 us GPU to GPU through one switch for small NCCL messages, split as 2.5 us per
// NIC crossed; 0.5 us per leaf-spine uplink crossed (switch port-to-port plus cable). Assumption.
const std::vector<ClusterPreset>& Presets() {
  static const std::vector<ClusterPreset> kPresets = [] {
    std::vector<ClusterPreset> presets;
    static const std::string kIdeal = std::string(R"(name: "ideal"
description: "one H100 SXM per GPU the run needs on one idealised fabric: latency --p2p-latency (default 0), bandwidth --p2p-bandwidth (default inf), nothing contends"
)") + kH100Gpu + R"(gpus_per_node: 0  # as many as the run needs
nodes: 1
intra_node { kind: UNLIMITED bandwidth: "inf" latency: "0s" }
)";
    // One HGX H100 8-GPU server; its NICs and switch as in dgx-h100, so --nodes scales it.
    static const std::string kH100Node = std::string(R"(name: "h100-node"
description: "one 8 x H100 SXM server on NVSwitch; 400 Gb/s NIC per GPU on one InfiniBand switch when scaled with --nodes"
)") + kH100Gpu + R"(gpus_per_node: 8
nodes: 1
intra_node { kind: NVSWITCH bandwidth: "450GB/s" latency: "1.5us" }
# ConnectX-7 NDR InfiniBand, 400 Gb/s per GPU (HGX H100 reference configuration).
nic { attachment: PER_GPU bandwidth: "400Gbps" latency: "2.5us" }
network { topology: SINGLE_SWITCH }
)";
    // DGX H100 (DGX H100 user guide; DGX SuperPOD H100 reference architecture): 8 x H100 SXM,
    // 4 NVSwitch chips, 8 single-port ConnectX-7 400 Gb/s NDR for the compute fabric, which is
    // rail-optimized and non-blocking with 32 nodes per scalable unit (one leaf per rail per SU).
    static const std::string kDgxH100 = std::string(R"(name: "dgx-h100"
description: "DGX H100 SuperPOD: 8 x H100 SXM per node on NVSwitch, 8 x 400 Gb/s NDR, rail-optimized leaves of 32 nodes, non-blocking"
)") + kH100Gpu + R"(gpus_per_node: 8
nodes: 1
intra_node { kind: NVSWITCH bandwidth: "450GB/s" latency: "1.5us" }
nic { attachment: PER_GPU bandwidth: "400Gbps" latency: "2.5us" }
network { topology: RAIL_OPTIMIZED nodes_per_leaf: 32 oversubscription: 1 uplink_latency: "0.5us" }
)";
    // DeepSeek-V3's training cluster (DeepSeek-V3 technical report, arXiv 2412.19437): 2048
    // H800 GPUs, 8 per node on NVLink and NVSwitch, InfiniBand across nodes (Sec. 3.1); "NVLink
    // offers a bandwidth of 160 GB/s, roughly 3.2 times that of IB (50 GB/s)" (Sec. 3.2.2), the
    // figures used here per direction. The H800 is the H100 SXM with reduced NVLink: the same
    // tensor cores (989 / 1979 TFLOP/s dense BF16 / FP8), 132 SMs, 80 GB HBM3. The IB fabric as
    // dgx-h100's (a 400 Gb/s NIC per GPU, rail-optimized): an assumption, as the report gives only
    // the bandwidth.
    static const std::string kH800 = R"(name: "h800-cluster"
description: "DeepSeek-V3's cluster: 8 x H800 per node, NVLink 160 GB/s and 400 Gb/s (50 GB/s) InfiniBand per GPU (arXiv 2412.19437), rail-optimized leaves of 32 nodes"
gpu {
  name: "H800 SXM"
  dense_bf16: "989TFLOP/s"
  dense_fp8: "1979TFLOP/s"
  memory: "80GiB"
  memory_bandwidth: "3.35TB/s"
  sms: 132
  matmul_efficiency: 0.75
}
gpus_per_node: 8
nodes: 1
intra_node { kind: NVSWITCH bandwidth: "160GB/s" latency: "1.5us" }
nic { attachment: PER_GPU bandwidth: "400Gbps" latency: "2.5us" }
network { topology: RAIL_OPTIMIZED nodes_per_leaf: 32 oversubscription: 1 uplink_latency: "0.5us" }
)";
    // DGX A100 (DGX A100 user guide; DGX SuperPOD A100 reference architecture): A100 SXM4 80GB at
    // 312 TFLOP/s dense BF16, no FP8, 80 GB HBM2e at 2,039 GB/s; NVLink 3: 12 links x 25 GB/s =
    // 300 GB/s per direction through 6 NVSwitches; 8 x ConnectX-6 HDR 200 Gb/s, rail-optimized
    // with 20 nodes per scalable unit.
    static const std::string kDgxA100 = R"(name: "dgx-a100"
description: "DGX A100 SuperPOD: 8 x A100 SXM4 80GB per node on NVSwitch, 8 x 200 Gb/s HDR, rail-optimized leaves of 20 nodes, non-blocking"
gpu {
  name: "A100 SXM4 80GB"
  dense_bf16: "312TFLOP/s"
  memory: "80GiB"
  memory_bandwidth: "2039GB/s"
  sms: 108
}
gpus_per_node: 8
nodes: 1
intra_node { kind: NVSWITCH bandwidth: "300GB/s" latency: "1.5us" }
nic { attachment: PER_GPU bandwidth: "200Gbps" latency: "2.5us" }
network { topology: RAIL_OPTIMIZED nodes_per_leaf: 20 oversubscription: 1 uplink_latency: "0.5us" }
)";
    // HGX H200 (H200 datasheet): H100's compute, 141 GB HBM3e at 4.8 TB/s, NVLink 900 GB/s
    // bidirectional = 450 GB/s per direction; 8 x 400 Gb/s NICs. The fabric is a generic
    // non-blocking two-level fat-tree, 4 nodes (32 NICs) per leaf. Assumption.
    static const std::string kHgxH200 = R"(name: "hgx-h200"
description: "HGX H200: 8 x H200 (141 GB) per node on NVSwitch, 8 x 400 Gb/s, fat-tree with 4 nodes per leaf, non-blocking"
gpu {
  name: "H200 SXM"
  dense_bf16: "989TFLOP/s"
  dense_fp8: "1979TFLOP/s"
  memory: "141GB"
  memory_bandwidth: "4.8TB/s"
  sms: 132
  matmul_efficiency: 0.75
}
gpus_per_node: 8
nodes: 1
intra_node { kind: NVSWITCH bandwidth: "450GB/s" latency: "1.5us" }
nic { attachment: PER_GPU bandwidth: "400Gbps" latency: "2.5us" }
network { topology: FAT_TREE nodes_per_leaf: 4 oversubscription: 1 uplink_latency: "0.5us" }
)";
    // DGX B200 (DGX B200 datasheet): 8 x B200, 72 PFLOP/s FP8 training with sparsity = 4.5 PFLOP/s
    // dense FP8 and 2.25 PFLOP/s dense BF16 per GPU; 1,440 GB HBM3e = 180 GB per GPU, 64 TB/s =
    // 8 TB/s per GPU; NVLink 5: 1.8 TB/s bidirectional = 900 GB/s per direction; 8 x ConnectX-7
    // 400 Gb/s; DGX SuperPOD B200: rail-optimized, 32 nodes per scalable unit.
    static const std::string kDgxB200 = R"(name: "dgx-b200"
description: "DGX B200 SuperPOD: 8 x B200 (180 GB) per node on NVSwitch 5, 8 x 400 Gb/s, rail-optimized leaves of 32 nodes, non-blocking"
gpu {
  name: "B200"
  dense_bf16: "2.25PFLOP/s"
  dense_fp8: "4.5PFLOP/s"
  memory: "180GB"
  memory_bandwidth: "8TB/s"
  sms: 148
  matmul_efficiency: 0.75
}
gpus_per_node: 8
nodes: 1
intra_node { kind: NVSWITCH bandwidth: "900GB/s" latency: "1.5us" }
nic { attachment: PER_GPU bandwidth: "400Gbps" latency: "2.5us" }
network { topology: RAIL_OPTIMIZED nodes_per_leaf: 32 oversubscription: 1 uplink_latency: "0.5us" }
)";
    // GB200 NVL72 (GB200 NVL72 datasheet): one NVLink domain of 72 Blackwell GPUs, modelled as one
    // 72-GPU node; 360 PFLOP/s BF16 and 720 PFLOP/s FP8 with sparsity = 2.5 and 5 PFLOP/s dense
    // per GPU; 13.4 TB HBM3e = 186 GB per GPU, 576 TB/s = 8 TB/s per GPU; NVLink 5: 900 GB/s per
    // direction per GPU into the NVLink switch trays; a ConnectX-7 400 Gb/s per GPU. Racks joined
    // by one non-blocking switch. Assumption.
    static const std::string kGb200 = R"(name: "gb200-nvl72"
description: "GB200 NVL72: 72 Blackwell GPUs (186 GB) in one NVLink domain per rack, 400 Gb/s NIC per GPU, racks on one non-blocking switch"
gpu {
  name: "GB200"
  dense_bf16: "2.5PFLOP/s"
  dense_fp8: "5PFLOP/s"
  memory: "186GB"
  memory_bandwidth: "8TB/s"
  sms: 148
  matmul_efficiency: 0.75
}
gpus_per_node: 72
nodes: 1
intra_node { kind: NVSWITCH bandwidth: "900GB/s" latency: "1.5us" }
nic { attachment: PER_GPU bandwidth: "400Gbps" latency: "2.5us" }
network { topology: SINGLE_SWITCH }
)";
    // A PCIe server (L40S datasheet): 362 TFLOP/s dense BF16, 733 dense FP8, 48 GB GDDR6 at
    // 864 GB/s, PCIe Gen4 x16 = 16 GT/s x 16 lanes x 128/130 / 8 = 31.5 GB/s per direction into
    // the PCIe switches; one 200 Gb/s NIC for the node on one switch. Latencies: assumption.
    static const std::string kPcie = R"(name: "pcie-l40s"
description: "PCIe server: 8 x L40S (48 GB) behind PCIe Gen4 x16 ports, one shared 200 Gb/s NIC per node on one switch"
gpu {
  name: "L40S"
  dense_bf16: "362TFLOP/s"
  dense_fp8: "733TFLOP/s"
  memory: "48GB"
  memory_bandwidth: "864GB/s"
  sms: 142
  matmul_efficiency: 0.75
}
gpus_per_node: 8
nodes: 1
intra_node { kind: PCIE bandwidth: "31.5GB/s" latency: "1us" }
nic { attachment: PER_NODE bandwidth: "200Gbps" latency: "2.5us" }
network { topology: SINGLE_SWITCH }
)";
    presets.push_back({"ideal", kIdeal});
    presets.push_back({"h100-node", kH100Node});
    presets.push_back({"dgx-a100", kDgxA100});
    presets.push_back({"dgx-h100", kDgxH100});
    presets.push_back({"h800-cluster", kH800});
    presets.push_back({"hgx-h200", kHgxH200});
    presets.push_back({"dgx-b200", kDgxB200});
    presets.push_back({"gb200-nvl72", kGb200});
    presets.push_back({"pcie-l40s", kPcie});
    return presets;
  }();
  return kPresets;
}

const std::vector<std::string>& SettingPaths() {
  static const std::vector<std::string> kPaths = ScalarFieldPaths(proto::Cluster::descriptor());
  return kPaths;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Where each field of the cluster was written, for messages: a file position, a field of the
// request that overrides it (nodes, set.PATH, p2p_latency), or the preset.
class FieldSource {
 public:
  FieldSource(const Locator& where, std::string preset, const ConfigLocations* file)
      : where_(where), preset_(std::move(preset)), file_(file) {}

  // `path` of the cluster was set by the request's `field`.
  void Override(const std::string& path, std::string field) {
    overrides_[path] = std::move(field);
  }

  // "FILE:LINE:COL: nic.bandwidth", "--set nic.bandwidth", "--nodes", "--platform X: path".
  std::string Where(const std::string& path) const {
    auto it = overrides_.find(path);
    if (it != overrides_.end()) return where_.Where(it->second);
    if (file_ != nullptr) return file_->Where(path) + ": " + path;
    return where_.Where("platform") + " " + preset_ + ": " + path;
  }

 private:
  const Locator& where_;
  std::string preset_;
  const ConfigLocations* file_;
  std::map<std::string, std::string> overrides_;
};

std::string KindNames(const pb::EnumDescriptor* type) { return JoinNames(EnumValueNames(type)); }

std::string ShortestText(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, end);
}

// Checks the cluster and converts it, collecting every problem.
Status ConvertCluster(const proto::Cluster& c, const FieldSource& source, PlatformSpec* p) {
  std::vector<std::string> errors;
  auto check = [&](const Status& status) {
    if (!status.ok()) errors.push_back(status.message());
  };
  auto required = [&](const std::string& path, const std::string& example) {
    errors.push_back(source.Where(path) + ": required; e.g. " + example);
  };
  p->name = c.name();
  p->description = c.description();
  const proto::Gpu& gpu = c.gpu();
  p->gpu.name = gpu.name().empty() ? "GPU" : gpu.name();
  if (gpu.dense_bf16().empty()) {
    required("gpu.dense_bf16", "989TFLOP/s");
  } else {
    check(ParseFlopRate(source.Where("gpu.dense_bf16"), gpu.dense_bf16(),
                        &p->gpu.dense_bf16_flops_per_s));
  }
  if (!gpu.dense_fp8().empty()) {
    check(ParseFlopRate(source.Where("gpu.dense_fp8"), gpu.dense_fp8(),
                        &p->gpu.dense_fp8_flops_per_s));
  }
  if (gpu.memory().empty()) {
    required("gpu.memory", "80GiB");
  } else {
    const Status status = ParseSize(source.Where("gpu.memory"), gpu.memory(), &p->gpu.memory_bytes);
    check(status);
    if (status.ok() && p->gpu.memory_bytes == 0) {
      errors.push_back(source.Where("gpu.memory") + ": must be more than 0 bytes");
    }
  }
  if (!gpu.memory_bandwidth().empty()) {
    check(ParseBandwidth(source.Where("gpu.memory_bandwidth"), gpu.memory_bandwidth(),
                         &p->gpu.memory_bandwidth_bytes_per_s));
  }
  if (gpu.sms() < 0 || gpu.sms() > 100000) {
    errors.push_back(source.Where("gpu.sms") + ": " + std::to_string(gpu.sms()) +
                     " streaming multiprocessors; give 0 (no wave quantization) to 100000");
  }
  p->gpu.sms = gpu.sms();
  for (auto [field, has, value, fallback, out] :
       {std::tuple{"gpu.matmul_efficiency", gpu.has_matmul_efficiency(), gpu.matmul_efficiency(),
                   kDefaultMatmulEfficiency, &p->gpu.matmul_efficiency},
        std::tuple{"gpu.attention_efficiency", gpu.has_attention_efficiency(),
                   gpu.attention_efficiency(), kDefaultAttentionEfficiency,
                   &p->gpu.attention_efficiency},
        std::tuple{"gpu.memory_efficiency", gpu.has_memory_efficiency(), gpu.memory_efficiency(),
                   kDefaultMemoryEfficiency, &p->gpu.memory_efficiency}}) {
    *out = has ? value : fallback;
    if (!(*out > 0 && *out <= 1)) {
      errors.push_back(source.Where(field) + ": " + FormatNumber(*out) +
                       " is not a fraction of peak; give a value in (0, 1]");
    }
  }
  p->gpu_flops_per_s = p->gpu.dense_bf16_flops_per_s > 0 ? p->gpu.dense_bf16_flops_per_s : 1e15;

  p->num_nodes = c.has_nodes() ? c.nodes() : 1;
  if (p->num_nodes < 1) {
    errors.push_back(source.Where("nodes") + ": " + std::to_string(c.nodes()) +
                     " nodes; give at least 1");
  }
  if (!c.has_gpus_per_node()) {
    required("gpus_per_node", "8");
  } else {
    p->gpus_per_node = c.gpus_per_node();
    if (p->gpus_per_node < 0 || (p->gpus_per_node == 0 && p->num_nodes > 1)) {
      errors.push_back(source.Where("gpus_per_node") + ": " + std::to_string(c.gpus_per_node()) +
                       "; give at least 1 (0, as many as the run needs, only with one node)");
    }
  }

  // GPUs are numbered in 32 bits and a cluster costs nothing per GPU it does not use, so the
  // limit is only what the numbering can hold with room for links (two per GPU port).
  constexpr int64_t kMaxGpus = int64_t{1} << 24;
  if (p->num_nodes >= 1 && p->gpus_per_node >= 1 &&
      int64_t{p->num_nodes} * p->gpus_per_node > kMaxGpus) {
    errors.push_back(source.Where("nodes") + ": " + std::to_string(p->num_nodes) + " nodes of " +
                     std::to_string(p->gpus_per_node) + " GPUs are " +
                     std::to_string(int64_t{p->num_nodes} * p->gpus_per_node) +
                     " GPUs; a cluster has at most 2^24 = 16777216");
  }

  const proto::IntraNode& intra = c.intra_node();
  switch (intra.kind()) {
    case proto::IntraNode::NVSWITCH: p->intra_node = IntraNodeKind::kNvswitch; break;
    case proto::IntraNode::NVLINK: p->intra_node = IntraNodeKind::kNvlink; break;
    case proto::IntraNode::PCIE: p->intra_node = IntraNodeKind::kPcie; break;
    case proto::IntraNode::UNLIMITED: p->intra_node = IntraNodeKind::kUnlimited; break;
    default:
      errors.push_back(source.Where("intra_node.kind") + ": required; valid: " +
                       KindNames(proto::IntraNode::Kind_descriptor()));
  }
  if (intra.bandwidth().empty()) {
    required("intra_node.bandwidth", "450GB/s");
  } else {
    check(ParseBandwidth(source.Where("intra_node.bandwidth"), intra.bandwidth(),
                         &p->intra_bandwidth_bytes_per_s));
  }
  if (!intra.latency().empty()) {
    check(ParseDuration(source.Where("intra_node.latency"), intra.latency(), &p->intra_latency_s));
  }

  // The NICs and the network matter with more than one node; a one-node preset keeps them so
  // that --nodes scales it, and they are checked whenever given.
  const bool multi_node = p->num_nodes > 1;
  const proto::Nic& nic = c.nic();
  switch (nic.attachment()) {
    case proto::Nic::PER_GPU: p->nic_attachment = NicAttachment::kPerGpu; break;
    case proto::Nic::PER_NODE: p->nic_attachment = NicAttachment::kPerNode; break;
    default:
      if (multi_node) {
        errors.push_back(source.Where("nic.attachment") + ": required with " +
                         std::to_string(p->num_nodes) + " nodes; valid: " +
                         KindNames(proto::Nic::Attachment_descriptor()));
      }
  }
  if (!nic.bandwidth().empty()) {
    check(ParseBandwidth(source.Where("nic.bandwidth"), nic.bandwidth(),
                         &p->nic_bandwidth_bytes_per_s));
  } else if (multi_node) {
    errors.push_back(source.Where("nic.bandwidth") + ": required with " +
                     std::to_string(p->num_nodes) + " nodes; e.g. 400Gbps");
  }
  if (!nic.latency().empty()) {
    check(ParseDuration(source.Where("nic.latency"), nic.latency(), &p->nic_latency_s));
  }
  const proto::Network& network = c.network();
  switch (network.topology()) {
    case proto::Network::SINGLE_SWITCH: p->topology = Topology::kSingleSwitch; break;
    case proto::Network::FAT_TREE: p->topology = Topology::kFatTree; break;
    case proto::Network::RAIL_OPTIMIZED: p->topology = Topology::kRailOptimized; break;
    default:
      if (multi_node) {
        errors.push_back(source.Where("network.topology") + ": required with " +
                         std::to_string(p->num_nodes) + " nodes; valid: " +
                         KindNames(proto::Network::Topology_descriptor()));
      }
  }
  const bool has_leaves = network.topology() == proto::Network::FAT_TREE ||
                          network.topology() == proto::Network::RAIL_OPTIMIZED;
  p->nodes_per_leaf = network.nodes_per_leaf();
  if (has_leaves && (p->nodes_per_leaf < 1 || p->nodes_per_leaf > kMaxGpus)) {
    errors.push_back(source.Where("network.nodes_per_leaf") + ": " +
                     std::to_string(network.nodes_per_leaf()) + "; " +
                     proto::Network::Topology_Name(network.topology()) +
                     " needs the nodes under one leaf switch, from 1 to 2^24");
  }
  if (network.topology() == proto::Network::RAIL_OPTIMIZED &&
      nic.attachment() == proto::Nic::PER_NODE) {
    errors.push_back(source.Where("network.topology") +
                     ": RAIL_OPTIMIZED needs a NIC per GPU (nic.attachment PER_GPU); got PER_NODE");
  }
  p->oversubscription = network.has_oversubscription() ? network.oversubscription() : 1;
  if (!(p->oversubscription >= 1 && p->oversubscription <= 1e6)) {
    errors.push_back(source.Where("network.oversubscription") + ": " +
                     ShortestText(network.oversubscription()) +
                     "; the ratio of leaf down- to uplink bandwidth is from 1 (non-blocking) to 1e6");
  }
  if (!network.uplink_latency().empty()) {
    check(ParseDuration(source.Where("network.uplink_latency"), network.uplink_latency(),
                        &p->uplink_latency_s));
  }
  if (errors.empty()) return Status();
  std::string message;
  for (const std::string& e : errors) message += (message.empty() ? "" : "\n") + e;
  return Status::InvalidInput(message);
}

std::string Rate(double bytes_per_s) {
  if (std::isinf(bytes_per_s)) return "inf";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.4g GB/s", bytes_per_s / 1e9);
  return buffer;
}

}  // namespace

const std::vector<ClusterPreset>& AllClusterPresets() { return Presets(); }

std::string ClusterPresetNames() {
  std::vector<std::string> names;
  for (const ClusterPreset& preset : Presets()) names.emplace_back(preset.name);
  return JoinNames(names);
}

const ClusterPreset* FindClusterPreset(std::string_view name) {
  for (const ClusterPreset& preset : Presets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

std::string ClusterSettingPaths() { return JoinNames(SettingPaths()); }

Status ApplyClusterSetting(std::string_view assignment, const Locator& where,
                           proto::Cluster* cluster) {
  const size_t equals = assignment.find('=');
  if (equals == std::string_view::npos) {
    return Status::InvalidInput(where.Where("set") + " " + Printable(assignment) +
                                ": expected PATH=VALUE, e.g. " + where.Name("set") +
                                " nic.bandwidth=200Gbps");
  }
  const std::string path(assignment.substr(0, equals));
  return SetFieldFromText(path, assignment.substr(equals + 1), where.Where("set." + path),
                          cluster);
}

Status LoadCluster(const PlatformChoice& choice, const Locator& where, PlatformSpec* platform) {
  *platform = PlatformSpec();
  const std::string& name = choice.platform;
  const bool xml = EndsWith(name, ".xml");
  proto::Cluster cluster;
  ConfigLocations locations;
  bool from_file = false;
  if (xml) {
    // An XML platform brings its hosts and links; the GPU (memory, peak FLOP/s) is an H100 SXM
    // unless set.gpu.* says otherwise.
    if (!std::ifstream(name)) {
      return where.Invalid("platform", "cannot read '" + Printable(name) + "'");
    }
    if (choice.hosts.empty()) {
      return where.Invalid("hosts", "required with an XML platform; give the host of every GPU "
                                    "in order, e.g. " + where.Name("hosts") +
                                    " gpu0,gpu1,gpu2,gpu3");
    }
    if (choice.nodes != 0) {
      return where.Invalid("nodes", "applies to presets and cluster files, not to the XML "
                                    "platform " + name);
    }
    for (const std::string& set : choice.sets) {
      if (set.rfind("gpu.", 0) != 0) {
        return where.Invalid("set." + set.substr(0, set.find('=')),
                             "an XML platform's links come from " + name +
                                 "; only gpu.* keys apply");
      }
    }
    XmlPlatform xml_platform;
    RETURN_IF_ERROR(ReadSimGridXml(name, &xml_platform));
    const std::set<std::string> known(xml_platform.hosts.begin(), xml_platform.hosts.end());
    std::string missing;
    for (const std::string& host : choice.hosts) {
      if (known.count(host) == 0) missing += (missing.empty() ? "" : ", ") + Quoted(host);
    }
    if (!missing.empty()) {
      std::string valid;
      for (size_t i = 0; i < xml_platform.hosts.size() && i < 16; ++i) {
        valid += (i == 0 ? "" : ", ") + Printable(xml_platform.hosts[i]);
      }
      if (xml_platform.hosts.size() > 16) {
        valid += ", ... (" + std::to_string(xml_platform.hosts.size()) + " hosts)";
      }
      return where.Invalid("hosts", missing + " not in " + name + "; its hosts: " + valid);
    }
    Status status = ParseConfig(FindClusterPreset("ideal")->text, ConfigFormat::kTextProto,
                                "ideal", &cluster, nullptr);
    if (!status.ok()) return Status::Internal(status.message());
    cluster.set_name(name);
    cluster.set_description("SimGrid XML platform " + name);
  } else if (const ClusterPreset* preset = FindClusterPreset(name)) {
    Status status = ParseConfig(preset->text, ConfigFormat::kTextProto, std::string(preset->name),
                                &cluster, nullptr);
    if (!status.ok()) return Status::Internal("preset " + name + ": " + status.message());
  } else if (name.find('.') != std::string::npos || name.find('/') != std::string::npos) {
    RETURN_IF_ERROR(ReadConfigFile(name, &cluster, &locations));
    from_file = true;
    if (cluster.name().empty()) cluster.set_name(name);
  } else {
    std::vector<std::string> names;
    for (const ClusterPreset& p : Presets()) names.emplace_back(p.name);
    return where.Invalid("platform",
                         UnknownName("platform", name, names,
                                     "a cluster file (.textproto, .json, .yaml) or a SimGrid .xml"));
  }

  FieldSource source(where, name, from_file ? &locations : nullptr);
  if (choice.nodes != 0) {
    cluster.set_nodes(choice.nodes);
    source.Override("nodes", "nodes");
  }
  const bool ideal = name == "ideal";
  if (!choice.p2p_latency.empty() || !choice.p2p_bandwidth.empty()) {
    if (!ideal) {
      return where.Invalid(!choice.p2p_latency.empty() ? "p2p_latency" : "p2p_bandwidth",
                           "applies to " + where.Name("platform") + " ideal only; use " +
                               where.Name("set") + " intra_node.latency=... or " +
                               where.Name("set") + " intra_node.bandwidth=... on " + name);
    }
    if (!choice.p2p_latency.empty()) {
      cluster.mutable_intra_node()->set_latency(choice.p2p_latency);
      source.Override("intra_node.latency", "p2p_latency");
    }
    if (!choice.p2p_bandwidth.empty()) {
      cluster.mutable_intra_node()->set_bandwidth(choice.p2p_bandwidth);
      source.Override("intra_node.bandwidth", "p2p_bandwidth");
    }
  }
  for (const std::string& set : choice.sets) {
    RETURN_IF_ERROR(ApplyClusterSetting(set, where, &cluster));
    const std::string path = set.substr(0, set.find('='));
    source.Override(path, "set." + path);
  }
  RETURN_IF_ERROR(ConvertCluster(cluster, source, platform));
  if (xml) {
    platform->xml_file = name;
    platform->xml_hosts = choice.hosts;
    platform->xml_hosts_where = where.Where("hosts");
    platform->gpus_per_node = static_cast<int32_t>(choice.hosts.size());
    platform->num_nodes = 1;
  }
  return Status();
}

Status BuildPlatform(const PlatformChoice& choice, const ParallelLayout& layout,
                     const Locator& where, PlatformSpec* platform) {
  RETURN_IF_ERROR(LoadCluster(choice, where, platform));
  return PlaceRanks(layout, choice.placement, where, platform);
}

std::string DescribePlatform(const PlatformSpec& p) {
  std::string out;
  const std::string gpus =
      p.gpus_per_node == 0 ? "as many GPUs as the run needs" : std::to_string(p.gpus_per_node) +
                                                                   " GPUs per node";
  out += gpus + " (" + p.gpu.name + ": " + HumanFlops(p.gpu.dense_bf16_flops_per_s) + "/s bf16, " +
         HumanBytes(static_cast<double>(p.gpu.memory_bytes)) + ")";
  switch (p.intra_node) {
    case IntraNodeKind::kNvswitch: out += "; NVSwitch " + Rate(p.intra_bandwidth_bytes_per_s) +
                                          " per GPU port"; break;
    case IntraNodeKind::kNvlink: out += "; NVLink " + Rate(p.intra_bandwidth_bytes_per_s) +
                                        " per GPU pair"; break;
    case IntraNodeKind::kPcie: out += "; PCIe " + Rate(p.intra_bandwidth_bytes_per_s) +
                                      " per GPU port"; break;
    case IntraNodeKind::kUnlimited: out += "; fat pipe " + Rate(p.intra_bandwidth_bytes_per_s);
      break;
  }
  if (p.nic_bandwidth_bytes_per_s > 0) {
    out += "; NIC " + Rate(p.nic_bandwidth_bytes_per_s) +
           (p.nic_attachment == NicAttachment::kPerGpu ? " per GPU" : " per node");
    switch (p.topology) {
      case Topology::kSingleSwitch: out += ", one switch"; break;
      case Topology::kFatTree: out += ", fat-tree " + std::to_string(p.nodes_per_leaf) +
                                      " nodes/leaf"; break;
      case Topology::kRailOptimized: out += ", rail-optimized " +
                                            std::to_string(p.nodes_per_leaf) + " nodes/leaf"; break;
    }
  }
  return out;
}

}  // namespace ppsim
