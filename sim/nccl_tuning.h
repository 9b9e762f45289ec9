// Which algorithm and protocol NCCL picks for one collective, on how many channels, and the time
// NCCL's own cost model predicts for it: the tuning model of NCCL v2.23.4 (ncclTopoTuneModel and
// ncclTopoGetAlgoTime) as sim/nccl-collectives.md records it in §2, with the channels (§3.1, §3.4)
// and the chunk (§3.2) that go with the choice.
//
// Modelled: ring, tree (all-reduce only), NVLS (one node) and NVLS_TREE (all-reduce, more than one
// node), each with the protocols NCCL enables for it. Not modelled:
// - CollNet (IB SHARP): assumed absent, which is why NVLS runs on one node only.
// - PAT: NCCL 2.23 considers it for reduce-scatter and all-gather with 1 GPU per node only; there
//   this module answers as NCCL would with PAT disabled.
// - NCCL's topology search: its outputs (channels, per-channel bandwidth) come from the
//   communicator by the rule of DeriveNcclGraphs below.
// Assumed: one collective per launch (no grouped operations), NCCL's default environment (no
// NCCL_ALGO, NCCL_PROTO, buffer or channel settings), a reduction NVLS supports (sum of bf16, fp16
// or fp32), an Intel CPU (net overhead 1 µs; the multi-node LL cap of llMaxBws row 0), a NIC that
// reports no latency (latencyInter 0), CUDA 12.
//
// The model's times are NCCL's estimates, not measurements: on 8 x H100 the note (§4.2) finds the
// NVLS estimate 25–35% too fast at 8–64 MB and accurate from 1 GB.
#ifndef PPSIM_SIM_NCCL_TUNING_H_
#define PPSIM_SIM_NCCL_TUNING_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ppsim {

enum class CollectiveKind : uint8_t { kAllReduce, kReduceScatter, kAllGather };

// The algorithms ppsim simulates. kHierarchical is not an NCCL algorithm (NCCL has no 2-D ring,
// sim/nccl-collectives.md §1.2): it is only ever forced, never chosen by the model, and
// ChooseNcclAlgorithm refuses it.
enum class CollectiveAlgorithm : uint8_t { kRing, kTree, kNvls, kNvlsTree, kHierarchical };

enum class NcclProtocol : uint8_t { kLl, kLl128, kSimple };

// "all-reduce", "reduce-scatter", "all-gather".
std::string_view CollectiveKindName(CollectiveKind kind);
// "ring", "tree", "nvls", "nvls-tree", "hierarchical".
std::string_view CollectiveAlgorithmName(CollectiveAlgorithm algorithm);
// "LL", "LL128", "Simple" (NCCL's spelling).
std::string_view NcclProtocolName(NcclProtocol protocol);

// "auto" (*forced = false, *algorithm unchanged) or one of the algorithm names (*forced = true);
// case-sensitive. The message starts with `what` (where the name was written) and lists the valid
// names: "WHAT: unknown collective algorithm 'X'; valid: auto, ring, ... (did you mean ...?)".
Status ParseCollectiveAlgorithm(std::string_view what, std::string_view text, bool* forced,
                                CollectiveAlgorithm* algorithm);

// The communicator as NCCL's topology search sees it.
struct NcclCommunicator {
  int32_t ranks = 1;      // n. REQUIRES: at least 2.
  int32_t nodes = 1;      // N; ranks per node ppn = n / N. REQUIRES: N divides n.
  bool nvswitch = false;  // The GPUs of a node are on NVSwitch (else NVLink pairs or PCIe).
  bool nvlink = true;     // Intra-node traffic over NVLink (NVSwitch or pairs); false: PCIe.
  // NVLink SHARP multicast (H100/H200/B200 NVSwitch). REQUIRES: nvswitch, compute capability >= 90.
  bool nvls = false;
  int32_t compute_capability = 90;  // 70 Volta, 80 Ampere, 90 Hopper (100 uses Hopper's tables).
  // One GPU's NVLink bandwidth per direction, the line rate as the platform gives it (450e9 on
  // H100). REQUIRES: > 0 when nvlink and ppn > 1.
  double nvlink_bandwidth_bytes_per_s = 0;
  // One NIC, per direction (50e9 for 400 Gb/s). REQUIRES: > 0 when nodes > 1.
  double nic_bandwidth_bytes_per_s = 0;
  int32_t nics_per_node = 1;  // REQUIRES: >= 1 when nodes > 1.
};

// NCCL's internal NVLink figure for one GPU is its link count times a per-link bandwidth: 18 x
// SM90_NVLINK_BW = 18 x 20.6 = 370.8 GB/s on H100, whose line rate is 18 x 25 = 450 GB/s
// (nccl-collectives.md §1.2). The platform's line rate is scaled by this one factor, 20.6 / 25:
// exact for NVLink4 (H100, H200), the same share assumed for other generations.
inline constexpr double kNcclNvlinkShareOfLineRate = 20.6 / 25.0;

// The outputs of NCCL's topology search that the tuning model reads (§2.1), in NCCL's units (GB/s
// per channel, 1 GB = 1e9 B).
struct NcclGraph {
  int32_t channels = 0;  // Search-graph channels (before the runtime doubling).
  double bw_intra_gb_per_s = 0;
  double bw_inter_gb_per_s = 0;
};
struct NcclGraphs {
  NcclGraph ring;  // Also the tree's graph (same channels and bandwidth, balanced-tree pattern).
  NcclGraph nvls;  // Channels = NVLS heads. Zero channels when the communicator has no NVLS.
  bool intra_nvlink = true;      // typeIntra is NVLink (hwLat NVLINK row), else PCIe (PCI row).
  int32_t runtime_channels = 0;  // comm->nChannels: what ring and tree run on at most.
  int32_t nvls_runtime_channels = 0;  // NCCL_NVLS_NCHANNELS = 16 when the communicator has NVLS.
};

