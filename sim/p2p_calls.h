// Blocking p2p calls: how ranks issue and wait on their pipeline transfers in the P2pMode other
// than kEager, lowered into wait tasks and edges.
//
// With P2pMode::kMegatron (and kMegatronNoOverlap) every rank's order must have Megatron-LM's
// shape: single F and B actions, W forwards, then R forward-backward pairs, then W backwards
// (1F1B, Interleaved1F1B, GPipe); else InvalidInput "megatron: ...". The ranks issue p2p ops as
// Megatron's schedules do with its training defaults (sim/p2p-semantics.md); a transfer starts
// once both its send and its receive are posted, and a rank waits where Megatron waits:
//   one virtual stage per rank (forward_backward_pipelining_without_interleaving, batched groups
//     each waited on): warmup F: recv_forward before, send_forward after (two calls); before the
//     first pair: recv_forward; pair: send_forward_recv_backward between F and B,
//     send_backward_recv_forward after B (send_backward alone after the last pair); cooldown B:
//     recv_backward before, send_backward after;
//   several (forward_backward_pipelining_with_interleaving with overlap_p2p_comm): recv_forward
//     before the first action; after each warmup F a blocking send_forward_recv_forward (the last
//     also posts the first B's receive); in each pair, the F's input is waited on before it, after
//     it its output is sent (and waited on: deallocate_pipeline_outputs) and the next F's input
//     posted, the B's input is waited on before it, after it its output is sent and the next B's
//     input posted, and the previous B's send waited on; the first cooldown B waits for its queued
//     input, each cooldown B is followed by a blocking send_backward_recv_backward; the last
//     pair's send is waited on at the end.
//   A receive posted after a step is, as Megatron's recv_tensor_from_previous_stage decides, the
//   tensor the upstream rank sends in the same step: the input of the rank's next forward
//   (backward), except on the leading rank of the direction (rank 0 forward, the last rank
//   backward), where it is the output the other end computed p - 1 steps earlier, feeding this
//   rank's next chunk of that microbatch: the next action when microbatch groups are p long,
//   a later one with longer groups (Megatron-Interleaved's --microbatch-group-size).
// A call that waits on nothing that moves is not made.
//
// With P2pMode::kTorch the orders are lowered as _PipelineScheduleRuntime's _add_send_recv does:
// round-robin over the ranks, one action per rank and round, an action once its inputs are there;
// its sends follow it, and each receive is placed at the receiving rank's current end. PyTorch's
// single-stage ScheduleGPipe and Schedule1F1B classes run their own loops (fused pairs), which
// this mode does not follow.
#ifndef PPSIM_SIM_P2P_CALLS_H_
#define PPSIM_SIM_P2P_CALLS_H_

#include <utility>
#include <vector>

#include "base/status.h"
#include "schedules/schedule.h"
#include "sim/task_graph.h"
#include "sim/task_graph_builder.h"

namespace ppsim {

// The pipeline's boundary transfers: tasks begin .. begin + ends.size() - 1, each with its
// producer and consumer compute tasks.
struct BoundaryTransfers {
  TaskId begin = 0;
  std::vector<std::pair<TaskId, TaskId>> ends;
};

// Orders each rank's stream by its p2p calls as `mode` (not kEager) issues them: a wait task per
// call that waits on something that moves, between the actions it sits between (from
// builder->graph().waits_begin on, which it sets); each transfer starts after both its send and
// its receive are posted and ends the calls that wait on them. The caller adds no order edges
// between a rank's actions. Errors: InvalidInput for an order Megatron does not run (above),
// Deadlock for orders torch cannot lower.
Status AddP2pCalls(const Schedule& schedule, P2pMode mode, const BoundaryTransfers& transfers,
                   TaskGraphBuilder* builder);

}  // namespace ppsim

#endif  // PPSIM_SIM_P2P_CALLS_H_
