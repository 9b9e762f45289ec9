#include "platforms/platform.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "base/escape.h"
#include "base/names.h"
#include "base/numbers.h"

namespace ppsim {
namespace {

int32_t NicsPerNode(const PlatformSpec& p) {
  return p.nic_attachment == NicAttachment::kPerGpu ? p.gpus_per_node : 1;
}

int64_t NumIntraLinks(const PlatformSpec& p) {
  const int64_t per_node = p.gpus_per_node;
  switch (p.intra_node) {
    case IntraNodeKind::kUnlimited:
      return 1;
    case IntraNodeKind::kNvswitch:
    case IntraNodeKind::kPcie:
      return 2 * per_node * p.num_nodes;
    case IntraNodeKind::kNvlink:
      return p.num_nodes * per_node * (per_node - 1);
  }
  return 0;
}

int64_t NumNicLinks(const PlatformSpec& p) {
  return p.num_nodes > 1 ? 2 * int64_t{p.num_nodes} * NicsPerNode(p) : 0;
}

int32_t NumLeafGroups(const PlatformSpec& p) {
  return (p.num_nodes + p.nodes_per_leaf - 1) / p.nodes_per_leaf;
}

// The leaf switch of NIC `nic` of `node`; -1 when every NIC hangs off one switch.
int32_t LeafOf(const PlatformSpec& p, int32_t node, int32_t nic) {
  if (p.num_nodes <= 1) return -1;
  switch (p.topology) {
    case Topology::kSingleSwitch:
      return -1;
    case Topology::kFatTree:
      return node / p.nodes_per_leaf;
    case Topology::kRailOptimized:
      return (node / p.nodes_per_leaf) * NicsPerNode(p) + nic;
  }
  return -1;
}

int32_t NumLeaves(const PlatformSpec& p) {
  if (p.num_nodes <= 1 || p.topology == Topology::kSingleSwitch) return 0;
  return p.topology == Topology::kFatTree ? NumLeafGroups(p) : NumLeafGroups(p) * NicsPerNode(p);
}

std::string GpuName(const PlatformSpec& p, int32_t gpu) {
  return "node" + std::to_string(p.NodeOf(gpu)) + ".gpu" + std::to_string(gpu % p.gpus_per_node);
}

}  // namespace

int32_t PlatformSpec::num_gpus() const {
  return xml_file.empty() ? gpus_per_node * num_nodes : static_cast<int32_t>(xml_hosts.size());
}

int64_t PlatformSpec::num_links() const {
  return NumIntraLinks(*this) + NumNicLinks(*this) + 2 * int64_t{NumLeaves(*this)};
}

LinkSpec PlatformSpec::Link(int32_t id) const {
  LinkSpec link;
  const char* direction = id % 2 == 0 ? ".tx" : ".rx";
  const int64_t intra = NumIntraLinks(*this);
  if (id < intra) {
    link.bandwidth_bytes_per_s = intra_bandwidth_bytes_per_s;
    link.latency_s = intra_latency_s;
    link.fatpipe = intra_node == IntraNodeKind::kUnlimited;
    switch (intra_node) {
      case IntraNodeKind::kUnlimited:
        link.name = "fabric";
        break;
      case IntraNodeKind::kNvswitch:
      case IntraNodeKind::kPcie:
        link.name = GpuName(*this, id / 2) +
                    (intra_node == IntraNodeKind::kPcie ? ".pcie" : ".nvlink") + direction;
        break;
      case IntraNodeKind::kNvlink: {
        const int32_t pairs = gpus_per_node * (gpus_per_node - 1);
        const int32_t node = id / pairs;
        const int32_t a = id % pairs / (gpus_per_node - 1);
        const int32_t other = id % pairs % (gpus_per_node - 1);
        const int32_t b = other < a ? other : other + 1;
        link.name = "node" + std::to_string(node) + ".gpu" + std::to_string(a) + "->gpu" +
                    std::to_string(b);
        break;
      }
    }
    return link;
  }
  link.inter_node = true;
  const int64_t nic_id = id - intra;
  if (nic_id < NumNicLinks(*this)) {
    const int64_t nic = nic_id / 2;
    link.name = "node" + std::to_string(nic / NicsPerNode(*this)) + ".nic" +
                std::to_string(nic % NicsPerNode(*this)) + direction;
    link.bandwidth_bytes_per_s = nic_bandwidth_bytes_per_s;
    link.latency_s = nic_latency_s;
    return link;
  }
  const int64_t leaf_id = nic_id - NumNicLinks(*this);
  const int32_t nics_per_leaf =
      topology == Topology::kFatTree ? nodes_per_leaf * NicsPerNode(*this) : nodes_per_leaf;
  link.name = "leaf" + std::to_string(leaf_id / 2) + (leaf_id % 2 == 0 ? ".up" : ".down");
  link.bandwidth_bytes_per_s = nics_per_leaf * nic_bandwidth_bytes_per_s / oversubscription;
  link.latency_s = uplink_latency_s;
  return link;
}

Route PlatformSpec::RouteBetween(int32_t src, int32_t dst) const {
  Route route;
  auto push = [&](int32_t link) { route.links[route.num_links++] = link; };
  const int32_t src_node = NodeOf(src);
  const int32_t dst_node = NodeOf(dst);
  const int32_t src_local = src % gpus_per_node;
  const int32_t dst_local = dst % gpus_per_node;
  if (src_node == dst_node) {
    switch (intra_node) {
      case IntraNodeKind::kUnlimited:
        push(0);
        route.sending_links = 1;
        break;
      case IntraNodeKind::kNvswitch:
      case IntraNodeKind::kPcie:
        push(2 * src);
        push(2 * dst + 1);
        route.sending_links = 1;
        break;
      case IntraNodeKind::kNvlink:
        push(src_node * gpus_per_node * (gpus_per_node - 1) + src_local * (gpus_per_node - 1) +
             (dst_local < src_local ? dst_local : dst_local - 1));
        route.sending_links = 1;
        break;
    }
    return route;
  }
  const int32_t nics = NicsPerNode(*this);
  int32_t src_nic = nics == 1 ? 0 : src_local;
  const int32_t dst_nic = nics == 1 ? 0 : dst_local;
  const int32_t nic_base = static_cast<int32_t>(NumIntraLinks(*this));
  const int32_t leaf_base = static_cast<int32_t>(nic_base + NumNicLinks(*this));
  if (intra_node == IntraNodeKind::kPcie) push(2 * src);
  if (Pxn() && src_nic != dst_nic) {
    // PXN: over NVSwitch to the GPU on the receiver's rail, out of that GPU's NIC.
    const int32_t proxy = src_node * gpus_per_node + dst_local;
    push(2 * src);
    push(2 * proxy + 1);
    src_nic = dst_nic;
  }
  push(nic_base + 2 * (src_node * nics + src_nic));
  const int32_t src_leaf = LeafOf(*this, src_node, src_nic);
  const int32_t dst_leaf = LeafOf(*this, dst_node, dst_nic);
  if (src_leaf != dst_leaf) {
    push(leaf_base + 2 * src_leaf);
    push(leaf_base + 2 * dst_leaf + 1);
  }
  route.sending_links = route.num_links;  // the sender's NIC and its leaf's uplink, and before
  if (src_leaf != dst_leaf) --route.sending_links;
  push(nic_base + 2 * (dst_node * nics + dst_nic) + 1);
  if (intra_node == IntraNodeKind::kPcie) push(2 * dst + 1);
  return route;
}

bool PlatformSpec::Pxn() const {
  return topology == Topology::kRailOptimized && intra_node == IntraNodeKind::kNvswitch &&
         NicsPerNode(*this) == gpus_per_node && num_nodes > 1;
}

namespace {

// Sum of latencies and smallest bandwidth along a route.
struct RouteFigures {
  double latency_s = 0;
  double bandwidth_bytes_per_s = std::numeric_limits<double>::infinity();
};

RouteFigures FiguresOf(const PlatformSpec& p, const Route& route) {
  RouteFigures f;
  for (int i = 0; i < route.num_links; ++i) {
    const LinkSpec link = p.Link(route.links[i]);
    f.latency_s += link.latency_s;
    f.bandwidth_bytes_per_s = std::min(f.bandwidth_bytes_per_s, link.bandwidth_bytes_per_s);
  }
  return f;
}

}  // namespace

double PlatformSpec::RouteLatency(int32_t src, int32_t dst) const {
  return FiguresOf(*this, RouteBetween(src, dst)).latency_s;
}

double PlatformSpec::RouteBandwidth(int32_t src, int32_t dst) const {
  return FiguresOf(*this, RouteBetween(src, dst)).bandwidth_bytes_per_s;
}

double PlatformSpec::UncontendedTransferTime(int32_t src, int32_t dst, int64_t bytes) const {
  return UncontendedTransferTime(RouteBetween(src, dst), bytes);
}

double PlatformSpec::UncontendedTransferTime(const Route& route, int64_t bytes) const {
  const RouteFigures f = FiguresOf(*this, route);
  return f.latency_s + static_cast<double>(bytes) / f.bandwidth_bytes_per_s;
}

Route PlatformSpec::SplicedRoute(int32_t src, int32_t dst, int32_t src_of_dst,
                                 int32_t dst_of_src) const {
  const Route out = RouteBetween(src, dst);
  const Route in = RouteBetween(src_of_dst, dst_of_src);
  Route route;
  for (int i = 0; i < out.sending_links; ++i) route.links[route.num_links++] = out.links[i];
  // A one-link route's link is both its halves: once if the two routes share it.
  const int receiving = in.num_links == 1 ? 0 : in.sending_links;
  for (int i = receiving; i < in.num_links; ++i) {
    if (route.num_links > 0 && route.links[route.num_links - 1] == in.links[i]) continue;
    route.links[route.num_links++] = in.links[i];
  }
  return route;
}

Status ParsePlacement(std::string_view what, std::string_view text, Placement* placement) {
  *placement = Placement();
  if (text == "contiguous") return Status();
  if (text == "round-robin") {
    placement->kind = PlacementKind::kRoundRobin;
    return Status();
  }
  placement->kind = PlacementKind::kExplicit;
  size_t start = 0;
  while (true) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(start, end - start);
    int64_t gpu = -1;
    if (!ParseWhole(item, &gpu) || gpu < 0 || gpu > std::numeric_limits<int32_t>::max()) {
      const std::string best = ClosestName(text, {"contiguous", "round-robin"});
      return Status::InvalidInput(std::string(what) + ": invalid placement " + Quoted(text) +
                                  "; valid: contiguous, round-robin, or a comma list of GPU "
                                  "numbers (the first GPU of each rank's group), e.g. 0,8,1,9" +
                                  (best.empty() ? "" : " (did you mean " + best + "?)"));
    }
    placement->gpus.push_back(static_cast<int32_t>(gpu));
    if (end == text.size()) break;
    start = end + 1;
  }
  return Status();
}

