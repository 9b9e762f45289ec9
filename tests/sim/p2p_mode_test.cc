// --p2p-mode megatron: ranks block in Megatron-LM's p2p calls, and a transfer starts only once
// both ranks have reached their calls (NCCL's send/recv rendezvous).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "schedules/registry.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/task_graph.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

StageCosts Uniform(int32_t stages, double f, double b) {
  StageCosts c;
  for (int32_t s = 0; s < stages; ++s) {
    c.forward_s.push_back(f);
    c.backward_input_s.push_back(b / 2);
    c.backward_weight_s.push_back(b / 2);
    c.backward_s.push_back(b);
    c.overlap_s.push_back(f + b);
    c.activation_bytes.push_back(0);
    c.activation_w_bytes.push_back(0);
    c.message_bytes.push_back(0);
  }
  return c;
}

Schedule Generated(const std::string& name, int32_t p, int32_t v, int32_t m, int32_t g = 0) {
  ScheduleParams params;
  params.num_ranks = p;
  params.stages_per_rank = v;
  params.num_microbatches = m;
  params.microbatch_group_size = g;
  Schedule s;
  EXPECT_TRUE(GenerateSchedule(name, params, &s).ok()) << name;
  return s;
}

struct Case {
  const char* name;
  int32_t p, v, m;
  int32_t g = 0;  // Megatron-Interleaved's microbatch group size (0: p)
};

// Compiles each case with `mode` (uneven message sizes, latency and bandwidth on an ideal network)
// and expects both engines to run every task at the same times.
void ExpectEnginesAgree(P2pMode mode, std::initializer_list<Case> cases) {
  for (const Case& k : cases) {
    const Schedule s = Generated(k.name, k.p, k.v, k.m, k.g);
    StageCosts costs = Uniform(s.num_stages, 0.7, 1.3);
    for (int32_t stage = 0; stage < s.num_stages; ++stage) {
      costs.message_bytes[stage] = 1'000'000 * (stage + 1);
    }
    TaskGraph graph;
    const Status status = CompileTaskGraph(s, costs, Parallelism{{.dp = 1, .tp = 1}, mode}, &graph);
    ASSERT_TRUE(status.ok()) << k.name << ": " << status.message();
    const PlatformSpec platform = IdealPlatform(k.p, 0.01, 1e9);
    Timeline oracle, simgrid;
    ASSERT_TRUE(Execute(EngineKind::kCriticalPath, graph, platform, &oracle).ok());
    ASSERT_TRUE(Execute(EngineKind::kSimGrid, graph, platform, &simgrid).ok());
    for (size_t t = 0; t < graph.num_tasks(); ++t) {
      EXPECT_NEAR(simgrid.start_s[t], oracle.start_s[t], 1e-9 * (1 + oracle.end_s[t]))
          << k.name << " task " << t;
      EXPECT_NEAR(simgrid.end_s[t], oracle.end_s[t], 1e-9 * (1 + oracle.end_s[t]))
          << k.name << " task " << t;
    }
  }
}

std::vector<double> ComputeStarts(const TaskGraph& graph, const Timeline& timeline, int32_t rank) {
  std::vector<double> starts;
  for (TaskId t = graph.compute_begin[rank]; t < graph.compute_begin[rank + 1]; ++t) {
    starts.push_back(timeline.start_s[t]);
  }
  return starts;
}

