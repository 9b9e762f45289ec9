#include "sim/task_graph.h"

#include <string>
#include <utility>

#include "base/names.h"
#include "sim/dependencies.h"
#include "sim/gradient_sync.h"
#include "sim/host_copies.h"
#include "sim/p2p_calls.h"
#include "sim/task_graph_builder.h"

namespace ppsim {
namespace {

constexpr NamedValue<P2pMode> kP2pModes[] = {
    {"eager", P2pMode::kEager},
    {"megatron", P2pMode::kMegatron},
    {"megatron-no-overlap", P2pMode::kMegatronNoOverlap},
    {"torch", P2pMode::kTorch}};

const Action& ActionOf(const Schedule& schedule, const Task& task) {
  return schedule.orders[task.rank][task.position];
}

// The op of `action` that provides `need`.
std::string NeededOpName(const Need& need, const Action& action) {
  for (int k = 0; k < action.num_ops(); ++k) {
    const Op& op = action.op(k);
    if (op.stage.value() == need.stage && op.microbatch.value() == need.microbatch &&
        (op.kind == OpKind::kForward) == (need.output == Output::kActivation)) {
      return FormatOp(op);
    }
  }
  return FormatAction(action);
}

std::string DescribeDeadlock(const Schedule& schedule, const TaskGraph& graph,
                             const Producers& producers, const std::vector<bool>& done) {
  std::string message = "deadlock:";
  bool first = true;
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    const auto& order = schedule.orders[rank];
    size_t position = 0;
    while (position < order.size() && done[graph.ComputeTask(rank, position)]) ++position;
    if (position == order.size()) continue;
    const Action& action = order[position];
    std::string waits_for;
    for (int k = 0; k < action.num_ops(); ++k) {
      Need need;
      if (NeedsOf(action.op(k), schedule, &need) == 0) continue;
      const TaskId producer = producers.Of(need);
      if (done[producer]) continue;
      waits_for += (waits_for.empty() ? "" : " and ") +
                   NeededOpName(need, ActionOf(schedule, graph.tasks[producer]));
    }
    if (waits_for.empty()) waits_for = "its p2p call";
    message += std::string(first ? " " : "; ") + "rank " + std::to_string(rank) + " waits at " +
               FormatAction(action) + " for " + waits_for;
    first = false;
  }
  return message;
}

// What the engines read of the run besides its tasks: its layout, the replicas compiled and how
// its communication runs.
void SetRunLayout(const Parallelism& parallelism, int32_t replicas, TaskGraph* graph) {
  graph->num_replicas = replicas;
  graph->layout.dp = parallelism.layout.dp;
  graph->layout.tp = parallelism.layout.tp;
  graph->layout.cp = parallelism.layout.cp;
  graph->layout.ep = parallelism.layout.ep;
  graph->tp_comm_overlap = parallelism.tp_comm_overlap;
  graph->node_limited_routing = parallelism.node_limited_routing;
  graph->p2p_mode = parallelism.p2p_mode;
}

// Replica 0's compute tasks, rank by rank in schedule order, with their programs; returns which
// task produces each output.
Producers AddComputeTasks(const Schedule& schedule, const StageCosts& costs,
                          const Parallelism& parallelism, TaskGraphBuilder* builder) {
  const ParallelLayout& layout = parallelism.layout;
  TaskGraph& graph = builder->graph();
  // Only runs with MoE layers over several GPUs, tensor or context parallelism have programs.
  const bool programs = (!costs.moe.empty() && layout.ep > 1) || layout.tp > 1 || layout.cp > 1;
  ProgramTable table(costs, layout.ep, parallelism.overlap_compute_slowdown);
  Producers producers(schedule);
  graph.compute_begin.reserve(schedule.num_ranks + 1);
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
  graph.cp_a2a_size = costs.cp_a2a_size;
    graph.compute_begin.push_back(builder->next_id());
    const auto& order = schedule.orders[rank];
    for (size_t position = 0; position < order.size(); ++position) {
      const Action& action = order[position];
      const ComputeLoad load =
          ComputeLoadOf(costs, action, layout.tp, parallelism.tp_step_latency_s);
      const TaskId id = builder->Add(ComputeTaskOf(rank, position, load.duration_s));
      for (int k = 0; k < action.num_ops(); ++k) producers.Add(action.op(k), id);
      if (!programs) continue;
      const StageCosts::Collectives cp =
          layout.cp > 1 ? costs.ActionCollectives(action) : StageCosts::Collectives();
      graph.program_of.push_back(table.Of(action, load.ring_bytes, cp.cp_bytes, cp.cp_a2a_bytes));
    }
  }
  graph.compute_begin.push_back(builder->next_id());
  graph.compute_per_replica = builder->next_id();
  graph.programs = table.Take();
  return producers;
}