Status PlaceRanks(const ParallelLayout& layout, const Placement& placement, const Locator& where,
                  PlatformSpec* p) {
  const int32_t num_ranks = layout.pp;
  const int32_t dp = layout.dp;
  const int32_t tp_degree = layout.tp;
  const int32_t cp = layout.cp;
  // A rank's group: tp x cp GPUs; messages name both flags.
  const int32_t tp = layout.GpusPerRank();
  const std::string group_text =
      where.Name("tp") + " " + std::to_string(tp_degree) +
      (cp > 1 ? " x " + where.Name("cp") + " " + std::to_string(cp) : "");
  p->layout = layout;
  p->group_gpu.clear();
  const int32_t groups = num_ranks * dp;
  const int64_t needed = static_cast<int64_t>(groups) * tp;
  if (p->xml_file.empty() && p->gpus_per_node == 0) {
    // A cluster sized to the run (the `ideal` preset): one node with every GPU needed.
    p->gpus_per_node = static_cast<int32_t>(needed);
  }
  const std::string nodes_text =
      p->xml_file.empty() ? " (" + std::to_string(p->num_nodes) + " node" +
                                (p->num_nodes == 1 ? "" : "s") + " of " +
                                std::to_string(p->gpus_per_node) + "; more with " +
                                where.Name("nodes") + ")"
                          : " (the hosts of " + where.Name("hosts") + ")";
  if (needed > p->num_gpus()) {
    std::string need = std::to_string(num_ranks) + " ranks";
    if (dp > 1 || tp > 1) {
      need += " x " + where.Name("dp") + " " + std::to_string(dp) + " x " + group_text;
    }
    return where.Invalid("pp", need + " need " + std::to_string(needed) + " GPUs; platform " +
                                   p->name + " has " + std::to_string(p->num_gpus()) + nodes_text);
  }
  const int32_t per_node = p->xml_file.empty() ? p->gpus_per_node : p->num_gpus();
  // Tensor parallelism stays inside a node; a rank's tp x cp group either fits in a node or takes
  // whole nodes (context parallelism across nodes: Megatron's order, tp fastest then cp, puts
  // each CP slice of tp GPUs in one node and the CP peers of one TP index on other nodes).
  if (per_node % tp_degree != 0) {
    return where.Invalid("tp", std::to_string(tp_degree) + " does not divide the " +
                                   std::to_string(per_node) + " GPUs per node of " + p->name +
                                   "; a tensor-parallel group stays inside one node");
  }
  const bool spanning = tp > per_node;
  if (per_node % tp != 0 && tp % per_node != 0) {
    return where.Invalid("cp", where.Name("tp") + " " + std::to_string(tp_degree) + " x " +
                                   where.Name("cp") + " " + std::to_string(cp) + " = " +
                                   std::to_string(tp) +
                                   " neither divides nor is a multiple of the " +
                                   std::to_string(per_node) + " GPUs per node of " + p->name +
                                   "; a rank's group of GPUs fits in a node or takes whole nodes");
  }
  const int32_t nodes = p->xml_file.empty() ? p->num_nodes : 1;
  // GPU -> group using it, to find overlaps in explicit placements.
  std::unordered_map<int32_t, int32_t> owner;
  // group_gpu is indexed replica-major (replica × num_ranks + rank); j = rank × dp + replica.
  p->group_gpu.assign(static_cast<size_t>(groups), 0);
  if (placement.kind == PlacementKind::kExplicit &&
      static_cast<int32_t>(placement.gpus.size()) != groups) {
    return where.Invalid(
        "placement", std::to_string(placement.gpus.size()) + " GPUs for " +
                         std::to_string(groups) + " rank groups (" + where.Name("pp") + " " +
                         std::to_string(num_ranks) + " x " + where.Name("dp") + " " +
                         std::to_string(dp) + "); give the first GPU of each, rank-major: rank 0 "
                         "of every replica, then rank 1, ...");
  }
  for (int32_t j = 0; j < groups; ++j) {
    const int32_t rank = j / dp;
    const int32_t replica = j % dp;
    int32_t gpu = 0;
    switch (placement.kind) {
      case PlacementKind::kContiguous:
        gpu = j * tp;
        break;
      case PlacementKind::kRoundRobin:
        // Fits: groups <= nodes x groups_per_node, so no node gets more than it holds. A group
        // spanning nodes takes whole nodes, no node holds two groups: as contiguous.
        gpu = spanning ? j * tp : (j % nodes) * per_node + (j / nodes) * tp;
        break;
      case PlacementKind::kExplicit: {
        gpu = placement.gpus[j];
        const std::string entry = "entry " + std::to_string(j) + " (rank " +
                                  std::to_string(rank) + ", replica " + std::to_string(replica) +
                                  "): GPU " + std::to_string(gpu);
        if (gpu + tp > p->num_gpus()) {
          return where.Invalid("placement", entry + " is out of range; platform " + p->name +
                                                " has GPUs 0.." +
                                                std::to_string(p->num_gpus() - 1) +
                                                (tp > 1 ? " and a group takes " +
                                                              std::to_string(tp)
                                                        : ""));
        }
        if (spanning && gpu % per_node != 0) {
          return where.Invalid("placement", entry + ": the group of " + group_text + " = " +
                                                std::to_string(tp) +
                                                " GPUs spans nodes and must start a node (a "
                                                "multiple of " +
                                                std::to_string(per_node) + ")");
        }
        if (!spanning && gpu / per_node != (gpu + tp - 1) / per_node) {
          return where.Invalid("placement", entry + ": the group of " + group_text +
                                                " GPUs would cross a node boundary; a node has " +
                                                std::to_string(per_node) + " GPUs");
        }
        break;
      }
    }
    for (int32_t g = gpu; g < gpu + tp; ++g) {
      if (const auto it = owner.find(g); it != owner.end()) {
        return where.Invalid("placement", "GPU " + std::to_string(g) +
                                              " is given to rank groups " +
                                              std::to_string(it->second) + " and " +
                                              std::to_string(j) + "; each GPU runs one rank");
      }
      owner[g] = j;
    }
    p->group_gpu[static_cast<size_t>(replica) * num_ranks + rank] = gpu;
  }
  return Status();
}

}  // namespace ppsim
