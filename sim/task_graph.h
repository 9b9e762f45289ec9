// The task DAG a schedule compiles into, and the compiler.
//
// One compute task per action (an OVERLAP_F_B pair is one task) and one transfer task per
// cross-rank dependency: F(s)->F(s+1) carries an activation, I/B(s+1)->I/B(s) a gradient. Edges:
// a rank's actions in schedule order (its compute stream runs one task at a time, or its p2p
// calls order it: sim/p2p_calls.h), data dependencies (through the transfer task when the
// producer is on another rank), and W after its I. Transfers overlap compute.
//
// With tensor parallelism (tp > 1) a rank is a group of tp GPUs: a boundary message is split into
// tp transfers (GPU k of the group to GPU k of the next, bytes divided as evenly as whole bytes
// allow, the first ones one byte larger), all of which the consumer waits for. A compute task's
// tensor-parallel collectives, its ring attention (context parallelism) and its expert-parallel
// all-to-alls are parts of its program (sim/task_program.h).
//
// With data parallelism (dp > 1) the pipeline is replicated dp times and the replicas synchronise
// their gradients after each stage's last backward, then take their optimizer steps
// (sim/gradient_sync.h). Replica folding (Parallelism::fold_replicas): data-parallel replicas
// run the same tasks at the same times when nothing tells them apart, so only replica 0 is
// compiled: its compute, pipeline transfers, programs and optimizer steps, and its own GPUs' part
// of every gradient collective, which stands for the other replicas' (sim/gradient_sync.h).
#ifndef PPSIM_SIM_TASK_GRAPH_H_
#define PPSIM_SIM_TASK_GRAPH_H_

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/range/iterator_range.hpp>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/parallel_layout.h"
#include "base/status.h"
#include "models/stage_costs.h"
#include "schedules/schedule.h"
#include "sim/collective_plan.h"
#include "sim/nccl_tuning.h"
#include "sim/task_program.h"