// Replicas 1 .. num_replicas - 1: copies of replica 0's compute tasks and programs. Numbers the
// part records of every compute task's program.
void ReplicateComputeTasks(TaskGraphBuilder* builder) {
  TaskGraph& graph = builder->graph();
  if (graph.programs.empty()) {
    graph.program_of.clear();
  } else {
    const std::vector<uint32_t> first(graph.program_of);
    for (int32_t replica = 1; replica < graph.num_replicas; ++replica) {
      graph.program_of.insert(graph.program_of.end(), first.begin(), first.end());
    }
    graph.part_begin.reserve(graph.program_of.size() + 1);
    size_t parts = 0;
    for (uint32_t program : graph.program_of) {
      graph.part_begin.push_back(parts);
      if (program != TaskGraph::kNoProgram) parts += graph.programs[program].size();
    }
    graph.part_begin.push_back(parts);
  }
  for (int32_t replica = 1; replica < graph.num_replicas; ++replica) {
    for (TaskId t = 0; t < graph.compute_per_replica; ++t) {
      Task task = builder->task(t);
      task.replica = task.peer_replica = static_cast<uint16_t>(replica);
      builder->Add(task);
    }
  }
}

// The edges between compute tasks, replica by replica: each rank's actions in order (unless p2p
// calls order them), and every data dependency, through a transfer per GPU of the rank when it
// crosses ranks. Returns the transfers (with their producers and consumers for p2p calls).
BoundaryTransfers AddDataDependencies(const Schedule& schedule, const StageCosts& costs,
                                      const Parallelism& parallelism, const Producers& producers,
                                      TaskGraphBuilder* builder) {
  const bool calls_mode = parallelism.p2p_mode != P2pMode::kEager;
  const int32_t group = parallelism.layout.tp * parallelism.layout.cp;  // GPUs per rank
  const TaskGraph& graph = builder->graph();
  BoundaryTransfers transfers;
  transfers.begin = builder->next_id();
  for (int32_t replica = 0; replica < graph.num_replicas; ++replica) {
    const TaskId offset = static_cast<TaskId>(replica) * graph.compute_per_replica;
    for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
      const auto& order = schedule.orders[rank];
      for (size_t position = 0; position < order.size(); ++position) {
        const TaskId consumer = graph.ComputeTask(rank, position, replica);
        if (position > 0 && !calls_mode) builder->AddEdge(consumer - 1, consumer);
        const Action& action = order[position];
        for (int k = 0; k < action.num_ops(); ++k) {
          Need need;
          if (NeedsOf(action.op(k), schedule, &need) == 0) continue;
          const TaskId producer = producers.Of(need) + offset;
          const int32_t from = builder->task(producer).rank;
          if (from == rank) {
            builder->AddEdge(producer, consumer);
            continue;
          }
          // The boundary crossed is between stages b and b + 1.
          const int32_t boundary = need.output == Output::kActivation ? need.stage : need.stage - 1;
          for (int32_t shard = 0; shard < group; ++shard) {
            const TaskId transfer = builder->Add(
                TransferTaskOf(TaskKind::kTransfer, replica, replica, shard, from, rank, boundary,
                               SplitBytes(costs.message_bytes[boundary], group, shard)));
            builder->AddEdge(producer, transfer);
            builder->AddEdge(transfer, consumer);
            if (calls_mode) transfers.ends.emplace_back(producer, consumer);
          }
        }
      }
    }
  }
  return transfers;
}

