// How a run's data-parallel collectives run: NCCL's choice of algorithm and protocol for each
// stage's gradients (sim/nccl_tuning.h), or the algorithm the user forced, turned into the plans
// the task graph compiles (sim/collective_plan.h).
#ifndef PPSIM_SIM_COLLECTIVE_PLANS_H_
#define PPSIM_SIM_COLLECTIVE_PLANS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "models/stage_costs.h"
#include "platforms/platform.h"
#include "schedules/schedule.h"
#include "sim/nccl_tuning.h"
#include "sim/task_graph.h"

namespace ppsim {

// One collective as planned, for reports.
struct CollectiveRow {
  int32_t stage = 0;
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int64_t bytes = 0;  // of one bucket (the first), per GPU
  int32_t members = 0;
  int32_t members_per_node = 0;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  // NCCL's protocol, channels and model time; protocol "" when NCCL's model was not consulted
  // (a forced hierarchical algorithm, an XML platform, context parallelism).
  std::string protocol;
  int32_t channels = 0;
  double model_time_s = 0;
  std::string why;  // why not NCCL's choice, when it is not
};

// Fills parallelism->reduce_plans and gather_plans for a run of `schedule` with `costs` on
// `platform` (placed for dp replicas) and `rows` with what was chosen. `forced`: the algorithm
// the user chose (--collective-algorithm), or null for NCCL's choice. Each stage's collective
// runs over the dp x cp GPUs holding its parameters with one tensor-parallel index; NCCL's model
// sees them as n ranks on N nodes, ppn to a node. Errors (InvalidInput, where the algorithm was
// chosen): a forced algorithm NCCL cannot run there (ChooseNcclAlgorithm's reason), one whose
// members are not the same number on every node, in runs of consecutive replicas (hierarchical,
// tree, nvls, nvls-tree), or with --cp > 1, HSDP or an XML platform (rings only). With HSDP
// (StageCosts::fsdp_shard) the plans are for the shard groups (S x cp GPUs) and `rows` also has
// the replicas' all-reduce of each reduce-scatter's shard.
Status PlanCollectives(const Schedule& schedule, const StageCosts& costs,
                       const PlatformSpec& platform, int32_t cp, int64_t grad_bucket_bytes,
                       const CollectiveAlgorithm* forced, const Locator& where,
                       Parallelism* parallelism, std::vector<CollectiveRow>* rows);

}  // namespace ppsim

#endif  // PPSIM_SIM_COLLECTIVE_PLANS_H_