// The rule standing in for NCCL's topology search (its results on DGX H100 are the note's worked
// examples, §2.5 and §2.6). B = nvlink_bandwidth x kNcclNvlinkShareOfLineRate (PCIe: PCI_BW = 12
// GB/s), in GB/s; speeds come from NCCL's sm90 arrays (search.cc L935–936) for every GPU
// generation; "the largest speed <= x" is the smallest speed when none is.
// - Ring, one node: speed s = the largest intra speed <= B; channels = min(16, floor(B / s)).
//   (8 x H100: 6 x 60.)
// - Ring, several nodes: each node uses NICs = min(nics_per_node, ppn), one per GPU at most;
//   s = the largest inter speed <= NIC bandwidth (and <= B when ppn > 1); channels = min(16,
//   NICs x floor(NIC / s), ceil(T / s)) where T = B (ppn > 1) or the NIC bandwidth (ppn = 1): the
//   search ends once channels x s reaches the GPU's total bandwidth. bw_intra = bw_inter = s.
//   (DGX H100, 400 Gb/s NICs: 8 x 48.)
// - Then ncclTopoDupChannels: when s >= 25 and not (compute capability > 80, s < 50 and more than 4
//   channels), channels double and s halves, unless that would pass 16 channels. (8 x H100: 12 x
//   30; DGX H100 multi-node: unchanged.)
// - Tree: the ring's graph.
// - NVLS (nvls only): one head per GPU of a node, channels = ppn; every channel loads each GPU's
//   NVLink once and its head's twice, so bw_intra = the largest intra speed s with (ppn + 1) x s
//   <= B (8 x H100: 8 x 40); bw_inter = bw_intra on one node, the largest inter speed <= the NIC
//   bandwidth on several (UNVERIFIED: the note derives no multi-node NVLS graph).
// - Runtime: 2 x ring channels (max 32), doubled again (max 32) on several nodes when compute
//   capability >= 90, ring s > 45 and fewer than 16 (connect.cc L455, L468–471); NVLS 16.
//   (8 x H100: 24; DGX H100 multi-node: 16.)
// InvalidInput when the communicator breaks a REQUIRES above (message "NCCL communicator: ...").
Status DeriveNcclGraphs(const NcclCommunicator& comm, NcclGraphs* graphs);

// The algorithms NCCL may choose for `kind` on `comm` (§2.4), in NCCL's order (tree, ring, nvls,
// nvls-tree): ring always; tree for all-reduce; nvls on one node with NVLS and more than 2 GPUs;
// nvls-tree for all-reduce on more than one node with NVLS and more than 2 GPUs per node.
// REQUIRES: comm is valid (DeriveNcclGraphs succeeds).
std::vector<CollectiveAlgorithm> NcclAlgorithmsAllowed(CollectiveKind kind,
                                                       const NcclCommunicator& comm);

struct NcclChoice {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  // Runtime channels used: ring and tree shrink comm->nChannels for small sizes (§3.4); NVLS and
  // NVLS_TREE run on 16.
  int32_t channels = 0;
  double latency_s = 0;  // The model's latency term (with the ring's ×1.4 plateau when it applies).
  // The model's algorithm bandwidth: after the bus-to-algorithm factor and the correction factors
  // (the tree's depends on the size). For reduce-scatter and all-gather, bytes are the total size.
  double bandwidth_bytes_per_s = 0;
  double time_s = 0;  // latency_s + bytes / bandwidth_bytes_per_s, as ncclTopoGetAlgoTime.
  // The per-channel chunk of this algorithm and protocol (§3.2): ring Simple 2 MiB, tree Simple
  // 512 KiB, LL 32 KiB, LL128 576000 B, NVLS 128 KiB, NVLS_TREE 128 KiB (64 KiB from 4 nodes);
  // shrunk for small sizes as calcCollChunking does for NVLS and tree LL128. (The ring kernel moves
  // less per step when a channel holds less than ranks x chunk: ceil(share / ranks), §3.2.)
  int64_t chunk_bytes = 0;
};

// NCCL's choice for one collective of `bytes` (for reduce-scatter and all-gather: the total size,
// ranks x the per-rank part, as NCCL counts it): the minimum modelled time over the algorithms of
// NcclAlgorithmsAllowed and the protocols NCCL enables for them, the first of equal times in NCCL's
// order. With `forced` (not null): the best protocol for that algorithm, or InvalidInput
// "ALGORITHM for KIND: why NCCL does not run it here; valid here: ALGORITHMS" when it is not
// allowed (kHierarchical never is). Also InvalidInput for an invalid communicator
// (DeriveNcclGraphs) or bytes < 0 ("KIND of B bytes: ..."). Messages do not name the flag or file
// that chose the algorithm: the caller says where.
Status ChooseNcclAlgorithm(CollectiveKind kind, int64_t bytes, const NcclCommunicator& comm,
                           const CollectiveAlgorithm* forced, NcclChoice* choice);

// The model's estimate for one algorithm and protocol. InvalidInput when NCCL would not run that
// algorithm (as ChooseNcclAlgorithm) or that protocol with it: NVLS and NVLS_TREE run Simple only;
// LL128 needs NVLink within the node and compute capability 70, 80 or 90 (§2.4).
Status EstimateNcclCollective(CollectiveKind kind, int64_t bytes, const NcclCommunicator& comm,
                              CollectiveAlgorithm algorithm, NcclProtocol protocol,
                              NcclChoice* estimate);

}  // namespace ppsim

#endif  // PPSIM_SIM_NCCL_TUNING_H_
