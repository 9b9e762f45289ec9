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

#include "base/embedded.h"
#include "base/escape.h"
#include "base/names.h"
#include "base/numbers.h"
#include "config/config_file.h"
#include "config/units.h"
#include "platforms/xml_platform.h"

namespace ppsim {
namespace {

namespace pb = google::protobuf;

// The defaults of a cluster file's gpu block, the A100's: the fractions of peak that the op cost
// model (models/op_costs.h) gives a large GEMM with full waves, flash attention and a streaming
// kernel. The presets cite their own (platforms/presets/).
// - matmul 0.8: the zero-bubble paper's profiled W times (arXiv 2401.10241v1, Table 9: W is only
//   the weight-gradient GEMMs) of its 1.5B, 6.2B and 14.6B models on A100 are 80.5%, 81% and 76%
//   of the peak for the FLOPs counted here, with 94-98% of the tiles useful (so 0.78-0.85 before
//   quantization). Users calibrate it per GPU with --set gpu.matmul_efficiency=X.
// - attention 0.6: FlashAttention-2 reaches 50-73% of A100's peak in the forward and less in the
//   backward (Dao 2023, arXiv 2307.08691, Sec. 4.1); FlashAttention-3 75% on H100 (Shah et al.
//   2024, arXiv 2407.08608). An assumption for the other GPUs.
// - memory 0.85: streaming kernels reach about this share of the HBM bandwidth. An assumption.
constexpr double kDefaultMatmulEfficiency = 0.8;
constexpr double kDefaultAttentionEfficiency = 0.6;
constexpr double kDefaultMemoryEfficiency = 0.85;

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
  void Override(const std::string& path, std::string field) { overrides_[path] = std::move(field); }
  // `path` of the cluster was set at `where` (a calibration file's line), named there as is.
  void OverrideAt(const std::string& path, std::string where) { located_[path] = std::move(where); }

  // "FILE:LINE:COL: nic.bandwidth", "--set nic.bandwidth", "--nodes", "--platform X: path".
  std::string Where(const std::string& path) const {
    auto it = overrides_.find(path);
    if (it != overrides_.end()) return where_.Where(it->second);
    auto located = located_.find(path);
    if (located != located_.end()) return located->second + ": " + path;
    if (file_ != nullptr) return file_->Where(path) + ": " + path;
    return where_.Where("platform") + " " + preset_ + ": " + path;
  }

 private:
  const Locator& where_;
  std::string preset_;
  const ConfigLocations* file_;
  std::map<std::string, std::string> overrides_;
  std::map<std::string, std::string> located_;
};

std::string KindNames(const pb::EnumDescriptor* type) { return JoinNames(EnumValueNames(type)); }

std::string ShortestText(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, end);
}

// GPUs are numbered in 32 bits and a cluster costs nothing per GPU it does not use, so the limit
// is only what the numbering can hold with room for links (two per GPU port).
constexpr int64_t kMaxGpus = int64_t{1} << 24;

void Required(const FieldSource& source, const std::string& path, const std::string& example,
              ErrorList* errors) {
  errors->Add(source.Where(path) + ": required; e.g. " + example);
}

