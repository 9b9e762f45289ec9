// The task DAG a schedule compiles into, and the compiler.
//
// One compute task per action (an OVERLAP_F_B pair is one task) and one transfer task per
// cross-rank dependency: F(s)->F(s+1) carries an activation, I/B(s+1)->I/B(s) a gradient. Edges:
// a rank's actions in schedule order (its compute stream runs one task at a time), data
// dependencies (through the transfer task when the producer is on another rank), and W after its
// I. Transfers overlap compute.
#ifndef PPSIM_SIM_TASK_GRAPH_H_
#define PPSIM_SIM_TASK_GRAPH_H_

#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/range/iterator_range.hpp>
#include <cstdint>
#include <vector>

#include "models/stage_costs.h"
#include "schedules/schedule.h"
#include "schedules/status.h"

namespace ppsim {

using TaskId = uint32_t;

enum class TaskKind : uint8_t { kCompute, kTransfer };

struct Task {
  TaskKind kind = TaskKind::kCompute;
  int32_t rank = 0;       // Compute: the rank running it. Transfer: the sending rank.
  int32_t peer = 0;       // Transfer: the receiving rank. Compute: same as rank.
  uint32_t position = 0;  // Compute: index in the rank's order. Transfer: unused.
  double duration_s = 0;  // Compute: the action's duration. Transfer: 0 (the platform decides).
  int64_t bytes = 0;      // Transfer: message size. Compute: 0.
};

using TaskDag = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property,
                                                   boost::no_property, boost::no_property,
                                                   TaskId, TaskId>;

struct TaskGraph {
  // Compute tasks come first, rank by rank in schedule order: the task of action `position` on
  // `rank` is compute_begin[rank] + position. Transfer tasks follow.
  std::vector<Task> tasks;
  std::vector<TaskId> compute_begin;  // num_ranks + 1 entries.
  TaskDag dag;
  std::vector<TaskId> num_predecessors;    // In-degree of every task (parallel edges counted).
  std::vector<TaskId> topological_order;   // Every task, each after all its predecessors.

  size_t num_tasks() const { return tasks.size(); }
  size_t num_compute_tasks() const { return compute_begin.back(); }
  TaskId ComputeTask(int32_t rank, size_t position) const {
    return compute_begin[rank] + static_cast<TaskId>(position);
  }
};

// Compiles a schedule that CheckSchedule() accepted, with costs that CheckCostsCoverSchedule()
// accepted, into `graph`. Returns Deadlock when the order cannot execute, naming every stuck rank,
// the action it waits at and the ops it waits for:
//   "deadlock: rank 1 waits at 1B0 for 2B0; rank 2 waits at 2F3 for 1F3"
Status CompileTaskGraph(const Schedule& schedule, const StageCosts& costs, TaskGraph* graph);

}  // namespace ppsim

#endif  // PPSIM_SIM_TASK_GRAPH_H_
