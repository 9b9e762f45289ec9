#include "sim/collective_plans.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace ppsim {
namespace {

// Replicas of `rank` that share replica 0's node, when every node holds that many consecutive
// replicas (r .. r + ppn - 1, r a multiple of ppn) and no other; else 0.
int32_t MembersPerNode(const PlatformSpec& platform, int32_t rank) {
  const int32_t dp = platform.layout.dp;
  auto node = [&](int32_t replica) { return platform.NodeOf(platform.GpuOf(replica, rank, 0)); };
  int32_t ppn = 1;
  while (ppn < dp && node(ppn) == node(0)) ++ppn;
  if (dp % ppn != 0) return 0;
  std::set<int32_t> nodes;
  for (int32_t r = 0; r < dp; ++r) {
    if (node(r) != node(r - r % ppn)) return 0;
    if (r % ppn == 0 && !nodes.insert(node(r)).second) return 0;
  }
  return ppn;
}

// Bytes on the wire per byte of data for NCCL's protocol (sim/nccl-collectives.md §1.1): LL moves
// 8 bytes of data in 16, LL128 120 in 128, Simple all of them.
double WireFactor(NcclProtocol protocol) {
  switch (protocol) {
    case NcclProtocol::kLl:
      return 2.0;
    case NcclProtocol::kLl128:
      return 128.0 / 120.0;
    case NcclProtocol::kSimple:
      return 1.0;
  }
  return 1.0;
}

// NCCL's fixed latency of a collective, in seconds (tuning.cc v2.23.4, sim/nccl-collectives.md
// §2.2): baseLat of ring and tree for the protocol; NVLS and NVLS_TREE have none but NVLink SHARP's
// 25 us (hwLat NVLINK, Simple), which their latency always includes. The per-step latencies of
// NCCL's model are the links' in the simulation.
double FixedLatency(CollectiveAlgorithm algorithm, NcclProtocol protocol) {
  switch (algorithm) {
    case CollectiveAlgorithm::kNvls:
    case CollectiveAlgorithm::kNvlsTree:
      return 25e-6;
    case CollectiveAlgorithm::kTree:
      return protocol == NcclProtocol::kLl      ? 6.8e-6
             : protocol == NcclProtocol::kLl128 ? 14e-6
                                                : 8.4e-6;
    default:
      return protocol == NcclProtocol::kLl      ? 6.6e-6
             : protocol == NcclProtocol::kLl128 ? 14e-6
                                                : 8.4e-6;
  }
}

// NCCL's view of the platform's GPUs (the ranks and nodes of each collective are set per call).
NcclCommunicator CommunicatorOf(const PlatformSpec& platform) {
  NcclCommunicator comm;
  comm.nvswitch = platform.intra_node == IntraNodeKind::kNvswitch;
  comm.nvlink = comm.nvswitch || platform.intra_node == IntraNodeKind::kNvlink;
  // NVLink SHARP needs Hopper or later on NVSwitch; FP8 support marks those GPUs here.
  comm.compute_capability = platform.gpu.dense_fp8_flops_per_s > 0 ? 90 : 80;
  comm.nvls = comm.nvswitch && comm.compute_capability >= 90;
  comm.nvlink_bandwidth_bytes_per_s = std::isinf(platform.intra_bandwidth_bytes_per_s)
                                          ? 1e15
                                          : platform.intra_bandwidth_bytes_per_s;
  comm.nic_bandwidth_bytes_per_s =
      std::isinf(platform.nic_bandwidth_bytes_per_s) ? 1e15 : platform.nic_bandwidth_bytes_per_s;
  comm.nics_per_node =
      platform.nic_attachment == NicAttachment::kPerGpu ? platform.gpus_per_node : 1;
  return comm;
}

// How the run's collectives may be planned.
struct PlanningRules {
  int32_t dp = 1;
  int32_t cp = 1;
  bool rings_only = false;    // context parallelism or an XML platform
  bool forced_other = false;  // the user forced an algorithm other than ring
  const CollectiveAlgorithm* forced = nullptr;
};

// Plans the collective of `row` (its stage, kind and bytes of one bucket set) over dp x cp GPUs,
// ppn to a node (0: not the same number on every node); `what` names it in messages. Sets the
// rest of `row` and `plan`.
Status PlanCollective(const PlanningRules& rules, int32_t ppn, const std::string& what,
                      NcclCommunicator comm, CollectiveRow* row, CollectivePlan* plan) {
  row->members = rules.dp * rules.cp;
  row->members_per_node = ppn;
  plan->members_per_node = std::max(ppn, 1);
  if (rules.rings_only || ppn == 0 || rules.dp < 2 || row->bytes == 0) {
    if (rules.forced_other && row->bytes > 0) {
      return Status::InvalidInput(
          what + ": its " + std::to_string(rules.dp) +
          " GPUs are not the same number on every node in runs of "
          "consecutive replicas; use ring (or a placement that groups them)");
    }
    if (rules.rings_only) {
      row->why = rules.cp > 1 ? "context parallelism" : "XML platform";
    } else if (ppn == 0) {
      row->why = "uneven GPUs per node";
    }
    return Status();
  }
  comm.ranks = rules.dp;
  comm.nodes = rules.dp / ppn;
  if (rules.forced != nullptr && *rules.forced == CollectiveAlgorithm::kHierarchical) {
    plan->algorithm = CollectiveAlgorithm::kHierarchical;
    row->algorithm = plan->algorithm;
    row->why = "forced; not an NCCL algorithm";
    return Status();
  }
  NcclChoice choice;
  const Status chosen = ChooseNcclAlgorithm(row->kind, row->bytes, comm, rules.forced, &choice);
  if (!chosen.ok()) return Status::InvalidInput(what + ": " + chosen.message());
  plan->algorithm = choice.algorithm;
  plan->wire_factor = WireFactor(choice.protocol);
  plan->fixed_latency_s = FixedLatency(choice.algorithm, choice.protocol);
  if (choice.algorithm == CollectiveAlgorithm::kTree ||
      choice.algorithm == CollectiveAlgorithm::kNvlsTree) {
    const double tree_bytes = static_cast<double>(row->bytes) /
                              (choice.algorithm == CollectiveAlgorithm::kNvlsTree ? ppn : 1);
    const double per_step = static_cast<double>(choice.channels) *
                            static_cast<double>(std::max<int64_t>(choice.chunk_bytes, 1));
    plan->pipeline_chunks = static_cast<int32_t>(
        std::clamp(std::ceil(tree_bytes / per_step), 1.0, double{kMaxPipelineChunks}));
  }
  row->algorithm = choice.algorithm;
  row->protocol = std::string(NcclProtocolName(choice.protocol));
  row->channels = choice.channels;
  row->model_time_s = choice.time_s;
  return Status();
}

}  // namespace

