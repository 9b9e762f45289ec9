// Activation offload in the task graph and the engines (sim/host_copies.h): one rank of GPipe's
// order, F = 1 s and B = 2 s, M_B = 100 GB per microbatch of which O = 31.5 GB offloaded, on an
// ideal platform given a host link; timelines written out by hand, on both engines.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "schedules/registry.h"
#include "schedules/schedule_text.h"
#include "sim/communication.h"
#include "sim/engine.h"
#include "sim/host_copies.h"
#include "sim/metrics.h"
#include "sim/task_graph.h"
#include "tests/support/one_rank.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

constexpr EngineKind kEngines[] = {EngineKind::kCriticalPath, EngineKind::kSimGrid};
constexpr int64_t kActivation = 100'000'000'000;
constexpr int64_t kOffload = 31'500'000'000;

// One rank, four microbatches: F0 F1 F2 F3 B3 B2 B1 B0.
Schedule FourForwardsThenBackwards() {
  Schedule s;
  EXPECT_TRUE(ParseScheduleText("rank 0: 0F0 0F1 0F2 0F3 0B3 0B2 0B1 0B0\n", "t", &s).ok());
  return s;
}

StageCosts Costs(int64_t offload_bytes) {
  StageCosts costs = OneStageCosts(1, 2);
  costs.activation_bytes = {kActivation};
  if (offload_bytes > 0) costs.offload_bytes = {offload_bytes};
  return costs;
}

PlatformSpec WithHostLink(double bandwidth_bytes_per_s) {
  PlatformSpec platform = IdealPlatform(1);
  platform.host_link_bandwidth_bytes_per_s = bandwidth_bytes_per_s;
  platform.host_link_latency_s = 0;
  return platform;
}

struct Measured {
  RunMetrics metrics;
  int copies = 0;
};

Measured RunOffload(const Schedule& s, const StageCosts& costs, const PlatformSpec& platform,
                    EngineKind engine, P2pMode mode = P2pMode::kEager) {
  TaskGraph graph;
  Measured m;
  EXPECT_TRUE(CompileTaskGraph(s, costs, Parallelism{{.dp = 1, .tp = 1}, mode}, &graph).ok());
  for (const Task& task : graph.tasks) m.copies += task.kind == TaskKind::kHostCopy ? 1 : 0;
  Timeline timeline;
  const Status status = Execute(engine, graph, platform, &timeline);
  EXPECT_TRUE(status.ok()) << status.message();
  m.metrics = ComputeMetrics(s, costs, graph, timeline, 0, MemoryReserve{});
  return m;
}

const CommSeconds& Offload(const RunMetrics& m) {
  return m.communication.ranks[0].kinds[static_cast<int>(CommKind::kOffload)];
}

// 63 GB/s (PCIe Gen5): each copy takes O / 63e9 = 0.5 s.
// F0 [0,1] F1 [1,2] F2 [2,3] F3 [3,4] B3 [4,6] B2 [6,8] B1 [8,10] B0 [10,12], as without offload.
// F3 is not offloaded (B3 comes next). Offloads F0 [1,1.5], F1 [2,2.5], F2 [3,3.5]; reloads, each
// starting when the action before its backward can: B2's [4,4.5], B1's [6,6.5], B0's [8,8.5].
// Every copy lies inside a compute interval: offload total 3 s, exposed 0; makespan 12.
// Live activations: 4 x 100 GB at F3's start less F0's and F1's offloads (F2's ends at 3.5);
// at B3's start B2's reload comes back: 400 - 3 x 31.5 + 31.5 = 337 GB again. Peak 337 GB
// (400 GB without offload): lower by O x (microbatches in flight - 2).
TEST(Offload, HiddenOnAFastLink) {
  const Schedule s = FourForwardsThenBackwards();
  for (EngineKind engine : kEngines) {
    SCOPED_TRACE(std::string(EngineName(engine)));
    const Measured off = RunOffload(s, Costs(0), WithHostLink(63e9), engine);
    const Measured on = RunOffload(s, Costs(kOffload), WithHostLink(63e9), engine);
    EXPECT_EQ(off.copies, 0);
    EXPECT_EQ(on.copies, 6);
    EXPECT_NEAR(off.metrics.makespan_s, 12, 1e-9);
    EXPECT_NEAR(on.metrics.makespan_s, 12, 1e-9);
    EXPECT_EQ(off.metrics.ranks[0].peak_activation_bytes, 4 * kActivation);
    EXPECT_EQ(on.metrics.ranks[0].peak_activation_bytes, 4 * kActivation - 2 * kOffload);
    EXPECT_FALSE(off.metrics.communication.occurs[static_cast<int>(CommKind::kOffload)]);
    EXPECT_NEAR(Offload(on.metrics).total_s, 3, 1e-9);
    EXPECT_NEAR(Offload(on.metrics).exposed_s, 0, 1e-9);
    // The memory timeline ends with every byte freed, and dips by O after each offload.
    const auto& samples = on.metrics.memory_timeline[0];
    EXPECT_EQ(samples.back().live_activation_bytes, 0);
    const auto at_1_5 = std::find_if(samples.begin(), samples.end(),
                                     [](const MemorySample& x) { return x.time_s > 1.49; });
    ASSERT_NE(at_1_5, samples.end());
    EXPECT_EQ(at_1_5->live_activation_bytes, 2 * kActivation - kOffload);
  }
}

