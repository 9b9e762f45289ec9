// Activation offload in the task graph (StageCosts::offload_bytes, models/offload.h): each
// forward's offloaded bytes go to host memory after it and come back before its backward, as
// Megatron-core's fine-grained activation offloading (megatron/core/pipeline_parallel/
// fine_grained_activation_offload.py) and PipeOffload (Wan et al. 2025, arXiv 2503.01328) do.
//
// Per compiled replica and rank, walking its order (TaskKind::kHostCopy tasks):
//   offload  a device-to-host copy of the forward's stage's offload_bytes, after the forward ends
//            and after the rank's previous offload (Megatron's one d2h stream: copies run one at a
//            time). Megatron starts each module's copy as that module's forward ends, so part of
//            it overlaps the forward itself; at task granularity the copy starts at the
//            forward's end, which hides less (an upper bound on the exposed time).
//   reload   a host-to-device copy of the same bytes, after its offload and the rank's previous
//            reload (one h2d stream), starting when the action before the backward can start (it
//            copies that action's predecessors: the prefetch runs beside that action, as
//            Megatron's reload of the next backward chunk's layers runs during the current
//            backward); the backward (B or I) waits for it.
//   skipped  a forward whose backward is the rank's very next action is not offloaded: Megatron
//            keeps the group whose backward is next (should_bulk_offload), since it would only
//            come straight back.
// Memory (sim/metrics.h): the bytes leave the GPU when the offload ends and are held again from
// the reload's start.
#ifndef PPSIM_SIM_HOST_COPIES_H_
#define PPSIM_SIM_HOST_COPIES_H_

#include <utility>
#include <vector>

#include "models/stage_costs.h"
#include "schedules/schedule.h"
#include "sim/metrics.h"
#include "sim/task_graph_builder.h"

namespace ppsim {

// Adds the host copies of every compiled replica to `builder` (after its compute tasks), and
// returns the (action before the backward, reload) pairs whose predecessors the caller copies
// (TaskGraphBuilder::CopyPredecessors) once every edge into compute tasks is added. Nothing when
// costs.offload_bytes is empty or all zero.
// Each rank's peak memory from its order with every copy instant: a forward's offloaded bytes
// leave when it ends and return when the action before its backward starts. A lower bound on the
// peak any timeline of the compiled graph reports (copies take time; a reload starts no earlier),
// equal to PeakMemoryBytes without offload. The search's memory tier (batch/search.h).
std::vector<int64_t> PeakMemoryLowerBoundBytes(const Schedule& schedule, const StageCosts& costs,
                                               const MemoryReserve& reserve);

std::vector<std::pair<TaskId, TaskId>> AddHostCopies(const Schedule& schedule,
                                                     const StageCosts& costs,
                                                     TaskGraphBuilder* builder);

}  // namespace ppsim

#endif  // PPSIM_SIM_HOST_COPIES_H_