Status PlanCollectives(const Schedule& schedule, const StageCosts& costs,
                       const PlatformSpec& platform, int32_t cp, int64_t grad_bucket_bytes,
                       const CollectiveAlgorithm* forced, const Locator& where,
                       Parallelism* parallelism, std::vector<CollectiveRow>* rows) {
  rows->clear();
  parallelism->reduce_plans.clear();
  parallelism->gather_plans.clear();
  PlanningRules rules;
  rules.dp = parallelism->layout.dp;
  rules.cp = cp;
  if (rules.dp * cp == 1 || costs.gradient_bytes.empty()) return Status();
  // HSDP: the shard groups' collectives over S x cp GPUs, then the replicas' all-reduce.
  const int32_t hsdp = costs.fsdp_shard;
  if (hsdp > 0) rules.dp = hsdp;
  rules.rings_only = cp > 1 || !platform.xml_file.empty() || hsdp > 0;
  rules.forced_other = forced != nullptr && *forced != CollectiveAlgorithm::kRing;
  rules.forced = forced;
  if (rules.rings_only && rules.forced_other) {
    return where.Invalid(
        "collective_algorithm",
        std::string(CollectiveAlgorithmName(*forced)) + " needs " +
            (hsdp > 0 ? where.Name("dp_shard") + " equal to dp (HSDP's collectives run as rings)"
             : cp > 1 ? where.Name("cp") + " 1 (with context parallelism ppsim runs the "
                                           "gradients' collectives as rings over dp x cp GPUs)"
                      : "a cluster (the XML platform " + platform.xml_file +
                            " has no nodes ppsim knows)") +
            "; use ring");
  }
  const bool fsdp = !costs.fsdp_units.empty();
  const bool zero = !costs.param_gather_bytes.empty() || fsdp;
  const NcclCommunicator comm = CommunicatorOf(platform);
  for (int32_t stage = 0; stage < schedule.num_stages; ++stage) {
    const int32_t rank = schedule.stage_to_rank[stage].value();
    const int64_t gradient = costs.DenseGradientBytes(stage);
    // ZeRO-3's collectives run unit by unit (sim/gradient_sync.h).
    const int64_t buckets =
        fsdp ? std::max<int64_t>(1, costs.fsdp_units[stage])
        : grad_bucket_bytes > 0
            ? std::max<int64_t>(1, (gradient + grad_bucket_bytes - 1) / grad_bucket_bytes)
            : 1;
    const int32_t ppn =
        rules.rings_only || platform.gpus_per_node == 0 ? 0 : MembersPerNode(platform, rank);
    // A ring member's steps merge (CollectivePlan::merge_steps) where every member's successor is
    // as far as every other's: each replica's GPUs on a node of their own, or all on one node.
    const int32_t spread = platform.gpus_per_node == 0 ? 1 : MembersPerNode(platform, rank);
    const bool merge_steps =
        platform.xml_file.empty() && (spread == 1 || spread == platform.layout.dp);
    CollectivePlan plans[2];
    for (int k = 0; k < (zero ? 2 : 1); ++k) {
      CollectiveRow row;
      row.stage = stage;
      row.kind = k == 1 ? CollectiveKind::kAllGather
                 : zero ? CollectiveKind::kReduceScatter
                        : CollectiveKind::kAllReduce;
      const int64_t total = k == 0 ? gradient
                            : fsdp ? costs.fsdp_gather_bytes[stage]
                                   : costs.param_gather_bytes[stage];
      row.bytes = total / buckets + (total % buckets > 0 ? 1 : 0);
      const std::string what = where.Where("collective_algorithm") + ": stage " +
                               std::to_string(stage) + "'s " +
                               std::string(CollectiveKindName(row.kind));
      RETURN_IF_ERROR(PlanCollective(rules, ppn, what, comm, &row, &plans[k]));
      plans[k].merge_steps = merge_steps;
      if (hsdp > 0) row.why = "HSDP";
      // A shard group of one GPU moves nothing (sim/gradient_sync.h).
      if (hsdp == 0 || int64_t{hsdp} * cp > 1) rows->push_back(row);
      if (hsdp == 0 || k != 0) continue;
      // HSDP: each GPU's 1/(S x cp) of the bucket all-reduced over dp / S GPUs.
      CollectiveRow replicas = row;
      replicas.kind = CollectiveKind::kAllReduce;
      replicas.bytes = (row.bytes + int64_t{hsdp} * cp - 1) / (int64_t{hsdp} * cp);
      replicas.members = parallelism->layout.dp / hsdp;
      replicas.members_per_node = 0;
      rows->push_back(replicas);
    }
    parallelism->reduce_plans.push_back(plans[0]);
    parallelism->gather_plans.push_back(plans[1]);
  }
  return Status();
}

}  // namespace ppsim
