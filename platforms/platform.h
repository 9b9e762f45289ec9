// Platforms: the GPUs a run's ranks are placed on and the links between them.
//
// Pure description (no SimGrid): sim/ builds the SimGrid platform from a PlatformSpec, the
// critical-path engine reads uncontended transfer times from it, and the link metrics follow its
// routes. A PlatformSpec comes from a cluster (platforms/cluster.h: a preset or a file, with
// overrides) plus a placement of the run's ranks, or from a SimGrid XML file.
#ifndef PPSIM_PLATFORMS_PLATFORM_H_
#define PPSIM_PLATFORMS_PLATFORM_H_

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "base/locator.h"
#include "base/parallel_layout.h"
#include "base/status.h"

namespace ppsim {

// What the cost model and the memory check need from a GPU.
struct GpuSpec {
  std::string name;
  double dense_bf16_flops_per_s = 0;        // peak dense FLOP/s at bf16/fp16
  double dense_fp8_flops_per_s = 0;         // peak dense FLOP/s at fp8; 0: no fp8
  bool mxfp8 = false;                       // runs MXFP8 GEMMs (Blackwell), at the FP8 peak
  int64_t memory_bytes = 0;                 // HBM capacity
  double memory_bandwidth_bytes_per_s = 0;  // HBM bandwidth
  // The op cost model's constants (models/op_costs.h; platforms/cluster.proto gives defaults).
  int32_t sms = 0;                   // streaming multiprocessors; 0: no tile or wave quantization
  double matmul_efficiency = 0;      // of the dense peak, by a large wave-aligned GEMM
  double matmul_efficiency_fp8 = 0;  // of the FP8 peak, by a large FP8 GEMM
  double attention_efficiency = 0;   // of the 16-bit peak, by flash attention
  double memory_efficiency = 0;      // of the HBM bandwidth, by streaming element-wise kernels
};

enum class IntraNodeKind { kNvswitch, kNvlink, kPcie, kUnlimited };
enum class NicAttachment { kPerGpu, kPerNode };
enum class Topology { kSingleSwitch, kFatTree, kRailOptimized };

// One direction of a link (or the whole of a fat pipe).
struct LinkSpec {
  std::string name;  // "node0.gpu3.nvlink.tx", "node1.nic0.rx", "leaf2.up", "fabric"
  double bandwidth_bytes_per_s = 0;  // may be infinite
  double latency_s = 0;
  // A fat pipe gives every transfer the full bandwidth; other links share it among the transfers
  // crossing them.
  bool fatpipe = false;
  bool inter_node = false;  // a NIC or uplink: carries traffic between nodes only
};

// The links of a route, in order (at most: PCIe port, NIC, uplink, uplink, NIC, PCIe port).
struct Route {
  static constexpr int kMaxLinks = 6;
  int32_t links[kMaxLinks] = {};
  int32_t num_links = 0;
  // The first links, on the sender's side: its port or NIC out (with PXN the NVSwitch hop to the
  // proxy GPU and that GPU's NIC) and its leaf's uplink. A one-link route: 1.
  int32_t sending_links = 0;
};

// How the (replica, rank) groups of a run are placed on GPUs.
enum class PlacementKind {
  // Megatron's order: tensor-parallel GPUs innermost, then data-parallel replicas, then pipeline
  // ranks. Group j = rank × dp + replica takes GPUs j·tp .. j·tp + tp − 1.
  kContiguous,
  // Groups (in the same order j) dealt over the nodes: group j on node j mod nodes.
  kRoundRobin,
  // The first GPU of every group, in order j.
  kExplicit,
};

struct Placement {
  PlacementKind kind = PlacementKind::kContiguous;
  std::vector<int32_t> gpus;  // kExplicit only
};

struct PlatformSpec {
  std::string name;  // the preset, or the file
  std::string description;
  GpuSpec gpu;
  // Compute speed of a GPU's SimGrid host in FLOP/s. Costs are durations and run as
  // duration × this many FLOPs, so the speed does not change a run's times.
  double gpu_flops_per_s = 1e15;
  // The memory reserve of a calibration (platforms/calibration.h), for runs that give none; -1:
  // none.
  int64_t calibrated_memory_reserve_bytes = -1;

  // The cluster (empty links with an XML file).
  int32_t gpus_per_node = 0;
  int32_t num_nodes = 0;
  IntraNodeKind intra_node = IntraNodeKind::kUnlimited;
  NicAttachment nic_attachment = NicAttachment::kPerGpu;
  Topology topology = Topology::kSingleSwitch;
  int32_t nodes_per_leaf = 0;              // kFatTree, kRailOptimized
  double intra_bandwidth_bytes_per_s = 0;  // per GPU port, pair link or fat pipe, per direction
  double intra_latency_s = 0;              // per link crossed
  double nic_bandwidth_bytes_per_s = 0;    // per NIC, per direction
  double nic_latency_s = 0;                // per NIC crossed
  double oversubscription = 1;             // leaf: NIC bandwidth below / uplink bandwidth
  double uplink_latency_s = 0;             // per leaf uplink crossed
  // GPU <-> host memory, per GPU, per direction (cluster.proto HostLink): activation offload's
  // copies (sim/host_copies.h). 0: not described.
  double host_link_bandwidth_bytes_per_s = 0;
  double host_link_latency_s = 0;  // per transfer

