// Where the time goes (sim/communication.h): each kind of communication's total and exposed time,
// checked against timelines written out by hand on platforms where nothing contends (the ideal
// platform, an idle NVSwitch node), on both engines.
#include "sim/communication.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "schedules/registry.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/task_graph.h"
#include "tests/support/one_rank.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

constexpr EngineKind kEngines[] = {EngineKind::kCriticalPath, EngineKind::kSimGrid};

const CommSeconds& Of(const RunCommunication& c, int32_t rank, CommKind kind) {
  return c.ranks[rank].kinds[static_cast<int>(kind)];
}
bool Occurs(const RunCommunication& c, CommKind kind) { return c.occurs[static_cast<int>(kind)]; }

RunCommunication Measure(const TaskGraph& graph, EngineKind engine, const PlatformSpec& platform,
                         int32_t ranks, Timeline* timeline) {
  EXPECT_TRUE(Execute(engine, graph, platform, timeline).ok());
  return ComputeCommunication(graph, *timeline, ranks);
}

TEST(CommunicationKinds, StableKeys) {
  std::vector<std::string_view> keys;
  for (int k = 0; k < kNumCommKinds; ++k) keys.push_back(CommKindName(CommKindAt(k)));
  EXPECT_EQ(keys,
            (std::vector<std::string_view>{"pp_p2p", "tp", "cp", "dp", "ep_alltoall", "offload"}));
}

// 1F1B, p = 2, m = 1, F = 1, B = 2, every transfer c = 0.25 (ideal platform, 0 bytes).
// Eager: F0 on rank 0 [0, 1], its activation [1, 1.25], F0 on rank 1 [1.25, 2.25], B0 [2.25,
// 4.25], the gradient [4.25, 4.5], B0 on rank 0 [4.5, 6.5]. Each rank receives one transfer while
// it has nothing to compute: pp_p2p total c and exposed c on each.
TEST(Communication, PipelineTransfersEagerBelongToTheirReceiver) {
  ScheduleParams params;
  params.num_ranks = 2;
  params.num_microbatches = 1;
  Schedule s;
  ASSERT_TRUE(GenerateSchedule("1F1B", params, &s).ok());
  StageCosts costs = OneStageCosts(1, 2);
  costs.forward_s = {1, 1};
  costs.backward_s = {2, 2};
  costs.activation_bytes = costs.activation_w_bytes = costs.message_bytes = {0, 0};
  for (P2pMode mode : {P2pMode::kEager, P2pMode::kMegatron}) {
    TaskGraph graph;
    ASSERT_TRUE(CompileTaskGraph(s, costs, Parallelism{{.dp = 1, .tp = 1}, mode}, &graph).ok());
    for (EngineKind engine : kEngines) {
      SCOPED_TRACE(std::string(EngineName(engine)) + " " + std::string(P2pModeName(mode)));
      Timeline timeline;
      const RunCommunication c = Measure(graph, engine, IdealPlatform(2, 0.25), 2, &timeline);
      // Megatron's calls: the same transfers at the same times (rank 1 is already in its receive
      // when F0 ends, rank 0 in its receive when B0's gradient is sent), but the sender blocks
      // too: each rank has both, 2c in all, none hidden.
      const double expected = mode == P2pMode::kEager ? 0.25 : 0.5;
      for (int32_t rank : {0, 1}) {
        EXPECT_NEAR(Of(c, rank, CommKind::kPpP2p).total_s, expected, 1e-12);
        EXPECT_NEAR(Of(c, rank, CommKind::kPpP2p).exposed_s, expected, 1e-12);
      }
      EXPECT_TRUE(Occurs(c, CommKind::kPpP2p));
      for (CommKind k : {CommKind::kTp, CommKind::kCp, CommKind::kDp, CommKind::kEpAllToAll}) {
        EXPECT_FALSE(Occurs(c, k));
      }
      EXPECT_NEAR(c.max[0].exposed_s, expected, 1e-12);
      EXPECT_EQ(c.exposed_rank[0], 0);  // the first rank with the largest
    }
  }
}

