// One data-parallel collective of a stage compiled into steps as its CollectivePlan says
// (sim/collective_plan.h): a ring (TaskGraphBuilder::AddRing) or the phases of another algorithm,
// after a timer per member for NCCL's fixed latency.
#ifndef PPSIM_SIM_COLLECTIVE_STEPS_H_
#define PPSIM_SIM_COLLECTIVE_STEPS_H_

#include <cstdint>

#include "sim/collective_plan.h"
#include "sim/nccl_tuning.h"
#include "sim/task_graph_builder.h"

namespace ppsim {

// The members of one collective: `ring` (over dp x cp members) as a ring runs it. A plan other
// than a ring runs over the `replicas` = dp GPUs of tensor-parallel index `shard` (cp = 1), member
// r being replica r, of which replicas 0 .. ring.members.size() - 1 are compiled (1 when folded:
// its steps to other replicas are mirrored).
struct CollectiveGroup {
  RingCollective ring;
  int32_t shard = 0;
  int32_t replicas = 0;
};

// Adds a collective of `kind` over `group` of `bytes` (each member's data), run by `plan`, each
// member's first task after its `waits`. Returns each member's first task (its timer when the
// collective has one: a plan with a fixed latency, or other than a ring) and its last (a step,
// or a timer of no time that joins a last step of two parts).
MemberSpan AddCollective(const CollectiveGroup& group, const CollectivePlan& plan,
                         CollectiveKind kind, int64_t bytes, MemberWaits waits,
                         TaskGraphBuilder* builder);

}  // namespace ppsim

#endif  // PPSIM_SIM_COLLECTIVE_STEPS_H_
