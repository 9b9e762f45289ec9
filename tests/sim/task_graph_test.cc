#include "sim/task_graph.h"

#include <gtest/gtest.h>

#include "schedules/registry.h"
#include "schedules/schedule_text.h"
#include "tests/support/costs.h"

namespace ppsim {
namespace {

StageCosts UnitCosts(int32_t stages) {
  StageCosts costs;
  EXPECT_TRUE(BuildCosts({{"f", "1"}, {"b", "2"}}, stages, &costs).ok());
  return costs;
}

Status CompileText(const std::string& text) {
  Schedule s;
  Status status = ParseScheduleText(text, "t", &s);
  if (!status.ok()) return status;
  status = CheckSchedule(s);
  if (!status.ok()) return status;
  TaskGraph graph;
  return CompileTaskGraph(s, UnitCosts(s.num_stages), &graph);
}

TEST(CompileTaskGraph, OneTransferPerCrossRankDependency) {
  // 1F1B, p = 4, m = 8: 2 x 4 x 8 compute tasks; each of the 3 boundaries carries 8 activations
  // and 8 gradients.
  Schedule s;
  ASSERT_TRUE(GenerateSchedule("1F1B", ScheduleParams{4, 1, 8}, &s).ok());
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(s, UnitCosts(4), &graph).ok());
  EXPECT_EQ(graph.num_compute_tasks(), 64u);
  EXPECT_EQ(graph.num_tasks(), 64u + 48u);
  // Rank 1's first action (1F0) waits only for the activation transfer; its last (1B7) for its
  // predecessor on the rank and the gradient transfer.
  EXPECT_EQ(graph.num_predecessors[graph.ComputeTask(1, 0)], 1u);
  EXPECT_EQ(graph.num_predecessors[graph.ComputeTask(1, 15)], 2u);
  // Rank 3's 3B0 needs its own 3F0, which is also its predecessor in order: two edges, no transfer.
  EXPECT_EQ(graph.num_predecessors[graph.ComputeTask(3, 1)], 2u);
  EXPECT_EQ(graph.topological_order.size(), graph.num_tasks());
}

TEST(CompileTaskGraph, ReplicatesForDataParallelismAndSplitsForTensorParallelism) {
  // GPipe, p = 2, m = 2 (rank 0: F0 F1 B0 B1): per replica 8 compute tasks and 4 cross-rank
  // dependencies. dp 2, tp 2: 2 x 8 compute; 2 x 4 x 2 transfers of a 5-byte message split 3 + 2;
  // per stage and shard a ring of 2 (dp - 1) = 2 steps x 2 replicas sending 10 / 2 = 5 bytes.
  Schedule s;
  ASSERT_TRUE(GenerateSchedule("GPipe", ScheduleParams{2, 1, 2}, &s).ok());
  StageCosts costs;
  ASSERT_TRUE(
      BuildCosts({{"f", "1"}, {"b", "2"}, {"message_bytes", "5"}, {"grad_bytes", "10"}}, 2, &costs)
          .ok());
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(s, costs, Parallelism{{.dp = 2, .tp = 2}}, &graph).ok());
  EXPECT_EQ(graph.num_compute_tasks(), 16u);
  EXPECT_EQ(graph.num_tasks(), 16u + 16u + 16u);
  int transfers = 0, all_reduces = 0;
  std::vector<int64_t> transfer_bytes;
  for (size_t t = graph.num_compute_tasks(); t < graph.num_tasks(); ++t) {
    const Task& task = graph.tasks[t];
    if (task.kind == TaskKind::kTransfer) {
      ++transfers;
      EXPECT_EQ(task.replica, task.peer_replica);
      EXPECT_EQ(task.bytes, task.shard == 0 ? 3 : 2);
    } else {
      ASSERT_EQ(task.kind, TaskKind::kAllReduce);
      ++all_reduces;
      EXPECT_EQ(task.rank, task.peer);
      EXPECT_EQ(task.peer_replica, (task.replica + 1) % 2);
      EXPECT_EQ(task.bytes, 5);
    }
  }
  EXPECT_EQ(transfers, 16);
  EXPECT_EQ(all_reduces, 16);
  // Replica 1's 1F0 waits for both shards of its activation.
  EXPECT_EQ(graph.tasks[graph.ComputeTask(1, 0, 1)].replica, 1);
  EXPECT_EQ(graph.num_predecessors[graph.ComputeTask(1, 0, 1)], 2u);
  // The first ring step of stage 0 starts after rank 0's last backward (0B1, position 3); the
  // second after the first step's own send and the one it receives.
  const TaskId step0 = 32;  // transfers end at 16 + 16
  EXPECT_EQ(graph.tasks[step0].position, 0u);
  EXPECT_EQ(graph.num_predecessors[step0], 1u);
  bool after_last_backward = false;
  for (TaskId next : boost::make_iterator_range(
           boost::adjacent_vertices(graph.ComputeTask(0, 3, 0), graph.dag))) {
    after_last_backward = after_last_backward || next == step0;
  }
  EXPECT_TRUE(after_last_backward);
  EXPECT_EQ(graph.num_predecessors[step0 + 2], 2u);
  EXPECT_EQ(graph.topological_order.size(), graph.num_tasks());
}

TEST(CompileTaskGraph, SameRankDependenciesNeedNoTransfer) {
  // A V shape on one rank: stages 0 and 1 both on rank 0.
  Schedule s;
  ASSERT_TRUE(ParseScheduleText("rank 0: 0F0 1F0 1B0 0B0\n", "t", &s).ok());
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(s, UnitCosts(2), &graph).ok());
  EXPECT_EQ(graph.num_tasks(), 4u);
}

TEST(CompileTaskGraph, ReportsADeadlockWithEveryStuckRank) {
  EXPECT_EQ(CompileText("rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F1 1B1 1F0 1B0\n").message(),
            "deadlock: rank 0 waits at 0B0 for 1B0; rank 1 waits at 1F1 for 0F1");
  EXPECT_EQ(CompileText("rank 0: 0F0 0B0\nrank 1: 1B0 1F0\n").message(),
            "deadlock: rank 0 waits at 0B0 for 1B0; rank 1 waits at 1B0 for 1F0");
}

TEST(CompileTaskGraph, AnOverlapWaitsForBothHalves) {
  // The pair's backward needs the pair's own forward: it can never start.
  Status status = CompileText("rank 0: (0F0;0B0)OVERLAP_F_B\n");
  EXPECT_EQ(status.code(), StatusCode::kDeadlock);
  EXPECT_EQ(status.message(), "deadlock: rank 0 waits at (0F0;0B0)OVERLAP_F_B for 0F0");
}

}  // namespace
}  // namespace ppsim
