// How one data-parallel collective of a stage runs: the plan sim/collective_plans.h chooses (as
// NCCL would, sim/nccl_tuning.h, or as the user forced) and sim/collective_steps.h compiles.
#ifndef PPSIM_SIM_COLLECTIVE_PLAN_H_
#define PPSIM_SIM_COLLECTIVE_PLAN_H_

#include <cstdint>

#include "sim/nccl_tuning.h"

namespace ppsim {

// A collective's n = dp members (one per replica, with the same tensor-parallel index) sit
// members_per_node to a node, replicas r .. r + ppn - 1 together (r a multiple of ppn), on
// N = n / ppn nodes. Each member's steps, one transfer each, all of one member's in order, each
// also after its group predecessor's step before (NCCL's steps wait for the peer's data):
//   ring: 2(n - 1) steps of S/n to the next replica (reduce-scatter: the first n - 1,
//     all-gather: the last n - 1), as without a plan; over several nodes of ppn > 1 GPUs,
//     NCCL's channels (one per NIC) leave each node through a different GPU: each step sends
//     (ppn - 1)/ppn of its chunk to the next GPU in the node and 1/ppn to the same GPU of the
//     next node, side by side.
//   hierarchical: ring reduce-scatter in the node (ppn - 1 steps of S/ppn to the next member of
//     the node), ring all-reduce across nodes (2(N - 1) steps of S/(ppn N) to the member of the
//     same place on the next node), ring all-gather in the node (ppn - 1 steps of S/ppn); a
//     reduce-scatter is the first two parts (N - 1 steps across), an all-gather the last two.
//   tree (all-reduce): the double binary tree's fill and drain, 2(ppn - 1) empty steps in the
//     node (its chain) and 2 ceil(log2 N) across, then `pipeline_chunks` = c steps, each 2S/c
//     along the chain beside 2S/(ppn c) to the next node (every node sends and receives 2S in
//     the two trees, over its ppn GPUs' NICs); on one node c steps of 2S/c.
//   nvls (one node): NVLink SHARP, a step of S (every GPU's chunks to the switch's reductions)
//     and one of S/ppn (the multicast of the reduced chunk it heads), S(1 + 1/ppn) each way as
//     NCCL's NVLS graph loads a GPU's links (sim/nccl-collectives.md §1.4, §2.5), both x 6/5:
//     NCCL's model gives NVLS 5/6 of that bus bandwidth (§2.3); reduce-scatter and all-gather
//     one step of 6/5 S(ppn - 1)/ppn.
//   nvls-tree (all-reduce, several nodes): the tree's fill across nodes, then c steps, each
//     nvls's 6/5 S(1 + 1/ppn)/c through the switch beside the heads' 2S/(ppn c) to the next node.
//     Steps sent side by side end together (a timer of no time after both ends the collective).
// Every step's bytes are multiplied by wire_factor (NCCL's protocol: LL moves 16 bytes per 8,
// LL128 128 per 120) and rounded up.
// A collective starts `fixed_latency_s` after its data is ready (NCCL's fixed cost: kernel launch
// and set-up, before its first step; a timer per member).
struct CollectivePlan {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  double fixed_latency_s = 0;
  int32_t members_per_node = 1;
  int32_t pipeline_chunks = 1;
  double wire_factor = 1;
  // A ring with one member per replica: each member's steps as one transfer (RingSteps::merge).
  // Only on a cluster platform, whose timer host holds the steps' latencies, and where every
  // member's successor is as far as every other's (each step ends at the same time on every
  // member, so a member's chain never waits on its predecessor's).
  bool merge_steps = false;
};

}  // namespace ppsim

#endif  // PPSIM_SIM_COLLECTIVE_PLAN_H_