// Per compiled replica and rank, the last task on its stream: its last action, or a wait after
// it (kNoTask: an empty order).
std::vector<std::vector<TaskId>> StreamEnds(const Schedule& schedule, const TaskGraph& graph) {
  std::vector<std::vector<TaskId>> stream_end(graph.num_replicas,
                                              std::vector<TaskId>(schedule.num_ranks));
  for (int32_t replica = 0; replica < graph.num_replicas; ++replica) {
    for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
      const size_t n = schedule.orders[rank].size();
      stream_end[replica][rank] =
          n == 0 ? TaskGraph::kNoTask : graph.ComputeTask(rank, n - 1, replica);
    }
  }
  for (TaskId w = graph.waits_begin; w < graph.num_tasks(); ++w) {
    const Task& wait = graph.tasks[w];
    if (wait.position == schedule.orders[wait.rank].size()) stream_end[wait.replica][wait.rank] = w;
  }
  return stream_end;
}

}  // namespace

std::string_view P2pModeName(P2pMode mode) { return NameOf(kP2pModes, mode); }

Status ParseP2pMode(std::string_view what, std::string_view text, P2pMode* mode) {
  return ParseNamed(kP2pModes, "p2p mode", what, text, mode);
}

bool TaskGraph::HasParts(PartKind kind) const {
  for (const TaskProgram& program : programs) {
    for (const TaskPart& part : program) {
      if (part.kind == kind) return true;
    }
  }
  return false;
}

bool TaskGraph::HasMoeParts() const {
  for (const TaskProgram& program : programs) {
    if (ppsim::HasMoeParts(program)) return true;
  }
  return false;
}

ComputeLoad ComputeLoadOf(const StageCosts& costs, const Action& action, int32_t tp,
                          double tp_step_latency_s) {
  ComputeLoad load{costs.ActionDuration(action), 0};
  if (tp > 1) {
    // The rings' bytes go to the task's program (its kTpRing part); the tensor-parallel steps'
    // latencies but one (the transfers' own) to the compute stream.
    const StageCosts::Collectives ring = costs.ActionCollectives(action);
    load.ring_bytes = ring.bytes;
    if (ring.steps > 1) load.duration_s += static_cast<double>(ring.steps - 1) * tp_step_latency_s;
  }
  return load;
}

Status CompileTaskGraph(const Schedule& schedule, const StageCosts& costs,
                        const Parallelism& parallelism, TaskGraph* graph) {
  *graph = TaskGraph();
  // Folded, replica 0 stands for all of them.
  const int32_t replicas = parallelism.fold_replicas ? 1 : parallelism.layout.dp;
  // 1F1B-like schedules have about one transfer per compute task and three edges.
  const size_t actions = schedule.NumActions() * replicas;
  TaskGraphBuilder builder(2 * actions, 3 * actions);
  TaskGraph& built = builder.graph();
  SetRunLayout(parallelism, replicas, &built);
  const Producers producers = AddComputeTasks(schedule, costs, parallelism, &builder);
  ReplicateComputeTasks(&builder);
  const BoundaryTransfers transfers =
      AddDataDependencies(schedule, costs, parallelism, producers, &builder);
  const GradientSync sync = AddGradientSync(schedule, costs, parallelism, &builder);
  for (const auto& [backward, timer] : sync.delays) built.bucket_timers.push_back(timer);
  std::sort(built.bucket_timers.begin(), built.bucket_timers.end());
  const std::vector<std::pair<TaskId, TaskId>> prefetch = AddHostCopies(schedule, costs, &builder);
  built.waits_begin = builder.next_id();
  if (parallelism.p2p_mode != P2pMode::kEager) {
    RETURN_IF_ERROR(AddP2pCalls(schedule, parallelism.p2p_mode, transfers, &builder));
  }
  AddOptimizerSteps(schedule, costs, sync, StreamEnds(schedule, built), &builder);
  builder.CopyPredecessors(sync.delays);
  builder.CopyPredecessors(prefetch);
  if (!builder.Finish(graph)) {
    std::vector<bool> done(graph->num_tasks(), false);
    for (TaskId t : graph->topological_order) done[t] = true;
    return Status::Deadlock(DescribeDeadlock(schedule, *graph, producers, done));
  }
  return Status();
}

}  // namespace ppsim