// The name, description and GPU: its peaks, memory and efficiencies.
void ConvertGpu(const proto::Cluster& c, const FieldSource& source, PlatformSpec* p,
                ErrorList* errors) {
  p->name = c.name();
  p->description = c.description();
  const proto::Gpu& gpu = c.gpu();
  p->gpu.name = gpu.name().empty() ? "GPU" : gpu.name();
  if (gpu.dense_bf16().empty()) {
    Required(source, "gpu.dense_bf16", "989TFLOP/s", errors);
  } else {
    errors->Check(ParseFlopRate(source.Where("gpu.dense_bf16"), gpu.dense_bf16(),
                                &p->gpu.dense_bf16_flops_per_s));
  }
  if (!gpu.dense_fp8().empty()) {
    errors->Check(ParseFlopRate(source.Where("gpu.dense_fp8"), gpu.dense_fp8(),
                                &p->gpu.dense_fp8_flops_per_s));
  }
  p->gpu.mxfp8 = gpu.mxfp8();
  if (gpu.memory().empty()) {
    Required(source, "gpu.memory", "80GiB", errors);
  } else {
    const Status status = ParseSize(source.Where("gpu.memory"), gpu.memory(), &p->gpu.memory_bytes);
    errors->Check(status);
    if (status.ok() && p->gpu.memory_bytes == 0) {
      errors->Add(source.Where("gpu.memory") + ": must be more than 0 bytes");
    }
  }
  if (!gpu.memory_bandwidth().empty()) {
    errors->Check(ParseBandwidth(source.Where("gpu.memory_bandwidth"), gpu.memory_bandwidth(),
                                 &p->gpu.memory_bandwidth_bytes_per_s));
  }
  if (gpu.sms() < 0 || gpu.sms() > 100000) {
    errors->Add(source.Where("gpu.sms") + ": " + std::to_string(gpu.sms()) +
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
                   kDefaultMemoryEfficiency, &p->gpu.memory_efficiency},
        // Unset: the 16-bit GEMMs' value.
        std::tuple{"gpu.matmul_efficiency_fp8", gpu.has_matmul_efficiency_fp8(),
                   gpu.matmul_efficiency_fp8(),
                   gpu.has_matmul_efficiency() ? gpu.matmul_efficiency() : kDefaultMatmulEfficiency,
                   &p->gpu.matmul_efficiency_fp8}}) {
    *out = has ? value : fallback;
    if (!(*out > 0 && *out <= 1)) {
      errors->Add(source.Where(field) + ": " + FormatNumber(*out) +
                  " is not a fraction of peak; give a value in (0, 1]");
    }
  }
  p->gpu_flops_per_s = p->gpu.dense_bf16_flops_per_s > 0 ? p->gpu.dense_bf16_flops_per_s : 1e15;
}

// The nodes and the GPUs in each.
void ConvertNodes(const proto::Cluster& c, const FieldSource& source, PlatformSpec* p,
                  ErrorList* errors) {
  p->num_nodes = c.has_nodes() ? c.nodes() : 1;
  if (p->num_nodes < 1) {
    errors->Add(source.Where("nodes") + ": " + std::to_string(c.nodes()) +
                " nodes; give at least 1");
  }
  if (!c.has_gpus_per_node()) {
    Required(source, "gpus_per_node", "8", errors);
  } else {
    p->gpus_per_node = c.gpus_per_node();
    if (p->gpus_per_node < 0 || (p->gpus_per_node == 0 && p->num_nodes > 1)) {
      errors->Add(source.Where("gpus_per_node") + ": " + std::to_string(c.gpus_per_node()) +
                  "; give at least 1 (0, as many as the run needs, only with one node)");
    }
  }

  if (p->num_nodes >= 1 && p->gpus_per_node >= 1 &&
      int64_t{p->num_nodes} * p->gpus_per_node > kMaxGpus) {
    errors->Add(source.Where("nodes") + ": " + std::to_string(p->num_nodes) + " nodes of " +
                std::to_string(p->gpus_per_node) + " GPUs are " +
                std::to_string(int64_t{p->num_nodes} * p->gpus_per_node) +
                " GPUs; a cluster has at most 2^24 = 16777216");
  }
}

// The fabric inside a node.
void ConvertIntraNode(const proto::Cluster& c, const FieldSource& source, PlatformSpec* p,
                      ErrorList* errors) {
  const proto::IntraNode& intra = c.intra_node();
  switch (intra.kind()) {
    case proto::IntraNode::NVSWITCH:
      p->intra_node = IntraNodeKind::kNvswitch;
      break;
    case proto::IntraNode::NVLINK:
      p->intra_node = IntraNodeKind::kNvlink;
      break;
    case proto::IntraNode::PCIE:
      p->intra_node = IntraNodeKind::kPcie;
      break;
    case proto::IntraNode::UNLIMITED:
      p->intra_node = IntraNodeKind::kUnlimited;
      break;
    default:
      errors->Add(source.Where("intra_node.kind") +
                  ": required; valid: " + KindNames(proto::IntraNode::Kind_descriptor()));
  }
  if (intra.bandwidth().empty()) {
    Required(source, "intra_node.bandwidth", "450GB/s", errors);
  } else {
    errors->Check(ParseBandwidth(source.Where("intra_node.bandwidth"), intra.bandwidth(),
                                 &p->intra_bandwidth_bytes_per_s));
  }
  if (!intra.latency().empty()) {
    errors->Check(
        ParseDuration(source.Where("intra_node.latency"), intra.latency(), &p->intra_latency_s));
  }
}

