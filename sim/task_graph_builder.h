// Building a TaskGraph. The compiler's pieces (sim/task_graph.cc, sim/gradient_sync.h,
// sim/collective_steps.h, sim/p2p_calls.h) add tasks and edges to one builder, which owns them
// until Finish freezes the edges into the graph's DAG and orders its tasks. Task ids are given
// in the order tasks are added, and each task's successors keep the order their edges were
// added in (the engines launch ready tasks in that order).
#ifndef PPSIM_SIM_TASK_GRAPH_BUILDER_H_
#define PPSIM_SIM_TASK_GRAPH_BUILDER_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/task_graph.h"

namespace ppsim {

// Part `index` of `bytes` split into `parts` as evenly as whole bytes allow.
inline int64_t SplitBytes(int64_t bytes, int32_t parts, int32_t index) {
  return bytes / parts + (index < bytes % parts ? 1 : 0);
}

// The bytes a collective's protocol moves for `bytes` of data (CollectivePlan::wire_factor).
inline int64_t OnTheWire(int64_t bytes, double wire_factor) {
  if (wire_factor == 1) return bytes;
  return static_cast<int64_t>(std::ceil(static_cast<double>(bytes) * wire_factor));
}

// A compute task of `rank` (replica 0) at `position` in its order.
Task ComputeTaskOf(int32_t rank, size_t position, double duration_s);
// A timer of `duration_s` (TaskKind::kDelay) beside (rank, position) of `replica`.
Task DelayTaskOf(int32_t rank, size_t position, int32_t replica, double duration_s);
// A transfer or collective step from GPU `shard` of (replica, rank) to the same GPU of
// (peer_replica, peer).
Task TransferTaskOf(TaskKind kind, int32_t replica, int32_t peer_replica, int32_t shard,
                    int32_t rank, int32_t peer, int32_t position, int64_t bytes);

// A GPU of a gradient ring: its replica and its GPU in the rank's group.
struct RingMember {
  int32_t replica = 0;
  int32_t shard = 0;
};

// Per compiled member of a collective, in the collective's order: the tasks its first step waits
// for, its data being ready and the collective before it on its stream (kNoTask: nothing).
struct MemberWaits {
  std::vector<TaskId> ready;
  std::vector<TaskId> previous;
};

// Per compiled member of a collective: its first task and its last.
struct MemberSpan {
  std::vector<TaskId> first;
  std::vector<TaskId> last;
};

// A ring over n = `size` members for (rank, stage), of which `members` (the first ones, in ring
// order) are compiled. With folded replicas `members` holds replica 0's, and the last one sends to
// `wrap_to` on a mirrored transfer (Task::mirrored = mirror_kind) that also stands for the send
// to member 0 from its predecessor, of replica `source_replica` (-1: the last replica,
// n / members - 1); member 0's predecessor is then the last compiled member, which stands for it.
// Not folded, `wrap_to` is members[0].
struct RingCollective {
  int32_t rank = 0;
  int32_t stage = 0;
  int32_t size = 0;
  std::vector<RingMember> members;
  RingMember wrap_to;
  uint8_t mirror_kind = Task::kMirrored;
  int32_t source_replica = -1;
};

// Steps first .. first + count - 1 of a ring all-reduce of `bytes` (0 .. n - 2 reduce-scatter,
// n - 1 .. 2n - 3 all-gather), each moving one of n chunks of it, times the protocol's
// wire_factor.
struct RingSteps {
  int32_t first = 0;
  int32_t count = 0;
  int64_t bytes = 0;
  double wire_factor = 1;
  // With one member per replica each member's steps are a chain over one route (its own previous
  // step and its predecessor's, which with symmetric replicas ends at the same time): merge each
  // member's steps into one transfer (Task::steps).
  bool merge = false;
};

class TaskGraphBuilder {
 public:
  // Room for about this many tasks and edges (a hint).
  TaskGraphBuilder(size_t expected_tasks, size_t expected_edges);

  // The graph being built: its tasks so far and the fields the compiler sets (layout, compute
  // ranges, programs, waits, optimizer steps). Its DAG and order are made by Finish.
  TaskGraph& graph() { return graph_; }
  const TaskGraph& graph() const { return graph_; }
  const Task& task(TaskId t) const { return graph_.tasks[t]; }
  // The id the next task added gets.
  TaskId next_id() const { return static_cast<TaskId>(graph_.tasks.size()); }

  // Adds `task`; returns its id.
  TaskId Add(const Task& task) {
    graph_.tasks.push_back(task);
    return static_cast<TaskId>(graph_.tasks.size() - 1);
  }
  // `to` starts after `from` has ended. Parallel edges are kept (each counts as a predecessor).
  void AddEdge(TaskId from, TaskId to) { edges_.emplace_back(from, to); }
  // The same, or nothing when `from` is TaskGraph::kNoTask.
  void AddEdgeFrom(TaskId from, TaskId to) {
    if (from != TaskGraph::kNoTask) edges_.emplace_back(from, to);
  }

  // Adds `steps` of `ring`: in step k member i sends chunk (i - k) mod n to member i + 1, after
  // its own previous step and member i - 1's; each member's first step after its `waits`.
  // REQUIRES: steps.count > 0; waits hold one entry per compiled member.
  MemberSpan AddRing(const RingCollective& ring, const RingSteps& steps, const MemberWaits& waits);

  // For each (task, copy): `copy` also waits for every predecessor `task` has so far (a timer
  // that starts when the task beside it can).
  void CopyPredecessors(const std::vector<std::pair<TaskId, TaskId>>& pairs);

  // Moves the graph into `graph` with its DAG, in-degrees and a topological order (Kahn's
  // algorithm, first-in first-out from task order: deterministic). Returns false when the edges
  // have a cycle: then the order holds the tasks that could run. The builder is left empty.
  bool Finish(TaskGraph* graph);

 private:
  TaskGraph graph_;
  std::vector<std::pair<TaskId, TaskId>> edges_;
};

}  // namespace ppsim

#endif  // PPSIM_SIM_TASK_GRAPH_BUILDER_H_
