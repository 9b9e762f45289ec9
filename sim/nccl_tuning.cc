// NCCL v2.23.4's tuning model. Every constant and rule comes from sim/nccl-collectives.md, which
// cites the line of NCCL's source it was read from; the section is named where each is used. The
// model works in NCCL's units (µs, GB/s = 1000 B/µs) so that the constants read as in the note;
// only the NcclChoice it returns is in seconds and bytes per second.
#include "sim/nccl_tuning.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <string>

#include "base/names.h"

namespace ppsim {
namespace {

constexpr NamedValue<CollectiveKind> kKindNames[] = {
    {"all-reduce", CollectiveKind::kAllReduce},
    {"reduce-scatter", CollectiveKind::kReduceScatter},
    {"all-gather", CollectiveKind::kAllGather},
};

// "auto" is the absence of a forced algorithm.
constexpr NamedValue<std::optional<CollectiveAlgorithm>> kAlgorithmNames[] = {
    {"auto", std::nullopt},
    {"ring", CollectiveAlgorithm::kRing},
    {"tree", CollectiveAlgorithm::kTree},
    {"nvls", CollectiveAlgorithm::kNvls},
    {"nvls-tree", CollectiveAlgorithm::kNvlsTree},
    {"hierarchical", CollectiveAlgorithm::kHierarchical},
};

constexpr NamedValue<NcclProtocol> kProtocolNames[] = {
    {"LL", NcclProtocol::kLl},
    {"LL128", NcclProtocol::kLl128},
    {"Simple", NcclProtocol::kSimple},
};

// NCCL's indices: algorithms in NCCL's order (which also breaks ties between equal times), the
// protocols as NcclProtocol.
enum Algo { kTree = 0, kRing = 1, kNvls = 2, kNvlsTree = 3, kNumAlgos };
enum Hw { kNvlinkHw = 0, kPciHw = 1, kNetHw = 2 };
constexpr int kNumProtos = 3;
constexpr int kLl = 0, kLl128 = 1, kSimple = 2;
constexpr CollectiveAlgorithm kAlgoOf[kNumAlgos] = {
    CollectiveAlgorithm::kTree, CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNvls,
    CollectiveAlgorithm::kNvlsTree};

// The tables as the note prints them, one row a line.
// clang-format off
// §2.2, µs: baseLat[algo][proto] and hwLat[hw][algo][proto].
constexpr double kBaseLatUs[kNumAlgos][kNumProtos] = {
    {6.8, 14.0, 8.4},  // tree
    {6.6, 14.0, 8.4},  // ring
    {0,   0,    0},    // NVLS
    {0,   0,    0}};   // NVLS_TREE
constexpr double kHwLatUs[3][kNumAlgos][kNumProtos] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4},  {0, 0, 25}, {0, 0, 25}},   // NVLINK
    {{1.0, 1.9,  4.0}, {1.0, 2.5, 5.7},  {0, 0, 0},  {0, 0, 0}},    // PCI
    {{5.0, 8.5,  14},  {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 14}}};  // NET
constexpr double kNetOverheadUs = 1.0;  // getNetOverhead on an Intel CPU; x3 for Simple.

// §2.3, GB/s per channel: [row][1 node, 2 nodes, more]; the row is the GPU generation (Volta,
// Ampere, Hopper) except for llMaxBws on several nodes, where it is the CPU vendor (0: Intel).
constexpr double kLlMaxBws[3][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}};
constexpr double kPerChMaxRingLl128Bws[3][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}};
constexpr double kPerChMaxTreeLl128Bws[3][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}};
constexpr double kPerChMaxTreeBws[3][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}};

// §2.3: treeCorrectionFactor[proto][log2i(bytes >> 6)], 64 B to 512 MiB.
constexpr int kTreeCorrectionSizes = 23;
constexpr double kTreeCorrectionFactor[kNumProtos][kTreeCorrectionSizes] = {
    {1.0, 1.0, 1.0, 1.0, .9,  .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},  // LL
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9,  .9,  1.0, 1.0},  // LL128
    {.9,  .9,  .9,  .9,  .9,  .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7,  .8,  .9,  .9}};  // Simple