// Tensor-parallel rings on an idle h100-node (450 GB/s per port and direction, 3 us per route):
// one rank of tp = 8, F 1 ms with one all-reduce of S = 64 MiB, B 2 ms with two (as
// tests/sim/tp_ring_test.cc). Each ring is one transfer per GPU of 2(t - 1)/t x S per all-reduce
// after the compute (whose duration holds the steps' latencies but one): R_F = 14/8 S / B + 3 us,
// R_B = 28/8 S / B + 3 us, nothing computing beside them: exposed = total = R_F + R_B.
// With --tp-comm-overlap each ring runs from its task's start, shorter than its compute
// (R_F = 0.26 ms < 1 ms, R_B = 0.52 ms < 2 ms): exposed 0, total the same R_F + R_B.
TEST(Communication, TensorParallelRingsExposedUnlessOverlapped) {
  constexpr int32_t kTp = 8;
  constexpr double kS = 64.0 * 1024 * 1024;
  const PlatformSpec platform = PlatformOrDie(PresetChoice("h100-node"), 1, 1, kTp);
  const double rf = 14.0 / 8 * kS / 450e9 + 3e-6;
  const double rb = 28.0 / 8 * kS / 450e9 + 3e-6;
  for (bool overlap : {false, true}) {
    StageCosts costs = OneStageCosts(1e-3, 2e-3);
    costs.tp_forward_steps = {2 * (kTp - 1)};
    costs.tp_backward_steps = {4 * (kTp - 1)};
    costs.tp_step_bytes = {static_cast<int64_t>(kS / kTp)};
    Parallelism parallelism{{.dp = 1, .tp = kTp}, P2pMode::kEager};
    parallelism.tp_comm_overlap = overlap;
    parallelism.tp_step_latency_s = 3e-6;
    TaskGraph graph;
    ASSERT_TRUE(CompileTaskGraph(OneRankOneMicrobatch(), costs, parallelism, &graph).ok());
    for (EngineKind engine : kEngines) {
      SCOPED_TRACE(std::string(EngineName(engine)) + (overlap ? " overlap" : ""));
      Timeline timeline;
      const RunCommunication c = Measure(graph, engine, platform, 1, &timeline);
      EXPECT_NEAR(Of(c, 0, CommKind::kTp).total_s, rf + rb, 1e-12);
      EXPECT_NEAR(Of(c, 0, CommKind::kTp).exposed_s, overlap ? 0 : rf + rb, 1e-12);
      EXPECT_FALSE(Occurs(c, CommKind::kPpP2p));
    }
  }
}

// Data parallelism, one rank of two replicas, F [0, 1], B [1, 5], 4e8 bytes of gradients, every
// step 0.01 s + chunk / 1e9 B/s (as tests/sim/grad_sync_test.cc), NCCL's fixed latency 0.05 s
// (a timer before each collective's first step).
// One all-reduce after B: timer [5, 5.05], 2 steps of 0.01 + 0.2: total = exposed = 0.47.
// Buckets of 1e8: ready at 2, 3, 4 and 5 (timers from 1 that are not communication); each
// 0.05 + 2 x (0.01 + 0.05) = 0.17 < 1, so the first three run during B: total 4 x 0.17, exposed
// the last 0.17.
// Folded (replica 0 compiled alone, standing for the other) or not, replica 0's figures are the
// same.
TEST(Communication, DataParallelCollectivesWithTheirTimersNotTheBucketTimers) {
  for (const auto& [bucket, fold] :
       {std::pair{int64_t{0}, false}, std::pair{int64_t{100'000'000}, false},
        std::pair{int64_t{0}, true}, std::pair{int64_t{100'000'000}, true}}) {
    StageCosts costs = OneStageCosts(1, 4);
    costs.gradient_bytes = {400'000'000};
    Parallelism parallelism{{.dp = 2, .tp = 1}, P2pMode::kEager};
    parallelism.grad_bucket_bytes = bucket;
    parallelism.fold_replicas = fold;
    parallelism.reduce_plans = {CollectivePlan{.fixed_latency_s = 0.05}};
    TaskGraph graph;
    ASSERT_TRUE(CompileTaskGraph(OneRankOneMicrobatch(), costs, parallelism, &graph).ok());
    EXPECT_EQ(graph.bucket_timers.size(), bucket > 0 ? (fold ? 3 : 2 * 3) : 0);  // 3 per replica
    const PlatformSpec platform = PlatformOrDie(IdealChoice(0.01, 1e9), 1, 2, 1);
    for (EngineKind engine : kEngines) {
      SCOPED_TRACE(std::string(EngineName(engine)) + (bucket > 0 ? " buckets" : "") +
                   (fold ? " folded" : ""));
      Timeline timeline;
      const RunCommunication c = Measure(graph, engine, platform, 1, &timeline);
      EXPECT_NEAR(Of(c, 0, CommKind::kDp).total_s, bucket > 0 ? 4 * 0.17 : 0.47, 1e-9);
      EXPECT_NEAR(Of(c, 0, CommKind::kDp).exposed_s, bucket > 0 ? 0.17 : 0.47, 1e-9);
    }
  }
}