  // A SimGrid XML platform: the file and the host of every GPU (GPU g is xml_hosts[g]). The
  // routes are SimGrid's; only the SimGrid engine can run it.
  std::string xml_file;
  std::vector<std::string> xml_hosts;
  std::string xml_hosts_where;  // where the hosts were given, for messages (a Locator's Where)

  // The run placed on it: layout.pp pipeline ranks, layout.dp replicas of the pipeline, each rank
  // a group of layout.GpusPerRank() = tp x cp consecutive GPUs starting at
  // group_gpu[replica × pp + rank], inside one node or (cp across nodes) on whole nodes; GPU
  // first + cp_index x tp + tp_index, as Megatron orders ranks.
  ParallelLayout layout{.pp = 0};
  std::vector<int32_t> group_gpu;

  int32_t num_gpus() const;
  int32_t NodeOf(int32_t gpu) const { return gpu / gpus_per_node; }
  // The GPU of TP shard `shard` of `rank` in `replica`.
  int32_t GpuOf(int32_t replica, int32_t rank, int32_t shard) const {
    return group_gpu[static_cast<size_t>(replica) * layout.pp + rank] + shard;
  }
  // The cluster's links, numbered as below and described on demand from the fields above: a
  // cluster costs nothing per GPU or link until a route uses them. Not for XML platforms.
  //   kUnlimited: one fat pipe "fabric";  kNvswitch/kPcie: per GPU g, tx and rx of its port;
  //   kNvlink: per node, per ordered pair (a, b) of its GPUs, a != b, one link;
  //   with more than one node: per node, per NIC, tx and rx; per leaf (kFatTree, kRailOptimized),
  //   up and down of its uplink to the spine (bandwidth = the NICs under it / oversubscription).
  int64_t num_links() const;
  // REQUIRES: 0 <= id < num_links().
  LinkSpec Link(int32_t id) const;
  // The links from GPU `src` to GPU `dst` (src != dst). Not for XML platforms. Between nodes on
  // a rail-optimized fabric of NVSwitch nodes with a NIC per GPU, a transfer between GPUs on
  // different rails uses PXN as NCCL does by default (NCCL_PXN_DISABLE=0, NCCL_P2P_PXN_LEVEL=2;
  // sim/nccl-collectives.md §1.8): over NVSwitch to the sender's node's GPU on the receiver's
  // rail, out of that GPU's NIC, and through the rail's leaf instead of the spine.
  Route RouteBetween(int32_t src, int32_t dst) const;
  // Whether RouteBetween uses PXN on this cluster.
  bool Pxn() const;
  // The sending half of the route from `src` to `dst` followed by the receiving half of the route
  // from `src_of_dst` to `dst_of_src`: what one GPU of a ring uses when it stands for every member
  // of the ring (sim/task_graph.h, replica folding): its own send to its successor `dst` and its
  // own receive from its predecessor `src_of_dst`, as one transfer from `src` to `dst_of_src`.
  // A route's sending half is its Route::sending_links (a GPU's port or NIC out, its leaf's
  // uplink), its receiving half the rest (the leaf's downlink, the NIC or port in); a single link
  // (a pair link, the ideal fabric) belongs to both and appears once if the two routes share it.
  // Not for XML platforms.
  Route SplicedRoute(int32_t src, int32_t dst, int32_t src_of_dst, int32_t dst_of_src) const;
  // Sum of the route's latencies; the smallest bandwidth on it.
  double RouteLatency(int32_t src, int32_t dst) const;
  double RouteBandwidth(int32_t src, int32_t dst) const;
  // latency + bytes / bandwidth: the time of a transfer that shares no link.
  double UncontendedTransferTime(int32_t src, int32_t dst, int64_t bytes) const;
  double UncontendedTransferTime(const Route& route, int64_t bytes) const;
};

// Places layout.pp ranks × layout.dp replicas × groups of tp × cp GPUs on `platform` (which has
// its cluster set), filling its layout and group_gpu. Errors start where pp, tp or placement was
// written.
Status PlaceRanks(const ParallelLayout& layout, const Placement& placement, const Locator& where,
                  PlatformSpec* platform);

// "contiguous", "round-robin" or a comma list of GPUs; errors start with `what`.
Status ParsePlacement(std::string_view what, std::string_view text, Placement* placement);

}  // namespace ppsim

#endif  // PPSIM_PLATFORMS_PLATFORM_H_