namespace ppsim {

using TaskId = uint32_t;

// GPUs of one rank (tp x cp): Task::shard and Task::peer_shard number them in 16 bits.
inline constexpr int32_t kMaxGpusPerRank = 65535;
// Data-parallel replicas: Task::replica, peer_replica and source_replica number them in 16 bits.
inline constexpr int32_t kMaxReplicas = 65535;

enum class TaskKind : uint8_t {
  kCompute,    // an action of the schedule
  kTransfer,   // part of a stage-boundary message (an activation or a gradient)
  kAllReduce,  // one step of one GPU in a data-parallel gradient all-reduce
  kWait,       // a rank's blocking p2p call returning (P2pMode::kMegatron); takes no time itself
  kOptimizer,  // a rank's optimizer step, after its last action and its gradients' all-reduces
  // A timer that lasts duration_s and uses no GPU or link: a gradient bucket becoming ready
  // part-way through the stage's last backward (--grad-bucket; it starts when the compute task it
  // stands beside can start: it has the same predecessors), a collective's fixed latency before
  // its first step, or the end of a collective whose last step has two parts.
  kDelay,
  // An activation offload copy (Megatron's fine-grained activation offloading, models/offload.h):
  // the offloaded bytes of a forward's stage moving between its rank's GPUs and host memory over
  // each GPU's own host link (PlatformSpec::host_link_*), in the direction Task::peer_shard says
  // (kDeviceToHost after the forward, kHostToDevice before its backward). Every GPU of the rank
  // moves its own Task::bytes at once over its own link, so one task stands for all of them.
  // A GPU's copies of one direction run one at a time, in order (Megatron's d2h and h2d
  // streams): each lasts HostCopySeconds (sim/engine.h), on no shared resource.
  kHostCopy,
};
inline constexpr uint16_t kDeviceToHost = 0;
inline constexpr uint16_t kHostToDevice = 1;

// How ranks issue and wait on their pipeline transfers.
enum class P2pMode : uint8_t {
  // A transfer starts as soon as its producer ends, and only its consumer waits for it: ideal
  // overlap, what the closed forms and the zero-bubble paper's Table 5 assume.
  kEager,
  // As Megatron-LM's schedules (megatron/core/pipeline_parallel/schedules.py with the training
  // defaults: batched p2p groups, each waited on and followed by a device synchronize): a rank
  // issues blocking calls between its actions, each sending the outputs of the action before and
  // receiving the inputs of the action after (sim/p2p_calls.h), and does nothing else until
  // every transfer of the call has ended. A transfer starts once both ranks have reached the calls
  // that hold it (NCCL's send/recv rendezvous).
  kMegatron,
  // Megatron-LM with --no-overlap-p2p-communication (as the zero-bubble paper's runs): the same for
  // 1F1B; the interleaved schedule's calls are batched and blocking too, and in its steady state
  // one call after each forward-backward pair sends both outputs and receives both next inputs
  // (sim/p2p-semantics.md, section 4.2).
  kMegatronNoOverlap,
  // As torch.distributed.pipelining's _PipelineScheduleRuntime (the runtime of its multi-stage
  // schedules and of orders loaded from CSV): sends posted right after their producer and waited
  // on at the end of the step; each receive posted where the runtime's lowering puts it and
  // waited on just before its consumer (sim/p2p_calls.h).
  kTorch,
};

// "eager", "megatron", "megatron-no-overlap", "torch".
std::string_view P2pModeName(P2pMode mode);
// The message starts with `what` and lists the valid names.
Status ParseP2pMode(std::string_view what, std::string_view text, P2pMode* mode);

struct Task {
  TaskKind kind = TaskKind::kCompute;
  // kAllReduce with folded replicas: a step from a compiled member to a member of another replica
  // (its successor in the ring, the node or across nodes), standing for every member's send to
  // its successor and receive from its predecessor: it moves on PlatformSpec::SplicedRoute (see
  // RouteOf in sim/engine.h). kExpertMirror: the same for a step of the experts' ring, whose
  // successor and predecessor are members of other replicas than the data-parallel rings' (its
  // mirror host must differ from theirs).
  uint8_t mirrored = 0;
  static constexpr uint8_t kMirrored = 1;
  static constexpr uint8_t kExpertMirror = 2;
  // Mirrored steps: the replica of the member whose send to this one's GPU (in replica 0) the step
  // also stands for: its predecessor in the collective's ring or group.
  uint16_t source_replica = 0;
  uint16_t replica = 0;       // The data-parallel replica running it (transfers: the sender's).
  uint16_t peer_replica = 0;  // Transfers: the receiver's replica. Compute: same as replica.
  uint16_t shard = 0;         // Transfers: the GPU of the rank's group. Compute: 0.
  uint16_t peer_shard = 0;    // Transfers: the receiver's GPU of its group (all-reduce rings with
                              // context parallelism cross the group). Compute: 0.
  // kAllReduce: how many ring steps this transfer stands for, one after another over its route
  // (a ring member's chain merged into one transfer): it lasts (steps - 1) of the route's latency
  // more than one transfer of its bytes, the latencies first.
  uint16_t steps = 1;
  int32_t rank = 0;           // Compute: the rank running it. Transfers: the sending rank.
  int32_t peer = 0;           // Transfers: the receiving rank. Compute: same as rank.
  // Compute: index in the rank's order. kHostCopy: the index of the forward (offload) or of the
  // backward (reload) it belongs to. kTransfer: the boundary (between stages b and b + 1).
  // kAllReduce: the stage whose gradients move. kWait: how many of the rank's actions come before
  // the call. kOptimizer: the number of the rank's actions.
  uint32_t position = 0;
  double duration_s = 0;  // Compute, optimizer: its duration. Transfers: 0 (the platform decides).
  // Transfers: bytes moved. Compute: 0 (its rings' bytes are in its program, TaskGraph::programs).
  int64_t bytes = 0;
};

// How the run is laid out and how its communication runs.
struct Parallelism {
  // dp pipeline replicas run side by side; a rank is a group of tp x cp GPUs, cp slices of tp
  // (GPU j * tp + k is GPU k of slice j). Boundary messages split over all of them; each
  // tensor-parallel ring stays in its slice; ring attention passes K and V from slice j to slice
  // j + 1 (StageCosts::cp_*); the gradients' rings run over the dp x cp GPUs with the same
  // tensor-parallel index. layout.ep: see below. layout.pp is the schedule's (not read).
  ParallelLayout layout;
  P2pMode p2p_mode = P2pMode::kEager;
  // Tensor-parallel collectives (StageCosts::tp_*): whether they overlap their op's compute, and
  // the latency of one ring step (a route between two GPUs of a group).
  bool tp_comm_overlap = false;
  double tp_step_latency_s = 0;
  // Data-parallel gradient buckets (Megatron's overlap_grad_reduce): each stage's gradients are
  // split into buckets of at most this many bytes, each all-reduced as soon as the stage's last
  // backward has produced it. 0: one all-reduce after that backward.
  int64_t grad_bucket_bytes = 0;
  // Compile replica 0 only and let it stand for all dp replicas (see the top of this file).
  // Default: every replica is compiled.
  bool fold_replicas = false;
  // Per stage: the plan of its gradients' reduction (all-reduce, or ZeRO-1's reduce-scatter) and
  // of ZeRO-1's parameter all-gather. Empty: rings. REQUIRES: cp = 1 for plans other than ring;
  // dp a multiple of every plan's members_per_node.
  std::vector<CollectivePlan> reduce_plans = {};
  std::vector<CollectivePlan> gather_plans = {};
  // Expert parallelism (StageCosts::moe, layout.ep): how much longer computation takes inside an
  // OVERLAP_F_B pair whose all-to-alls run beside it on SMs of their own (SMs / (SMs -
  // communication SMs); 1: no slowdown).
  double overlap_compute_slowdown = 1;
  // DeepSeek's node-limited routing (DeepSeek-V3 report, Secs. 2.1.2 and 3.2.2): an all-to-all
  // sends over the network only to the GPU of the same index on each other node of the group
  // (TaskPart::node_bytes, the tokens bound for that node, once), beside its NVLink sends to the
  // GPUs of its own node (TaskPart::bytes: N x the share of one GPU's tokens for each of them,
  // the tokens of the node's experts from all N nodes of the group, its own and those forwarded,
  // the forwarding pipelined with the receiving). false: every member sends to every other (over
  // PXN across rails).
  bool node_limited_routing = false;
};

using TaskDag = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property,
                                                   boost::no_property, boost::no_property,
                                                   TaskId, TaskId>;

struct TaskGraph {
  // Compute tasks come first, replica by replica, and within a replica rank by rank in schedule
  // order: the task of action `position` on `rank` of `replica` is
  // replica * compute_per_replica + compute_begin[rank] + position. Transfers and all-reduce steps
  // follow, then the wait tasks (from waits_begin on).
  std::vector<Task> tasks;
  std::vector<TaskId> compute_begin;  // num_ranks + 1 entries.
  TaskId compute_per_replica = 0;
  // The run's layout: its dp data-parallel replicas, tensor- and context-parallel degrees (a rank
  // has tp x cp GPUs) and expert-parallel degree; pp is the schedule's ranks.
  ParallelLayout layout;
  int32_t num_replicas = 1;  // replicas compiled: layout.dp, or 1 when folded
  bool folded() const { return num_replicas < layout.dp; }
  // Whether a compute task's tensor-parallel rings (PartKind::kTpRing) start with the task,
  // alongside its compute (else after it: sim/task_program.h).
  bool tp_comm_overlap = false;
  // Hierarchical context parallelism: the slices of an inner all-to-all group (PartKind::kCpA2a,
  // StageCosts::cp_a2a_size); ring attention passes from slice j to slice j + cp_a2a_size.
  int32_t cp_a2a_size = 1;
  bool node_limited_routing = false;  // Parallelism::node_limited_routing
  P2pMode p2p_mode = P2pMode::kEager;  // Parallelism::p2p_mode
  // Programs (sim/task_program.h): the distinct programs of the compute tasks that have one
  // (MoE parts, tensor-parallel rings, ring attention), and per compute task the index of its
  // program (kNoProgram: none); program_of is empty when no task has one. part_begin[t]: the
  // first of task t's parts in the timeline's part records (num_compute_tasks() + 1 entries, with
  // program_of): part i of task t is record part_begin[t] + i.
  std::vector<TaskProgram> programs;
  std::vector<uint32_t> program_of;
  std::vector<size_t> part_begin;
  static constexpr uint32_t kNoProgram = ppsim::kNoProgram;
  const TaskProgram* ProgramOfTask(size_t t) const {
    return t < program_of.size() && program_of[t] != kNoProgram ? &programs[program_of[t]]
                                                                : nullptr;
  }
  // Whether some task's program has a part of `kind`.
  bool HasParts(PartKind kind) const;
  // Whether some task's program has MoE parts (computation and all-to-alls).
  bool HasMoeParts() const;
  // The record of compute task t's ring of kind `ring` (kTpRing or kCpRing) in the timeline's
  // part records, or kNoRecord when it has none.
  static constexpr size_t kNoRecord = ~size_t{0};
  size_t RingRecord(size_t t, PartKind ring) const {
    const TaskProgram* program = ProgramOfTask(t);
    const int32_t i = program == nullptr ? -1 : RingPartOf(*program, ring);
    return i < 0 ? kNoRecord : part_begin[t] + static_cast<size_t>(i);
  }
  TaskDag dag;
  std::vector<TaskId> num_predecessors;    // In-degree of every task (parallel edges counted).
  std::vector<TaskId> topological_order;   // Every task, each after all its predecessors.
  // Wait tasks: [waits_begin, num_tasks()). wait_after[t - waits_begin] is the task before wait t
  // on its rank's stream (kNoTask when it is the first): the rank blocks from that task's end to
  // the wait's end.
  // (kNoTask, as in a graph built by hand: none.)
  TaskId waits_begin = kNoTask;
  std::vector<TaskId> wait_after;
  // Delay tasks (kDelay) sit among the transfers and all-reduce steps. bucket_timers: those that
  // are gradient buckets becoming ready part-way through a backward (sim/gradient_sync.h), in
  // increasing order; the others belong to collectives (a fixed latency, a join).
  std::vector<TaskId> bucket_timers;
  // Whether some task is a host copy (TaskKind::kHostCopy).
  bool has_host_copies = false;
  // Optimizer steps, one per rank and replica whose stages have one: [optimizer_begin, num_tasks()).
  TaskId optimizer_begin = kNoTask;
  static constexpr TaskId kNoTask = ~TaskId{0};