// The NICs and the network between nodes.
void ConvertNetwork(const proto::Cluster& c, const FieldSource& source, PlatformSpec* p,
                    ErrorList* errors) {
  // The NICs and the network matter with more than one node; a one-node preset keeps them so
  // that --nodes scales it, and they are checked whenever given.
  const bool multi_node = p->num_nodes > 1;
  const proto::Nic& nic = c.nic();
  switch (nic.attachment()) {
    case proto::Nic::PER_GPU:
      p->nic_attachment = NicAttachment::kPerGpu;
      break;
    case proto::Nic::PER_NODE:
      p->nic_attachment = NicAttachment::kPerNode;
      break;
    default:
      if (multi_node) {
        errors->Add(source.Where("nic.attachment") + ": required with " +
                    std::to_string(p->num_nodes) +
                    " nodes; valid: " + KindNames(proto::Nic::Attachment_descriptor()));
      }
  }
  if (!nic.bandwidth().empty()) {
    errors->Check(ParseBandwidth(source.Where("nic.bandwidth"), nic.bandwidth(),
                                 &p->nic_bandwidth_bytes_per_s));
  } else if (multi_node) {
    errors->Add(source.Where("nic.bandwidth") + ": required with " + std::to_string(p->num_nodes) +
                " nodes; e.g. 400Gbps");
  }
  if (!nic.latency().empty()) {
    errors->Check(ParseDuration(source.Where("nic.latency"), nic.latency(), &p->nic_latency_s));
  }
  const proto::Network& network = c.network();
  switch (network.topology()) {
    case proto::Network::SINGLE_SWITCH:
      p->topology = Topology::kSingleSwitch;
      break;
    case proto::Network::FAT_TREE:
      p->topology = Topology::kFatTree;
      break;
    case proto::Network::RAIL_OPTIMIZED:
      p->topology = Topology::kRailOptimized;
      break;
    default:
      if (multi_node) {
        errors->Add(source.Where("network.topology") + ": required with " +
                    std::to_string(p->num_nodes) +
                    " nodes; valid: " + KindNames(proto::Network::Topology_descriptor()));
      }
  }
  const bool has_leaves = network.topology() == proto::Network::FAT_TREE ||
                          network.topology() == proto::Network::RAIL_OPTIMIZED;
  p->nodes_per_leaf = network.nodes_per_leaf();
  if (has_leaves && (p->nodes_per_leaf < 1 || p->nodes_per_leaf > kMaxGpus)) {
    errors->Add(source.Where("network.nodes_per_leaf") + ": " +
                std::to_string(network.nodes_per_leaf()) + "; " +
                proto::Network::Topology_Name(network.topology()) +
                " needs the nodes under one leaf switch, from 1 to 2^24");
  }
  if (network.topology() == proto::Network::RAIL_OPTIMIZED &&
      nic.attachment() == proto::Nic::PER_NODE) {
    errors->Add(source.Where("network.topology") +
                ": RAIL_OPTIMIZED needs a NIC per GPU (nic.attachment PER_GPU); got PER_NODE");
  }
  p->oversubscription = network.has_oversubscription() ? network.oversubscription() : 1;
  if (!(p->oversubscription >= 1 && p->oversubscription <= 1e6)) {
    errors->Add(source.Where("network.oversubscription") + ": " +
                ShortestText(network.oversubscription()) +
                "; the ratio of leaf down- to uplink bandwidth is from 1 (non-blocking) to 1e6");
  }
  if (!network.uplink_latency().empty()) {
    errors->Check(ParseDuration(source.Where("network.uplink_latency"), network.uplink_latency(),
                                &p->uplink_latency_s));
  }
}

// The GPU's link to host memory (for activation offload, issue 30): optional, checked when given.
void ConvertHostLink(const proto::Cluster& c, const FieldSource& source, PlatformSpec* p,
                     ErrorList* errors) {
  const proto::HostLink& link = c.host_link();
  if (!link.bandwidth().empty()) {
    errors->Check(ParseBandwidth(source.Where("host_link.bandwidth"), link.bandwidth(),
                                 &p->host_link_bandwidth_bytes_per_s));
  }
  if (!link.latency().empty()) {
    errors->Check(
        ParseDuration(source.Where("host_link.latency"), link.latency(), &p->host_link_latency_s));
  }
}