// §3.1: the sm90 search speeds, GB/s, descending.
constexpr double kSpeedsIntra[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr double kSpeedsInter[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
// clang-format on
constexpr double kPciBw = 12.0;             // PCI_BW, GB/s (§2.3, threads).
constexpr int32_t kMaxSearchChannels = 16;  // MAXCHANNELS / 2
constexpr int32_t kMaxChannels = 32;        // MAXCHANNELS
constexpr int32_t kNvlsChannels = 16;       // NCCL_NVLS_NCHANNELS

// §3.2 and §3.4: threads and bytes per thread below which ring and tree drop channels.
constexpr int32_t kMaxThreads[kNumProtos] = {512, 640, 512};
constexpr int32_t kThreadThreshold[kNumProtos] = {8, 8, 64};
constexpr int64_t kKiB = 1024;
constexpr int64_t kSimpleStepBytes = (4 << 20) / 8;  // NCCL_BUFFSIZE / NCCL_STEPS
constexpr int64_t kRingSimpleChunkSteps = 4;         // all-reduce, all-gather, reduce-scatter
constexpr int64_t kLlChunkBytes = 32 * kKiB;         // 64 KiB step, half of it flags
constexpr int64_t kLl128ChunkBytes = 614400 / 16 * 15;
constexpr int64_t kNvlsChunkBytes = 128 * kKiB;        // NCCL_NVLS_CHUNKSIZE
constexpr int64_t kNvlsTreeMaxChunkBytes = 64 * kKiB;  // from 4 nodes

// The largest speed <= limit, else the smallest.
template <size_t N>
double SpeedAtMost(const double (&speeds)[N], double limit) {
  for (double speed : speeds) {
    if (speed <= limit) return speed;
  }
  return speeds[N - 1];
}

// log2i: floor(log2(x)) for x >= 1, -1 for 0.
int Log2i(int64_t x) {
  return x <= 0 ? -1 : static_cast<int>(std::bit_width(static_cast<uint64_t>(x))) - 1;
}

int32_t PerNode(const NcclCommunicator& comm) { return comm.ranks / comm.nodes; }

// Row of the per-channel tables: the GPU generation (Volta, Ampere, Hopper and later).
int GenerationRow(int32_t compute_capability) {
  return compute_capability >= 90 ? 2 : compute_capability >= 80 ? 1 : 0;
}
// Column: 1 node, 2 nodes, more.
int NodesColumn(int32_t nodes) { return nodes <= 2 ? nodes - 1 : 2; }

bool Ll128Enabled(const NcclCommunicator& comm) {
  // §2.4: typeIntra <= PATH_NVB (NVLink) and compute capability 70, 80 or 90; typeInter is taken to
  // be within PXB (or PXN on sm90) and all GPUs alike.
  const int32_t cc = comm.compute_capability;
  return comm.nvlink && (cc == 70 || cc == 80 || cc == 90);
}

bool ProtocolEnabled(Algo algo, int proto, const NcclCommunicator& comm) {
  // NVLS and NVLS_TREE have Simple kernels only.
  if ((algo == kNvls || algo == kNvlsTree) && proto != kSimple) return false;
  if (proto == kLl128) return Ll128Enabled(comm);
  return true;
}

struct Tuned {
  double latency_us = 0;
  double bandwidth_gb_per_s = 0;  // algorithm bandwidth; bus bandwidth for NVLS on RS/AG
};

// What ncclTopoTuneModel stores for (kind, algo, proto): latencies (§2.2) and bandwidths (§2.3).
Tuned TuneModel(CollectiveKind kind, const NcclCommunicator& comm, const NcclGraphs& graphs,
                Algo algo, int proto) {
  const bool all_reduce = kind == CollectiveKind::kAllReduce;
  const int32_t n = comm.ranks;
  const int32_t nodes = comm.nodes;
  const int32_t ppn = PerNode(comm);
  const int log_nodes = Log2i(nodes);

  Tuned tuned;
  const double base = kBaseLatUs[algo][proto];
  const double intra_lat = kHwLatUs[graphs.intra_nvlink ? kNvlinkHw : kPciHw][algo][proto];
  const double inter_lat =
      ppn == 1 ? kHwLatUs[kNetHw][kTree][proto] : kHwLatUs[kNetHw][algo][proto];
  const int32_t nsteps = all_reduce ? 2 * (n - 1) : n - 1;
  switch (algo) {
    case kRing: {
      const int32_t inter_steps = nodes == 1 ? 0 : all_reduce ? 2 * (nodes - 1) : nodes - 1;
      const double net_overhead = nodes == 1 ? 0 : kNetOverheadUs * (proto == kSimple ? 3 : 1);
      tuned.latency_us = base + (nsteps - inter_steps) * std::max(intra_lat, net_overhead) +
                         inter_steps * inter_lat;
      break;
    }
    case kTree:
      tuned.latency_us = base + 2 * ((ppn - 1) * intra_lat + log_nodes * inter_lat);
      break;
    case kNvls:
      tuned.latency_us = intra_lat + (nodes > 1 ? inter_lat : 0);
      break;
    case kNvlsTree:
      tuned.latency_us = base + intra_lat + 2 * log_nodes * inter_lat;
      break;
    case kNumAlgos:
      break;
  }

  const NcclGraph& graph = algo == kNvls || algo == kNvlsTree ? graphs.nvls : graphs.ring;
  const int row = GenerationRow(comm.compute_capability);
  const int column = NodesColumn(nodes);
  // On several nodes llMaxBws is indexed by CPU vendor: row 0 for Intel.
  const double ll_max = kLlMaxBws[nodes == 1 ? row : 0][column];
  double bw = nodes <= 2 ? graph.bw_intra_gb_per_s : graph.bw_inter_gb_per_s;
  if (algo == kNvls) bw = std::min(graph.bw_intra_gb_per_s, graph.bw_inter_gb_per_s);
  if (algo == kNvlsTree) {
    bw = std::min(graph.bw_intra_gb_per_s,
                  nodes <= 2 ? graph.bw_inter_gb_per_s : graph.bw_inter_gb_per_s / 2);
  }
  const int32_t channels = graph.channels;
  double bus_bw = channels * bw;
  if (algo == kRing && proto == kLl) bus_bw = std::min(ll_max, bus_bw * 0.5);
  if (algo == kRing && proto == kLl128) {
    bus_bw = std::min(bus_bw * 0.92, channels * kPerChMaxRingLl128Bws[row][column]);
  }
  if (algo == kTree && all_reduce) {
    bus_bw = std::min(bus_bw * 0.92, channels * kPerChMaxTreeBws[row][column]);
  }
  if (algo == kTree && proto == kLl) bus_bw = std::min(bus_bw / 3.8, ll_max);
  if (algo == kTree && proto == kLl128) {
    bus_bw = std::min(bus_bw * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                      channels * kPerChMaxTreeLl128Bws[row][column]);
  }
  // Bus to algorithm bandwidth, except for other algorithms than ring on RS/AG.
  if (algo == kRing) {
    bus_bw *= static_cast<double>(n) / nsteps;
  } else if (all_reduce) {
    bus_bw *= algo == kTree ? 0.5 : 5.0 / 6.0;
  }
  tuned.bandwidth_gb_per_s = bus_bw;
  return tuned;
}

// Runtime channels ring and tree use for `bytes` (topoGetAlgoInfo, §3.4): the cost model does not
// see this reduction.
int32_t ChannelsUsed(Algo algo, int proto, int64_t bytes, const NcclCommunicator& comm,
                     const NcclGraphs& graphs) {
  if (algo == kNvls || algo == kNvlsTree) return graphs.nvls_runtime_channels;
  int64_t threads = kMaxThreads[proto];
  if (algo == kRing && proto == kSimple &&
      graphs.ring.bw_intra_gb_per_s * graphs.ring.channels <= kPciBw) {
    threads = 256;
  }
  const int64_t threshold =
      kThreadThreshold[proto] * (algo == kRing && proto == kLl ? comm.ranks : 1);
  int32_t channels = graphs.runtime_channels;
  while (channels >= 2 && bytes < channels * threads * threshold) --channels;
  return channels;
}

// calcCollChunking's chunk (§3.2), shrunk for small sizes where the note gives the rule.
int64_t ChunkBytes(Algo algo, int proto, int64_t bytes, int32_t channels,
                   const NcclCommunicator& comm) {
  if (proto == kLl) return kLlChunkBytes;
  if (algo == kNvls) {
    // nHeads: one per GPU of the node.
    const int64_t concurrent = static_cast<int64_t>(channels) * PerNode(comm);
    int64_t chunk = kNvlsChunkBytes;
    if (bytes < 64 * concurrent * chunk && chunk > 64 * kKiB) chunk = 64 * kKiB;
    if (bytes < 8 * concurrent * chunk && chunk > 32 * kKiB) chunk = 32 * kKiB;
    if (bytes < 2 * concurrent * chunk && chunk > 16 * kKiB) chunk = 16 * kKiB;
    return chunk;
  }
  if (algo == kNvlsTree) return comm.nodes >= 4 ? kNvlsTreeMaxChunkBytes : kNvlsChunkBytes;
  if (proto == kLl128) {
    int64_t chunk = kLl128ChunkBytes;
    if (algo == kTree) {
      const double ppn = PerNode(comm);
      const double steps = 1 + Log2i(comm.nodes) + 0.1 * ppn;
      // Integer division, as NCCL's size_t arithmetic.
      auto per_channel_chunks = [&] { return bytes / (channels * chunk); };
      while (per_channel_chunks() < steps * 64 / ppn && chunk > 128 * kKiB) chunk /= 2;
      while (per_channel_chunks() < steps * 16 / ppn && chunk > 32 * kKiB) chunk /= 2;
    }
    return chunk;
  }
  return algo == kRing ? kSimpleStepBytes * kRingSimpleChunkSteps : kSimpleStepBytes;
}

// ncclTopoGetAlgoTime (§2.1) for one collective, with the channels and chunk that go with it.
NcclChoice Estimate(CollectiveKind kind, int64_t bytes, const NcclCommunicator& comm,
                    const NcclGraphs& graphs, Algo algo, int proto) {
  const Tuned tuned = TuneModel(kind, comm, graphs, algo, proto);
  double latency_us = tuned.latency_us;
  double bw = tuned.bandwidth_gb_per_s;
  const bool all_reduce = kind == CollectiveKind::kAllReduce;
  const int log_size = Log2i(bytes >> 6);
  if (algo == kTree && all_reduce && log_size >= 0 && log_size < kTreeCorrectionSizes) {
    bw *= kTreeCorrectionFactor[proto][log_size];
  }
  // "Plateau effect of ring", with the runtime channel count.
  if (algo == kRing && proto == kSimple && comm.nodes > 1 && all_reduce &&
      bytes / (static_cast<int64_t>(graphs.runtime_channels) * comm.ranks) >= 64) {
    latency_us *= comm.compute_capability < 80 ? 1.9 : 1.4;
  }
  NcclChoice choice;
  choice.algorithm = kAlgoOf[algo];
  choice.protocol = static_cast<NcclProtocol>(proto);
  choice.channels = ChannelsUsed(algo, proto, bytes, comm, graphs);
  choice.latency_s = latency_us * 1e-6;
  choice.bandwidth_bytes_per_s = bw * 1e9;
  choice.time_s = (latency_us + bytes / (1000 * bw)) * 1e-6;
  choice.chunk_bytes = ChunkBytes(algo, proto, bytes, choice.channels, comm);
  return choice;
}

// Why NCCL does not run `algorithm` for `kind` on `comm`, or "" when it may (§2.4).
std::string WhyNotAllowed(CollectiveKind kind, const NcclCommunicator& comm,
                          CollectiveAlgorithm algorithm) {
  const bool all_reduce = kind == CollectiveKind::kAllReduce;
  const int32_t ppn = PerNode(comm);
  const std::string spans = ", and the communicator spans " + Plural(comm.nodes, "node");
  const std::string few_gpus =
      "NVLS needs more than 2 GPUs per node, and the communicator has " + std::to_string(ppn);
  switch (algorithm) {
    case CollectiveAlgorithm::kRing:
      return "";
    case CollectiveAlgorithm::kTree:
      return all_reduce ? "" : "NCCL runs tree for all-reduce only";
    case CollectiveAlgorithm::kNvls:
      if (!comm.nvls) return "the communicator has no NVLink SHARP";
      if (comm.nodes > 1) {
        return (all_reduce ? "without CollNet NCCL runs NVLS on one node only"
                           : "NCCL runs NVLS " + std::string(CollectiveKindName(kind)) +
                                 " on one node only") +
               spans;
      }
      return ppn <= 2 ? few_gpus : "";
    case CollectiveAlgorithm::kNvlsTree:
      if (!all_reduce) return "NCCL runs NVLS_TREE for all-reduce only";
      if (!comm.nvls) return "the communicator has no NVLink SHARP";
      if (comm.nodes == 1) return "NCCL runs NVLS_TREE on more than one node only";
      return ppn <= 2 ? few_gpus : "";
    case CollectiveAlgorithm::kHierarchical:
      return "not an NCCL algorithm (NCCL has no 2-D ring; ppsim simulates it without NCCL's "
             "model)";
  }
  return "unknown algorithm";
}

std::vector<std::string> Names(const std::vector<CollectiveAlgorithm>& algorithms) {
  std::vector<std::string> names;
  for (CollectiveAlgorithm algorithm : algorithms) {
    names.emplace_back(CollectiveAlgorithmName(algorithm));
  }
  return names;
}

Algo AlgoOf(CollectiveAlgorithm algorithm) {
  for (int a = 0; a < kNumAlgos; ++a) {
    if (kAlgoOf[a] == algorithm) return static_cast<Algo>(a);
  }
  return kNumAlgos;
}

// Validates the communicator, the size and (when given) the algorithm; fills `graphs`.
Status Prepare(CollectiveKind kind, int64_t bytes, const NcclCommunicator& comm,
               const CollectiveAlgorithm* algorithm, NcclGraphs* graphs) {
  if (const Status status = DeriveNcclGraphs(comm, graphs); !status.ok()) return status;
  if (bytes < 0) {
    return Status::InvalidInput(std::string(CollectiveKindName(kind)) + " of " +
                                std::to_string(bytes) + " bytes: the size must be 0 or more");
  }
  if (algorithm != nullptr) {
    const std::string why = WhyNotAllowed(kind, comm, *algorithm);
    if (!why.empty()) {
      return Status::InvalidInput(
          std::string(CollectiveAlgorithmName(*algorithm)) + " for " +
          std::string(CollectiveKindName(kind)) + ": " + why +
          "; valid here: " + JoinNames(Names(NcclAlgorithmsAllowed(kind, comm))));
    }
  }
  return Status();
}

}  // namespace

std::string_view CollectiveKindName(CollectiveKind kind) { return NameOf(kKindNames, kind); }

std::string_view CollectiveAlgorithmName(CollectiveAlgorithm algorithm) {
  return NameOf(kAlgorithmNames, std::optional<CollectiveAlgorithm>(algorithm));
}

std::string_view NcclProtocolName(NcclProtocol protocol) {
  return NameOf(kProtocolNames, protocol);
}

Status ParseCollectiveAlgorithm(std::string_view what, std::string_view text, bool* forced,
                                CollectiveAlgorithm* algorithm) {
  std::optional<CollectiveAlgorithm> parsed;
  if (const Status status =
          ParseNamed(kAlgorithmNames, "collective algorithm", what, text, &parsed);
      !status.ok()) {
    return status;
  }
  *forced = parsed.has_value();
  if (parsed) *algorithm = *parsed;
  return Status();
}

Status DeriveNcclGraphs(const NcclCommunicator& comm, NcclGraphs* graphs) {
  const auto invalid = [](const std::string& message) {
    return Status::InvalidInput("NCCL communicator: " + message);
  };
  if (comm.ranks < 2) {
    return invalid("a collective needs at least 2 ranks, got " + std::to_string(comm.ranks));
  }
  if (comm.nodes < 1) return invalid("needs at least 1 node, got " + std::to_string(comm.nodes));
  if (comm.ranks % comm.nodes != 0) {
    return invalid(Plural(comm.ranks, "rank") + " do not divide evenly over " +
                   Plural(comm.nodes, "node"));
  }
  const int32_t ppn = PerNode(comm);
  if (comm.nvlink && ppn > 1 && !(comm.nvlink_bandwidth_bytes_per_s > 0)) {
    return invalid("NVLink within a node needs a positive NVLink bandwidth");
  }
  if (comm.nvswitch && !comm.nvlink) return invalid("NVSwitch without NVLink");
  if (comm.nvls && !comm.nvswitch) return invalid("NVLink SHARP needs NVSwitch");
  if (comm.nvls && comm.compute_capability < 90) {
    return invalid("NVLink SHARP needs compute capability 90 or more, got " +
                   std::to_string(comm.compute_capability));
  }
  if (comm.nodes > 1 && comm.nics_per_node < 1) {
    return invalid(Plural(comm.nodes, "node") + " need at least 1 NIC per node, got " +
                   std::to_string(comm.nics_per_node));
  }
  if (comm.nodes > 1 && !(comm.nic_bandwidth_bytes_per_s > 0)) {
    return invalid(Plural(comm.nodes, "node") + " need a positive NIC bandwidth");
  }

  // NCCL's GB/s.
  const double intra =
      comm.nvlink ? comm.nvlink_bandwidth_bytes_per_s / 1e9 * kNcclNvlinkShareOfLineRate : kPciBw;
  const double nic = comm.nic_bandwidth_bytes_per_s / 1e9;
  NcclGraphs g;
  g.intra_nvlink = comm.nvlink;
  double speed = 0;
  int32_t channels = 0;
  if (comm.nodes == 1) {
    speed = SpeedAtMost(kSpeedsIntra, intra);
    channels = static_cast<int32_t>(std::floor(intra / speed));
  } else {
    const int32_t nics = std::min(comm.nics_per_node, ppn);
    speed = SpeedAtMost(kSpeedsInter, ppn > 1 ? std::min(nic, intra) : nic);
    const double total = ppn > 1 ? intra : nic;
    channels = std::min(nics * static_cast<int32_t>(std::floor(nic / speed)),
                        static_cast<int32_t>(std::ceil(total / speed)));
  }
  channels = std::clamp(channels, 1, kMaxSearchChannels);
  // ncclTopoDupChannels.
  const bool keep = comm.compute_capability > 80 && speed < 50 && channels > 4;
  if (speed >= 25 && !keep && 2 * channels <= kMaxSearchChannels) {
    channels *= 2;
    speed /= 2;
  }
  g.ring = {channels, speed, speed};

  g.runtime_channels = std::min(2 * channels, kMaxChannels);
  if (comm.nodes > 1 && comm.compute_capability >= 90 && speed > 45 && g.runtime_channels < 16) {
    g.runtime_channels = std::min(2 * g.runtime_channels, kMaxChannels);
  }

  if (comm.nvls) {
    const double nvls_intra = SpeedAtMost(kSpeedsIntra, intra / (ppn + 1));
    g.nvls = {ppn, nvls_intra, comm.nodes == 1 ? nvls_intra : SpeedAtMost(kSpeedsInter, nic)};
    g.nvls_runtime_channels = kNvlsChannels;
  }
  *graphs = g;
  return Status();
}

std::vector<CollectiveAlgorithm> NcclAlgorithmsAllowed(CollectiveKind kind,
                                                       const NcclCommunicator& comm) {
  std::vector<CollectiveAlgorithm> allowed;
  for (CollectiveAlgorithm algorithm : kAlgoOf) {
    if (WhyNotAllowed(kind, comm, algorithm).empty()) allowed.push_back(algorithm);
  }
  return allowed;
}

Status ChooseNcclAlgorithm(CollectiveKind kind, int64_t bytes, const NcclCommunicator& comm,
                           const CollectiveAlgorithm* forced, NcclChoice* choice) {
  NcclGraphs graphs;
  if (const Status status = Prepare(kind, bytes, comm, forced, &graphs); !status.ok()) {
    return status;
  }
  const std::vector<CollectiveAlgorithm> candidates =
      forced != nullptr ? std::vector<CollectiveAlgorithm>{*forced}
                        : NcclAlgorithmsAllowed(kind, comm);
  bool found = false;
  NcclChoice best;
  for (CollectiveAlgorithm algorithm : candidates) {
    const Algo algo = AlgoOf(algorithm);
    for (int proto = 0; proto < kNumProtos; ++proto) {
      if (!ProtocolEnabled(algo, proto, comm)) continue;
      const NcclChoice estimate = Estimate(kind, bytes, comm, graphs, algo, proto);
      if (!found || estimate.time_s < best.time_s) {
        best = estimate;
        found = true;
      }
    }
  }
  // Ring Simple is always allowed, so something was found.
  *choice = best;
  return Status();
}

Status EstimateNcclCollective(CollectiveKind kind, int64_t bytes, const NcclCommunicator& comm,
                              CollectiveAlgorithm algorithm, NcclProtocol protocol,
                              NcclChoice* estimate) {
  NcclGraphs graphs;
  if (const Status status = Prepare(kind, bytes, comm, &algorithm, &graphs); !status.ok()) {
    return status;
  }
  const Algo algo = AlgoOf(algorithm);
  const int proto = static_cast<int>(protocol);
  if (!ProtocolEnabled(algo, proto, comm)) {
    std::vector<std::string> valid;
    for (const NamedValue<NcclProtocol>& entry : kProtocolNames) {
      if (ProtocolEnabled(algo, static_cast<int>(entry.value), comm))
        valid.emplace_back(entry.name);
    }
    const std::string why =
        algo == kNvls || algo == kNvlsTree
            ? "NCCL runs " + std::string(CollectiveAlgorithmName(algorithm)) +
                  " with the Simple protocol only"
            : "NCCL enables LL128 only over NVLink with compute capability 70, 80 or 90";
    return Status::InvalidInput(std::string(CollectiveAlgorithmName(algorithm)) + " with " +
                                std::string(NcclProtocolName(protocol)) + ": " + why +
                                "; valid here: " + JoinNames(valid));
  }
  *estimate = Estimate(kind, bytes, comm, graphs, algo, proto);
  return Status();
}

}  // namespace ppsim