Op OpOf(OpKind kind, int32_t microbatch) {
  return Op{kind, StageIndex(0), MicrobatchIndex(microbatch)};
}

// DualPipe-style overlap (tests/sim/alltoall_test.cc's pair): one rank, F0, then the
// OVERLAP_F_B pair (F1 beside B0), then B1, on an idle h100-node with ep = 8 (folded replicas).
// One MoE layer: forward attention 1 ms, MLP 2 ms; backward MLP 4 ms, attention 2 ms (W
// included); rests 1 ms (F first, B last). Each all-to-all takes t = 3 us + 7/8 x 3e9 / 450e9 =
// 5.83 ms, longer than every part.
//   F0: rest, attention, dispatch t, MLP, combine t in sequence: 2t in flight, 2t exposed.
//   The pair from P (DeepSeek-V3's Figure 4 order): communication B combine [0, t], F dispatch
//   [t, 2t], B dispatch [2t, 3t], F combine [3t, 4t], back to back: 4t in flight; computing
//   F rest + attention [0, 2 ms], B MLP [t, t + 4 ms], F MLP [2t, 2t + 2 ms], B attention and
//   rest [3t, 3t + 3 ms], all inside [0, 4t]: 11 ms hidden, 4t - 11 ms exposed.
//   B1: combine t, MLP, dispatch t, attention, rest: 2t, all exposed.
// So total = 8t and exposed = 8t - 11 ms: the pair hides 11 ms of the all-to-alls.
TEST(Communication, OverlappedPairHidesPartOfTheAllToAlls) {
  const PlatformSpec platform = PlatformOrDie(PresetChoice("h100-node"), 1, 8, 1);
  const double t = 3e-6 + 7.0 / 8 * 3e9 / 450e9;
  MoeStage moe;
  moe.layers = 1;
  moe.layer_seconds.forward_attention_s = 1e-3;
  moe.layer_seconds.forward_mlp_s = 2e-3;
  moe.layer_seconds.input_attention_s = 1.5e-3;
  moe.layer_seconds.input_mlp_s = 3e-3;
  moe.layer_seconds.weight_attention_s = 0.5e-3;
  moe.layer_seconds.weight_mlp_s = 1e-3;
  moe.dispatch_bytes = moe.combine_bytes = 3'000'000'000;
  StageCosts costs = OneStageCosts(4e-3, 7e-3);
  costs.moe = {moe};
  costs.gradient_bytes = {0};
  Schedule s;
  s.num_ranks = 1;
  s.num_stages = 1;
  s.num_microbatches = 2;
  s.stage_to_rank = {RankIndex(0)};
  s.orders = {
      {Action::Single(OpOf(OpKind::kForward, 0)),
       Action::OverlapForwardBackward(OpOf(OpKind::kForward, 1), OpOf(OpKind::kBackward, 0)),
       Action::Single(OpOf(OpKind::kBackward, 1))}};
  Parallelism parallelism{{.dp = 8, .tp = 1}, P2pMode::kEager};
  parallelism.layout.ep = 8;
  parallelism.fold_replicas = true;
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(s, costs, parallelism, &graph).ok());
  for (EngineKind engine : kEngines) {
    SCOPED_TRACE(EngineName(engine));
    Timeline timeline;
    const RunCommunication c = Measure(graph, engine, platform, 1, &timeline);
    const CommSeconds& a2a = Of(c, 0, CommKind::kEpAllToAll);
    EXPECT_NEAR(a2a.total_s, 8 * t, 1e-9);
    EXPECT_NEAR(a2a.exposed_s, 8 * t - 11e-3, 1e-9);
    EXPECT_LT(a2a.exposed_s, a2a.total_s);
    // The exposed intervals add up to the exposed time; the pair's are the gaps between its
    // compute parts.
    double sum = 0;
    const auto exposed = ExposedIntervals(graph, timeline, 1);
    for (const ExposedInterval& i : exposed[0]) {
      if (i.kind == CommKind::kEpAllToAll) sum += i.end_s - i.start_s;
    }
    EXPECT_NEAR(sum, a2a.exposed_s, 1e-12);
  }
}

}  // namespace
}  // namespace ppsim