// Checks the cluster and converts it, collecting every problem.
Status ConvertCluster(const proto::Cluster& c, const FieldSource& source, PlatformSpec* p) {
  ErrorList errors;
  ConvertGpu(c, source, p, &errors);
  ConvertNodes(c, source, p, &errors);
  ConvertIntraNode(c, source, p, &errors);
  ConvertNetwork(c, source, p, &errors);
  ConvertHostLink(c, source, p, &errors);
  return errors.ToStatus();
}

// The file without its leading comment and blank lines.
std::string_view WithoutLeadingComments(std::string_view text) {
  while (!text.empty() && (text[0] == '#' || text[0] == '\n')) {
    const size_t end = text.find('\n');
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  return text;
}

// The presets: platforms/presets/NAME.textproto, embedded at build time. Each file is a block of
// comment lines citing the sources of its numbers, then the cluster as `ppsim platforms NAME`
// prints it. A file is read as a user's cluster file is (ParseConfig, then ConvertCluster), once,
// when a preset is first needed; one that fails is a bug in this build, reported as Internal with
// the messages located in the file.
struct PresetTable {
  std::vector<ClusterPreset> presets;
  std::vector<proto::Cluster> clusters;  // presets[i] as read
  std::vector<Status> statuses;          // OK, or why presets[i] does not load
};

const PresetTable& Presets() {
  static const PresetTable kTable = [] {
    PresetTable table;
    for (const EmbeddedFile& file : ClusterPresetFiles()) {
      table.statuses.push_back(ReadClusterPresetFile(file, &table.presets.emplace_back(),
                                                     &table.clusters.emplace_back()));
    }
    return table;
  }();
  return kTable;
}

std::string Rate(double bytes_per_s) {
  if (std::isinf(bytes_per_s)) return "inf";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.4g GB/s", bytes_per_s / 1e9);
  return buffer;
}

}  // namespace

Status ReadClusterPresetFile(const EmbeddedFile& file, ClusterPreset* preset,
                             proto::Cluster* cluster) {
  preset->name = EmbeddedFileStem(file);
  preset->file = "platforms/" + std::string(file.name);
  preset->text = WithoutLeadingComments(file.bytes);
  ConfigLocations locations;
  Status status =
      ParseConfig(file.bytes, ConfigFormat::kTextProto, preset->file, cluster, &locations);
  std::string errors;
  if (status.ok()) {
    if (cluster->name() != preset->name) {
      errors = locations.Where("name") + ": name: " + Quoted(cluster->name()) +
               " differs from the file's name, " + preset->name + "\n";
    }
    const FieldNames names;
    PlatformSpec platform;
    status = ConvertCluster(*cluster, FieldSource(names, preset->name, &locations), &platform);
  }
  if (!status.ok()) errors += status.message() + "\n";
  if (errors.empty()) return Status();
  errors.pop_back();
  return Status::Internal("the cluster preset " + preset->name +
                          " does not load (a bug in this build of ppsim):\n" + errors);
}

const std::vector<ClusterPreset>& AllClusterPresets() { return Presets().presets; }

std::string ClusterPresetNames() {
  std::vector<std::string> names;
  for (const ClusterPreset& preset : AllClusterPresets()) names.push_back(preset.name);
  return JoinNames(names);
}

const ClusterPreset* FindClusterPreset(std::string_view name) {
  for (const ClusterPreset& preset : AllClusterPresets()) {
    if (preset.name == name) return &preset;
  }
  return nullptr;
}

Status ReadClusterPreset(const ClusterPreset& preset, proto::Cluster* cluster) {
  const PresetTable& table = Presets();
  const size_t i = &preset - table.presets.data();
  *cluster = table.clusters[i];
  return table.statuses[i];
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
  return SetFieldFromText(path, assignment.substr(equals + 1), where.Where("set." + path), cluster);
}