// 1F1B, p = 2, m = 3, F = 1, B = 2, every transfer c = 0.25 (latency, no bytes). Megatron's calls
// (schedules.py, forward_backward_pipelining_without_interleaving):
//   rank 0 (W = 1): F0 send_forward | F1 send_forward_recv_backward | B0 | F2
//                   send_forward_recv_backward | B1 | recv_backward | B2
//   rank 1 (W = 0): recv_forward | F0 | B0 send_backward_recv_forward | F1 | B1
//                   send_backward_recv_forward | F2 | B2 send_backward
// By hand: rank 0 F0 [0, 1]; a(F0) moves [1, 1+c]; F1 [1+c, 2+c], rank 1 F0 [1+c, 2+c], B0
// [2+c, 4+c]; both calls are reached at 2+c and 4+c, so a(F1) and g(B0) move [4+c, 4+2c]; rank 0
// B0 [4+2c, 6+2c], F2 [6+2c, 7+2c]; rank 1 F1 [4+2c, 5+2c], B1 [5+2c, 7+2c]; a(F2) and g(B1) move
// [7+2c, 7+3c]; rank 0 B1 [7+3c, 9+3c] then waits in recv_backward; rank 1 F2 [7+3c, 8+3c], B2
// [8+3c, 10+3c]; g(B2) moves [10+3c, 10+4c]; rank 0 B2 [10+4c, 12+4c]. Eager, rank 1's F1 would
// start at 4+c, as soon as it is free (a(F1) arrived at 2+2c).
TEST(P2pMegatron, OneFOneBMatchesAHandDerivedTimeline) {
  const double c = 0.25;
  const Schedule s = Generated("1F1B", 2, 1, 3);
  const StageCosts costs = Uniform(2, 1, 2);
  const PlatformSpec platform = IdealPlatform(2, c);
  TaskGraph graph;
  ASSERT_TRUE(
      CompileTaskGraph(s, costs, Parallelism{{.dp = 1, .tp = 1}, P2pMode::kMegatron}, &graph).ok());
  EXPECT_EQ(graph.num_tasks() - graph.waits_begin, 8u);  // 4 calls per rank move something
  for (EngineKind engine : {EngineKind::kCriticalPath, EngineKind::kSimGrid}) {
    Timeline timeline;
    ASSERT_TRUE(Execute(engine, graph, platform, &timeline).ok());
    EXPECT_EQ(ComputeStarts(graph, timeline, 0),
              (std::vector<double>{0, 1 + c, 4 + 2 * c, 6 + 2 * c, 7 + 3 * c, 10 + 4 * c}))
        << EngineName(engine);
    EXPECT_EQ(ComputeStarts(graph, timeline, 1),
              (std::vector<double>{1 + c, 2 + c, 4 + 2 * c, 5 + 2 * c, 7 + 3 * c, 8 + 3 * c}))
        << EngineName(engine);
    const RunMetrics m = ComputeMetrics(s, costs, graph, timeline, 0);
    EXPECT_DOUBLE_EQ(m.makespan_s, 12 + 4 * c);
    // Rank 0 blocks c (send F0), 2 + c (F1 / g(B0)), c (F2 / g(B1)), 1 + c (recv g(B2));
    // rank 1 1 + c (recv F0), then c in each of its three calls.
    EXPECT_DOUBLE_EQ(m.ranks[0].p2p_wait_s, 3 + 4 * c);
    EXPECT_DOUBLE_EQ(m.ranks[1].p2p_wait_s, 1 + 4 * c);
  }
  TaskGraph eager;
  ASSERT_TRUE(CompileTaskGraph(s, costs, &eager).ok());
  Timeline timeline;
  ASSERT_TRUE(RunCriticalPath(eager, platform, &timeline).ok());
  EXPECT_EQ(ComputeStarts(eager, timeline, 1)[2], 4 + c);
}

// Without latency nothing is waited for longer than the work itself: Megatron's calls cost
// nothing over eager in 1F1B on an ideal network (the closed form (m + p - 1)(F + B)).
TEST(P2pMegatron, WithoutLatencyOneFOneBKeepsTheClosedForm) {
  const Schedule s = Generated("1F1B", 4, 1, 8);
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(s, Uniform(4, 1, 2),
                               Parallelism{{.dp = 1, .tp = 1}, P2pMode::kMegatron}, &graph)
                  .ok());
  Timeline timeline;
  ASSERT_TRUE(RunCriticalPath(graph, IdealPlatform(4), &timeline).ok());
  double makespan = 0;
  for (double end : timeline.end_s) makespan = std::max(makespan, end);
  EXPECT_DOUBLE_EQ(makespan, (8 + 4 - 1) * 3.0);
}

// The engines agree task by task, and Megatron's calls never deadlock, for every schedule with
// Megatron's shape, with latency and with bandwidth.
TEST(P2pMegatron, EnginesAgreeOnEveryMegatronShapedSchedule) {
  ExpectEnginesAgree(P2pMode::kMegatron, {{"1F1B", 3, 1, 5},
                                          {"1F1B", 4, 1, 2},
                                          {"GPipe", 3, 1, 4},
                                          {"Interleaved1F1B", 2, 2, 4},
                                          {"Interleaved1F1B", 3, 2, 6},
                                          {"Interleaved1F1B", 4, 3, 8},
                                          {"Megatron-Interleaved", 4, 2, 8}});
}

// Microbatch groups longer than p (--microbatch-group-size-per-virtual-pipeline-stage): rank 0
// receives the last rank's output for a later forward than its next (and the last rank, rank 0's
// backward output for a later backward), as Megatron's recv_tensor_from_previous_stage posts it p -
// 1 steps after the other end computed it. Posting them for the next action instead deadlocked.
TEST(P2pMegatron, LongMicrobatchGroupsDoNotDeadlock) {
  for (P2pMode mode : {P2pMode::kMegatron, P2pMode::kMegatronNoOverlap}) {
    ExpectEnginesAgree(mode, {{"Megatron-Interleaved", 2, 2, 4, 4},
                              {"Megatron-Interleaved", 4, 2, 16, 8},
                              {"Megatron-Interleaved", 4, 2, 16, 6},
                              {"Megatron-Interleaved", 4, 3, 12, 12},
                              {"Megatron-Interleaved", 3, 4, 10, 5}});
  }
}