// The search's memory tier: copies taken as instant. F0, F1, F2 leave as they end; B2's bytes
// return as B3 starts, B1's as B2, B0's as B1: the peak is at B3's start, 4A - 3O + O = 4A - 2O,
// what the engines report on a link fast enough to hide the copies, and at most what they report
// on a slow one (F2's copy still running at B3's start on 10.5 GB/s). Without offload: 4A.
TEST(Offload, InstantCopiesBoundThePeakFromBelow) {
  const Schedule s = FourForwardsThenBackwards();
  const int64_t static_bytes = StaticBytesPerRank(s, Costs(kOffload))[0];
  EXPECT_EQ(PeakMemoryLowerBoundBytes(s, Costs(kOffload), MemoryReserve{}),
            std::vector<int64_t>{static_bytes + 4 * kActivation - 2 * kOffload});
  EXPECT_EQ(PeakMemoryLowerBoundBytes(s, Costs(0), MemoryReserve{}),
            PeakMemoryBytes(s, Costs(0), MemoryReserve{}));
  for (EngineKind engine : kEngines) {
    const Measured slow = RunOffload(s, Costs(kOffload), WithHostLink(10.5e9), engine);
    EXPECT_LE(4 * kActivation - 2 * kOffload, slow.metrics.ranks[0].peak_activation_bytes);
  }
}

// 10.5 GB/s: each copy takes 3 s; offloads queue on the one d2h stream: F0's [1,4], F1's [4,7],
// F2's [7,10]. B3 [4,6] needs nothing. B2's reload waits for F2's offload: [10,13], B2 [13,15].
// B1's reload starts when B2 can (13): [13,16], B1 [16,18]. B0's: [16,19], B0 [19,21].
// Makespan 21, 9 s more than 12. Copies in flight [1,19] (18 s); compute [0,6], [13,15],
// [16,18], [19,21]: exposed [6,13] + [15,16] + [18,19] = 9 s.
TEST(Offload, ExposedOnASlowLink) {
  const Schedule s = FourForwardsThenBackwards();
  for (EngineKind engine : kEngines) {
    SCOPED_TRACE(std::string(EngineName(engine)));
    const Measured on = RunOffload(s, Costs(kOffload), WithHostLink(10.5e9), engine);
    EXPECT_NEAR(on.metrics.makespan_s, 21, 1e-9);
    EXPECT_NEAR(Offload(on.metrics).total_s, 18, 1e-9);
    EXPECT_NEAR(Offload(on.metrics).exposed_s, 9, 1e-9);
  }
}

// The copies add a latency each: 1 ms on the fast link moves every copy by 1 ms and hides them
// still (the smallest gap is 0.5 s).
TEST(Offload, LatencyCounts) {
  const Schedule s = FourForwardsThenBackwards();
  PlatformSpec platform = WithHostLink(63e9);
  platform.host_link_latency_s = 1e-3;
  for (EngineKind engine : kEngines) {
    const Measured on = RunOffload(s, Costs(kOffload), platform, engine);
    EXPECT_NEAR(on.metrics.makespan_s, 12, 1e-9);
    EXPECT_NEAR(Offload(on.metrics).total_s, 6 * 0.501, 1e-9);
  }
}

// 1F1B on 4 ranks and 8 microbatches, eager and with Megatron's blocking calls: the engines agree
// (a host copy crosses nothing shared), and a rank's peak is lower by whole offloads.
TEST(Offload, EnginesAgreeOnOneFOneB) {
  ScheduleParams params;
  params.num_ranks = 4;
  params.num_microbatches = 8;
  Schedule s;
  ASSERT_TRUE(GenerateSchedule("1F1B", params, &s).ok());
  StageCosts costs;
  costs.forward_s = {1, 1, 1, 1};
  costs.backward_s = {2, 2, 2, 2};
  costs.activation_bytes = {kActivation, kActivation, kActivation, kActivation};
  costs.activation_w_bytes = costs.message_bytes = {0, 0, 0, 0};
  costs.offload_bytes = {kOffload, kOffload, kOffload, kOffload};
  PlatformSpec platform = IdealPlatform(4, 1e-3, 100e9);
  platform.host_link_bandwidth_bytes_per_s = 63e9;
  for (P2pMode mode : {P2pMode::kEager, P2pMode::kMegatron}) {
    SCOPED_TRACE(std::string(P2pModeName(mode)));
    const Measured path = RunOffload(s, costs, platform, EngineKind::kCriticalPath, mode);
    const Measured grid = RunOffload(s, costs, platform, EngineKind::kSimGrid, mode);
    EXPECT_NEAR(path.metrics.makespan_s, grid.metrics.makespan_s, 1e-9);
    for (int32_t rank = 0; rank < 4; ++rank) {
      const int64_t peak = path.metrics.ranks[rank].peak_activation_bytes;
      EXPECT_EQ(peak, grid.metrics.ranks[rank].peak_activation_bytes);
      EXPECT_LE(peak, (4 - rank) * kActivation);
      EXPECT_EQ(((4 - rank) * kActivation - peak) % kOffload, 0);
    }
  }
}

}  // namespace
}  // namespace ppsim