namespace {

// The choice's calibration (in memory, else read from its file) applied to `cluster`.
Status ApplyChosenCalibration(const PlatformChoice& choice, const Locator& where,
                              proto::Cluster* cluster, CalibrationApplied* applied) {
  if (choice.calibration != nullptr) {
    return ApplyCalibration(*choice.calibration, where.Where("calibration"), cluster, applied);
  }
  LoadedCalibration loaded;
  RETURN_IF_ERROR(ReadCalibration(choice.calibration_file, where, "calibration", &loaded));
  return ApplyCalibration(loaded, where.Where("calibration"), cluster, applied);
}

}  // namespace

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
      return where.Invalid("hosts",
                           "required with an XML platform; give the host of every GPU "
                           "in order, e.g. " +
                               where.Name("hosts") + " gpu0,gpu1,gpu2,gpu3");
    }
    if (choice.nodes != 0) {
      return where.Invalid("nodes",
                           "applies to presets and cluster files, not to the XML "
                           "platform " +
                               name);
    }
    for (const std::string& set : choice.sets) {
      if (set.rfind("gpu.", 0) != 0) {
        return where.Invalid(
            "set." + set.substr(0, set.find('=')),
            "an XML platform's links come from " + name + "; only gpu.* keys apply");
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
    RETURN_IF_ERROR(ReadClusterPreset(*FindClusterPreset("ideal"), &cluster));
    cluster.set_name(name);
    cluster.set_description("SimGrid XML platform " + name);
  } else if (const ClusterPreset* preset = FindClusterPreset(name)) {
    RETURN_IF_ERROR(ReadClusterPreset(*preset, &cluster));
  } else if (name.find('.') != std::string::npos || name.find('/') != std::string::npos) {
    RETURN_IF_ERROR(ReadConfigFile(name, &cluster, &locations));
    from_file = true;
    if (cluster.name().empty()) cluster.set_name(name);
  } else {
    std::vector<std::string> names;
    for (const ClusterPreset& p : AllClusterPresets()) names.push_back(p.name);
    return where.Invalid(
        "platform", UnknownName("platform", name, names,
                                "a cluster file (.textproto, .json, .yaml) or a SimGrid .xml"));
  }

  FieldSource source(where, name, from_file ? &locations : nullptr);
  if (choice.nodes != 0) {
    cluster.set_nodes(choice.nodes);
    source.Override("nodes", "nodes");
  }
  int64_t calibrated_reserve_bytes = -1;
  if (!choice.calibration_file.empty() || choice.calibration != nullptr) {
    if (xml) {
      return where.Invalid("calibration", "applies to presets and cluster files; the links of " +
                                              name + " are SimGrid's");
    }
    CalibrationApplied applied;
    RETURN_IF_ERROR(ApplyChosenCalibration(choice, where, &cluster, &applied));
    for (const auto& [path, at] : applied.paths) source.OverrideAt(path, at);
    calibrated_reserve_bytes = applied.memory_reserve_bytes;
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
  platform->calibrated_memory_reserve_bytes = calibrated_reserve_bytes;
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
  const std::string gpus = p.gpus_per_node == 0
                               ? "as many GPUs as the run needs"
                               : std::to_string(p.gpus_per_node) + " GPUs per node";
  out += gpus + " (" + p.gpu.name + ": " + HumanFlops(p.gpu.dense_bf16_flops_per_s) + "/s bf16, " +
         HumanBytes(static_cast<double>(p.gpu.memory_bytes)) + ")";
  switch (p.intra_node) {
    case IntraNodeKind::kNvswitch:
      out += "; NVSwitch " + Rate(p.intra_bandwidth_bytes_per_s) + " per GPU port";
      break;
    case IntraNodeKind::kNvlink:
      out += "; NVLink " + Rate(p.intra_bandwidth_bytes_per_s) + " per GPU pair";
      break;
    case IntraNodeKind::kPcie:
      out += "; PCIe " + Rate(p.intra_bandwidth_bytes_per_s) + " per GPU port";
      break;
    case IntraNodeKind::kUnlimited:
      out += "; fat pipe " + Rate(p.intra_bandwidth_bytes_per_s);
      break;
  }
  if (p.nic_bandwidth_bytes_per_s > 0) {
    out += "; NIC " + Rate(p.nic_bandwidth_bytes_per_s) +
           (p.nic_attachment == NicAttachment::kPerGpu ? " per GPU" : " per node");
    switch (p.topology) {
      case Topology::kSingleSwitch:
        out += ", one switch";
        break;
      case Topology::kFatTree:
        out += ", fat-tree " + std::to_string(p.nodes_per_leaf) + " nodes/leaf";
        break;
      case Topology::kRailOptimized:
        out += ", rail-optimized " + std::to_string(p.nodes_per_leaf) + " nodes/leaf";
        break;
    }
  }
  if (p.host_link_bandwidth_bytes_per_s > 0) {
    out += "; host link " + Rate(p.host_link_bandwidth_bytes_per_s) + " per GPU";
  }
  return out;
}

}  // namespace ppsim