  size_t num_tasks() const { return tasks.size(); }
  // Transfers, all-reduce steps, timers and host copies: [num_compute_tasks(),
  // communication_end()).
  size_t communication_end() const { return std::min<size_t>(waits_begin, num_tasks()); }
  // Waits: [communication_end(), optimizers_begin()).
  size_t optimizers_begin() const { return std::min<size_t>(optimizer_begin, num_tasks()); }
  size_t num_compute_tasks() const {
    return static_cast<size_t>(compute_per_replica) * num_replicas;
  }
  TaskId ComputeTask(int32_t rank, size_t position, int32_t replica = 0) const {
    return static_cast<TaskId>(replica) * compute_per_replica + compute_begin[rank] +
           static_cast<TaskId>(position);
  }
};

// The compute task CompileTaskGraph makes of `action` with `tp` GPUs per rank: its duration (the
// action's, plus the tensor-parallel ring steps' latencies but one) and the bytes each GPU moves
// in its tensor-parallel ring (its program's kTpRing part, sim/task_program.h).
struct ComputeLoad {
  double duration_s = 0;
  int64_t ring_bytes = 0;
};
ComputeLoad ComputeLoadOf(const StageCosts& costs, const Action& action, int32_t tp,
                          double tp_step_latency_s);

// Compiles a schedule that CheckSchedule() accepted, with costs that CheckCostsCoverSchedule()
// accepted, into `graph`. Errors: those of the p2p calls (sim/p2p_calls.h), and Deadlock naming
// where each blocked rank waits when the orders cannot all run.
Status CompileTaskGraph(const Schedule& schedule, const StageCosts& costs,
                        const Parallelism& parallelism, TaskGraph* graph);
inline Status CompileTaskGraph(const Schedule& schedule, const StageCosts& costs,
                               TaskGraph* graph) {
  return CompileTaskGraph(schedule, costs, Parallelism(), graph);
}

// What a compiled task costs while a run lives, measured on the 1F1B benchmark (the DAG, costs,
// timeline and the SimGrid child's share): about 140 bytes with 40-byte tasks; Task::steps made
// them 48.
inline constexpr double kBytesPerTask = 148;

// At most how many tasks a run of `stages` virtual stages, `microbatches` microbatches, `actions`
// compute actions per replica (0: at most three ops per stage and microbatch, F, I and W),
// `dp` replicas and ranks of `tp` x `cp` GPUs compiles into: compute tasks, the transfers
// between stages (2 per microbatch and boundary, per GPU of a rank), the gradient collectives'
// steps (stages x tp x CollectiveTasksBound(n) per member over the n = dp x cp GPUs holding the same
// parameters, n members or cp when `fold_replicas`; ZeRO-1's reduce-scatter and all-gather take
// as many) and the optimizer steps. Folded, one replica is compiled. Gradient buckets multiply the rings (checked
// where they are given). Computed in doubles: it never overflows.
// With p2p calls (P2pMode::kMegatron, kMegatronNoOverlap, kTorch) each action adds at most two
// wait tasks.
// At most this many pipelined chunks stand for a tree's (CollectivePlan::pipeline_chunks; each is
// a step of the task graph).
inline constexpr int32_t kMaxPipelineChunks = 64;

// At most how many tasks one member of a collective over n GPUs compiles into, whatever its plan
// (CollectivePlan): a ring's 2(n - 1) steps of two transfers across nodes, or a tree's
// 2(ppn - 1) + 2 log2 N empty steps and kMaxPipelineChunks steps of two (ppn x N = n); ZeRO-1's
// reduce-scatter and all-gather as many in all; plus two timers (fixed latency, join) each.
inline double CollectiveTasksBound(double n) { return 6 * n + 2 * kMaxPipelineChunks + 8; }

inline double TaskCountBound(double stages, double microbatches, double actions, double dp,
                             double tp, P2pMode p2p_mode = P2pMode::kEager, double cp = 1,
                             bool fold_replicas = false) {
  const double members = dp * cp;
  const double compiled = fold_replicas ? 1 : dp;  // replicas
  const double compute = (actions > 0 ? actions : 3 * stages * microbatches) * compiled *
                         (p2p_mode == P2pMode::kEager ? 1 : 3);
  const double transfers = 2 * microbatches * (stages > 1 ? stages - 1 : 0) * tp * cp * compiled;
  const double allreduce = members > 1 ? stages * tp * CollectiveTasksBound(members) * compiled * cp : 0;
  const double optimizer = stages * compiled;  // at most one per rank and replica
  return compute + transfers + allreduce + optimizer;
}

// A task is 48 bytes (kBytesPerTask counts it and what a run holds per task besides).
static_assert(sizeof(Task) == 48);

}  // namespace ppsim

#endif  // PPSIM_SIM_TASK_GRAPH_H_