TEST(P2pMegatron, WithoutOverlapEnginesAgreeAndOneFOneBIsUnchanged) {
  ExpectEnginesAgree(P2pMode::kMegatronNoOverlap, {{"1F1B", 3, 1, 5},
                                                   {"Interleaved1F1B", 2, 2, 4},
                                                   {"Interleaved1F1B", 3, 2, 6},
                                                   {"Interleaved1F1B", 4, 3, 8}});
  // 1F1B has no overlap option: the same calls, the same timeline.
  const Schedule s = Generated("1F1B", 4, 1, 8);
  std::vector<double> ends[2];
  for (int k = 0; k < 2; ++k) {
    TaskGraph graph;
    ASSERT_TRUE(
        CompileTaskGraph(s, Uniform(4, 1, 2),
                         Parallelism{{.dp = 1, .tp = 1},
                                     k == 0 ? P2pMode::kMegatron : P2pMode::kMegatronNoOverlap},
                         &graph)
            .ok());
    Timeline timeline;
    ASSERT_TRUE(RunCriticalPath(graph, IdealPlatform(4, 0.25), &timeline).ok());
    ends[k] = timeline.end_s;
  }
  EXPECT_EQ(ends[0], ends[1]);
}

TEST(P2pMegatron, OrdersWithoutMegatronsShapeAreRefused) {
  TaskGraph graph;
  const Status zb = CompileTaskGraph(Generated("ZB-H1", 4, 1, 8), Uniform(4, 1, 2),
                                     Parallelism{{.dp = 1, .tp = 1}, P2pMode::kMegatron}, &graph);
  EXPECT_EQ(zb.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(zb.message(),
            "megatron: rank 0's order is not Megatron-LM's: its action 0I0 is not a "
            "single F or B; Megatron runs 1F1B, Interleaved1F1B and GPipe orders");
}

// torch: 1F1B, p = 2, m = 2, F = 1, B = 2, c = 0.25. The runtime's lowering, round by round:
// rank 0 F0 (SEND after it; RECV on rank 1 at its start), rank 1 F0; rank 0 F1 (RECV on rank 1
// after its F0), rank 1 B0 (RECV on rank 0 after its F1); rank 0 B0, rank 1 F1; rank 1 B1 (RECV on
// rank 0 after its B0); rank 0 B1. So a(F1) starts when rank 1 has finished F0 (2.25, not 2 as
// eager), and each receive is waited on just before its consumer: rank 0 waits [2, 4.5] for g(B0)
// and [6.5, 7.5] for g(B1); rank 1 waits [0, 1.25] for a(F0) and [7.25, 7.5] for its sends at the
// end of the step.
TEST(P2pTorch, TheRuntimesLoweringPostsReceivesWhereTheSenderWasLowered) {
  const double c = 0.25;
  const Schedule s = Generated("1F1B", 2, 1, 2);
  const StageCosts costs = Uniform(2, 1, 2);
  TaskGraph graph;
  ASSERT_TRUE(
      CompileTaskGraph(s, costs, Parallelism{{.dp = 1, .tp = 1}, P2pMode::kTorch}, &graph).ok());
  for (EngineKind engine : {EngineKind::kCriticalPath, EngineKind::kSimGrid}) {
    Timeline timeline;
    ASSERT_TRUE(Execute(engine, graph, IdealPlatform(2, c), &timeline).ok());
    std::vector<double> transfer_starts;
    for (size_t t = graph.num_compute_tasks(); t < graph.communication_end(); ++t) {
      transfer_starts.push_back(timeline.start_s[t]);
    }
    std::sort(transfer_starts.begin(), transfer_starts.end());
    EXPECT_EQ(transfer_starts, (std::vector<double>{1, 2 + c, 4 + c, 7 + c})) << EngineName(engine);
    const RunMetrics m = ComputeMetrics(s, costs, graph, timeline, 0);
    EXPECT_DOUBLE_EQ(m.makespan_s, 9 + 2 * c);
    EXPECT_DOUBLE_EQ(m.ranks[0].p2p_wait_s, (4 + 2 * c - 2) + (7 + 2 * c - (6 + 2 * c)));
    EXPECT_DOUBLE_EQ(m.ranks[1].p2p_wait_s, (1 + c) + c);
  }
}

// The engines agree task by task in torch mode on every kind of order, split backwards and
// overlapped pairs included.
TEST(P2pTorch, EnginesAgreeOnEveryScheduleFamily) {
  ExpectEnginesAgree(P2pMode::kTorch, {{"GPipe", 3, 1, 4},
                                       {"1F1B", 4, 1, 8},
                                       {"Interleaved1F1B", 4, 2, 8},
                                       {"ZB-H1", 4, 1, 8},
                                       {"ZBVZeroBubble", 4, 2, 8},
                                       {"InterleavedZeroBubble", 4, 2, 8},
                                       {"DualPipeV", 4, 2, 10}});
}

}  // namespace
}  // namespace ppsim
