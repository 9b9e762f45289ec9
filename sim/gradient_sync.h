// The gradients' synchronisation over the data-parallel replicas, and the optimizer steps.
//
// With data parallelism (dp > 1) the pipeline is replicated dp times, and after the last backward
// of each stage every replica joins a ring all-reduce of the stage's gradients: 2(dp - 1) steps,
// in each of which every replica sends one of dp chunks to the next replica, once it has received
// the previous step's chunk. With tensor parallelism each of a rank's tp GPUs runs its own ring
// of its gradients; with context parallelism the ring runs over the dp x cp GPUs holding the same
// parameters (see Parallelism::layout). A stage's plan (Parallelism::reduce_plans, gather_plans;
// sim/collective_plan.h) may run the collective otherwise.
//
// With gradient buckets (Parallelism::grad_bucket_bytes) the stage's gradients are
// k = ceil(bytes / bucket) buckets, the backward produces them in order, bucket j
// (j = 0 .. k - 1) ready (j + 1)/k of the way through it (a kDelay task, the last one at its end),
// and each bucket's ring starts once its bucket is ready and the previous bucket's ring has ended
// (one NCCL stream). With ZeRO-1 (StageCosts::param_gather_bytes) each ring of n GPUs is a
// reduce-scatter (the first n - 1 steps) before the optimizer step and an all-gather of the 16-bit
// parameters (n - 1 steps of param_gather_bytes / n) after it.
//
// The routed experts' gradients (StageCosts::expert_gradient_bytes) are not in those rings: each
// GPU holds the experts of its place in its expert-parallel group (Parallelism::layout.ep), the
// same as every GPU of its expert-data-parallel group, the dp x tp x cp / e GPUs m' = m mod e
// (m = replica x tp x cp + GPU of the rank's group), and after its data-parallel collectives it
// joins a ring all-reduce over them in order of m' (also with ZeRO-1: the experts' reduce-scatter
// and all-gather move what one all-reduce does, and are not told apart).
//
// Replica folding (Parallelism::fold_replicas): only replica 0 is compiled, with its own GPUs'
// part of every gradient ring, whose n members' steps it stands for. Each member's step k then
// waits for its own step k - 1 and its ring predecessor's, the predecessor in another replica
// being replica 0's member of the same place (so with cp = 1 a member's 2(n - 1) steps form one
// chain), and a step to another replica is a mirrored transfer (Task::mirrored) that moves over
// the sending half of the route to its successor and the receiving half of the route from its
// predecessor, the links that member's own send and receive use. The engines give every link the
// share of it that one replica has (sim/engine.h). Exact when replicas are symmetric; see README
// for the bounds.
//
// FSDP (ZeRO-3, StageCosts::fsdp_units): the gradients are reduce-scattered unit by unit, each
// unit's a bucket ready as the last backward finishes it (no all-gather after the step); the
// units' 16-bit parameters are all-gathered, one collective per unit in order on one stream per
// GPU, before each op that needs them (the stage's first F; with fsdp_reshard every F and every
// B or I): the first unit after the rank's previous op ends (exposed), the op after the first
// unit, the rank's next op (or its optimizer step) after the last unit, so that the others are
// prefetched under the op's compute. HSDP (StageCosts::fsdp_shard: shard groups of S < dp
// replicas, r .. r + S - 1 for r a multiple of S, as torchtitan's (replicate, shard) mesh): the
// gathers and reduce-scatters run over a shard group's S x cp GPUs, and each unit's
// reduce-scatter is followed by an all-reduce of its 1/(S x cp) over the dp / S GPUs of the same
// place in the other groups (a ring, on the same stream), as FSDP2 runs HSDP. HSDP's collectives
// are rings (sim/collective_plans.h).
//
// Optimizer steps: one per rank and replica whose stages have one (StageCosts::optimizer_step_s),
// after the rank's last task on its stream and the last reduce steps of its stages' gradients;
// with ZeRO-1 the all-gathers of its stages follow it (or follow the reduce-scatters, without a
// step).
#ifndef PPSIM_SIM_GRADIENT_SYNC_H_
#define PPSIM_SIM_GRADIENT_SYNC_H_

#include <utility>
#include <vector>

#include "models/stage_costs.h"
#include "schedules/schedule.h"
#include "sim/task_graph.h"
#include "sim/task_graph_builder.h"

namespace ppsim {

// The gradient synchronisation's tasks that later parts of the compiler wire up.
struct GradientSync {
  // Per stage: the last reduce step (all-reduce or ZeRO-1's reduce-scatter) of every replica and
  // shard; the optimizer step of its rank waits for them.
  std::vector<std::vector<TaskId>> last_steps;
  // ZeRO-1, per stage: the first all-gather task of every replica and shard, which waits for the
  // optimizer step of its rank and replica.
  std::vector<std::vector<TaskId>> gather_starts;
  // (compute task, delay task beside it): the delay gets the compute task's predecessors
  // (TaskGraphBuilder::CopyPredecessors, once they are all added).
  std::vector<std::pair<TaskId, TaskId>> delays;
};

// Adds the collectives of every stage's gradients, after the compute tasks of builder->graph()
// (all its replicas). Adds nothing when no gradient is shared: dp x cp = 1 and no expert
// gradients reduced over several GPUs.
GradientSync AddGradientSync(const Schedule& schedule, const StageCosts& costs,
                             const Parallelism& parallelism, TaskGraphBuilder* builder);

// Per rank, how long its optimizer step lasts: the steps of its stages together (0: none).
std::vector<double> OptimizerStepSeconds(const Schedule& schedule, const StageCosts& costs);

// Adds the optimizer steps from builder->graph()'s optimizer_begin on. `stream_end`: per
// compiled replica and rank, the last task on its stream (kNoTask: none).
void AddOptimizerSteps(const Schedule& schedule, const StageCosts& costs, const GradientSync& sync,
                       const std::vector<std::vector<TaskId>>& stream_end,
                       TaskGraphBuilder* builder);

}  // namespace ppsim

#endif  // PPSIM_SIM_GRADIENT_SYNC_H_
