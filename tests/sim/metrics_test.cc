// Memory accounting by the zero-bubble paper's rules: F adds M_B
// when it starts; I frees M_B - M_W, W frees M_W, B frees M_B when they end.
#include "sim/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "platforms/platform.h"
#include "schedules/schedule_text.h"
#include "tests/support/costs.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

std::vector<int64_t> Peaks(const std::string& text, const std::string& activation,
                           const std::string& activation_w) {
  Schedule s;
  EXPECT_TRUE(ParseScheduleText(text, "t", &s).ok());
  CostFields fields = {{"f", "1"}, {"i", "1"}, {"w", "1"}};
  if (!activation.empty()) fields.push_back({"activation", activation});
  if (!activation_w.empty()) fields.push_back({"activation_w", activation_w});
  StageCosts costs;
  Status status = BuildCosts(fields, s.num_stages, &costs);
  EXPECT_TRUE(status.ok()) << status.message();
  return PeakActivationBytes(s, costs);
}

TEST(PeakActivationBytes, SplitBackwardKeepsMWUntilW) {
  // Two forwards hold 20; 0I0 frees 10 - 4 = 6, leaving 14; the third forward peaks at 24.
  EXPECT_EQ(Peaks("rank 0: 0F0 0F1 0I0 0F2 0W0 0I1 0I2 0W1 0W2\n", "10", "4"),
            (std::vector<int64_t>{24}));
  // Deferring all W keeps M_W of every microbatch: 3 x 10 at the third F.
  EXPECT_EQ(Peaks("rank 0: 0F0 0I0 0F1 0I1 0F2 0I2 0W0 0W1 0W2\n", "10", "4"),
            (std::vector<int64_t>{18}));
}

TEST(PeakActivationBytes, FullBackwardFreesEverythingAndOverlapAddsBeforeFreeing) {
  EXPECT_EQ(Peaks("rank 0: 0F0 0B0 0F1 0B1\n", "7", "0"), (std::vector<int64_t>{7}));
  // The overlap's forward allocates at its start; its backward frees at its end: peak 2 x 7.
  EXPECT_EQ(Peaks("rank 0: 0F0 (0F1;0B0)OVERLAP_F_B 0B1\n", "7", "0"), (std::vector<int64_t>{14}));
}

TEST(ComputeMetrics, DefinitionsOnAHandMadeTimeline) {
  // Two ranks, one stage each, one microbatch: 0F0 [0,1], transfer [1,1.5], 1F0 [1.5,2.5],
  // 1B0 [2.5,4.5], transfer [4.5,5], 0B0 [5,7].
  Schedule s;
  ASSERT_TRUE(ParseScheduleText("rank 0: 0F0 0B0\nrank 1: 1F0 1B0\n", "t", &s).ok());
  StageCosts costs;
  ASSERT_TRUE(BuildCosts({{"f", "1"}, {"b", "2"}}, 2, &costs).ok());
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(s, costs, &graph).ok());
  const PlatformSpec platform = IdealPlatform(2, 0.5);
  Timeline timeline;
  ASSERT_TRUE(RunCriticalPath(graph, platform, &timeline).ok());
  const RunMetrics m = ComputeMetrics(s, costs, graph, timeline);
  EXPECT_DOUBLE_EQ(m.makespan_s, 7);
  EXPECT_DOUBLE_EQ(m.ranks[0].busy_s, 3);
  EXPECT_DOUBLE_EQ(m.ranks[0].span_s, 7);
  EXPECT_DOUBLE_EQ(m.ranks[0].idle_in_span_s, 4);
  EXPECT_DOUBLE_EQ(m.ranks[1].first_start_s, 1.5);
  EXPECT_DOUBLE_EQ(m.ranks[1].span_s, 3);
  EXPECT_DOUBLE_EQ(m.bubble_over_makespan, 1 - 6.0 / 14);
  EXPECT_DOUBLE_EQ(m.bubble_over_ideal, (14.0 - 6) / 6);
  EXPECT_DOUBLE_EQ(m.stage_bubble_rate, 4.0 / 7);
  EXPECT_EQ(m.num_transfer_tasks, 2u);
}

TEST(ComputeMetrics, StaticMemoryOfEveryStageOnTheRankAndTheOomCheck) {
  // A V on two ranks: rank 0 holds stages 0 and 3, rank 1 stages 1 and 2. F = B = 1 s.
  Schedule s;
  ASSERT_TRUE(ParseScheduleText("rank 0: 0F0 0F1 3F0 3B0 3F1 3B1 0B0 0B1\n"
                                "rank 1: 1F0 1F1 2F0 2B0 2F1 2B1 1B0 1B1\n",
                                "t", &s)
                  .ok());
  StageCosts costs;
  ASSERT_TRUE(BuildCosts({{"f", "1"}, {"b", "1"}, {"activation", "10,20,30,40"}}, 4, &costs).ok());
  costs.static_bytes = {1000, 2000, 3000, 4000};
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(s, costs, &graph).ok());
  PlatformSpec platform;
  platform = IdealPlatform(2);
  Timeline timeline;
  ASSERT_TRUE(RunCriticalPath(graph, platform, &timeline).ok());
  const RunMetrics m = ComputeMetrics(s, costs, graph, timeline, 5100);
  // Rank 0: static 1000 + 4000; activations 10 + 10 + 40 = 60 at 3F0, whose start is the peak.
  EXPECT_EQ(m.ranks[0].static_memory_bytes, 5000);
  EXPECT_EQ(m.ranks[0].peak_activation_bytes, 60);
  EXPECT_EQ(m.ranks[0].peak_memory_bytes, 5060);
  EXPECT_FALSE(m.ranks[0].oom);
  EXPECT_DOUBLE_EQ(m.ranks[0].peak_activation_time_s,
                   timeline.start_s[graph.ComputeTask(0, 2)]);
  // Rank 1: static 2000 + 3000; activations 20 + 20 + 30 = 70: 5070 of 5100 fits; at 5050 not.
  EXPECT_EQ(m.ranks[1].peak_memory_bytes, 5070);
  EXPECT_EQ(m.ranks[1].memory_capacity_bytes, 5100);
  EXPECT_FALSE(m.ranks[1].oom);
  const RunMetrics tight = ComputeMetrics(s, costs, graph, timeline, 5065);
  EXPECT_FALSE(tight.ranks[0].oom);
  EXPECT_TRUE(tight.ranks[1].oom);
  EXPECT_EQ(tight.oom_ranks, 1);
  // The memory timeline: a sample at every allocation and every free, ending at zero.
  ASSERT_EQ(m.memory_timeline[0].size(), 16u);
  EXPECT_EQ(m.memory_timeline[0].back().live_activation_bytes, 0);
  EXPECT_DOUBLE_EQ(m.memory_timeline[0].back().time_s, m.ranks[0].last_end_s);

  // A reserve of 100 bytes and a quarter of the live activations, rounded up to whole bytes:
  // rank 0 holds 100 + 60 / 4 = 115 at its peak, rank 1 100 + ceil(70 / 4) = 118.
  const MemoryReserve reserve{100, 0.25};
  const RunMetrics reserved = ComputeMetrics(s, costs, graph, timeline, 5180, reserve);
  EXPECT_EQ(reserved.ranks[0].reserve_bytes, 115);
  EXPECT_EQ(reserved.ranks[0].peak_memory_bytes, 5000 + 60 + 115);
  EXPECT_FALSE(reserved.ranks[0].oom);
  EXPECT_EQ(reserved.ranks[1].reserve_bytes, 118);
  EXPECT_EQ(reserved.ranks[1].peak_memory_bytes, 5000 + 70 + 118);
  EXPECT_TRUE(reserved.ranks[1].oom);
  EXPECT_EQ(reserved.reserve.fixed_bytes, 100);
  EXPECT_EQ(reserved.reserve.activation_fraction, 0.25);

  // What rank 1's peak is made of: static bytes given without parts stay unsplit (2000 + 3000),
  // activations 70, fragmentation ceil(70 / 4) = 18, the fixed 100; they sum to its peak.
  const MemoryBreakdown& unsplit = reserved.ranks[1].memory;
  EXPECT_EQ(unsplit.unsplit_static_bytes, 5000);
  EXPECT_EQ(unsplit.weights_bytes + unsplit.gradients_bytes + unsplit.optimizer_state_bytes, 0);
  EXPECT_EQ(unsplit.activations_bytes, 70);
  EXPECT_EQ(unsplit.fragmentation_bytes, 18);
  EXPECT_EQ(unsplit.fixed_reserve_bytes, 100);
  EXPECT_EQ(unsplit.Total(), reserved.ranks[1].peak_memory_bytes);
  // With parts: rank 0 holds stages 0 and 3, weights 100 + 400, gradients 200 + 800, optimizer
  // state 700 + 2800; the rest of its 5000 static bytes, 0, stays unsplit.
  costs.weight_bytes = {100, 200, 300, 400};
  costs.gradient_bytes = {200, 400, 600, 800};
  costs.optimizer_state_bytes = {700, 1400, 2100, 2800};
  const RunMetrics split = ComputeMetrics(s, costs, graph, timeline, 0, reserve);
  const MemoryBreakdown& parts = split.ranks[0].memory;
  EXPECT_EQ(parts.weights_bytes, 500);
  EXPECT_EQ(parts.gradients_bytes, 1000);
  EXPECT_EQ(parts.optimizer_state_bytes, 3500);
  EXPECT_EQ(parts.unsplit_static_bytes, 0);
  EXPECT_EQ(parts.activations_bytes, 60);
  EXPECT_EQ(parts.fragmentation_bytes, 15);
  EXPECT_EQ(parts.Total(), split.ranks[0].peak_memory_bytes);
}

TEST(RankMemoryBytes, StaticPlusLiveActivationsPlusTheReserveAtThem) {
  const MemoryReserve reserve{100, 0.25};
  EXPECT_EQ(reserve.BytesAt(0), 100);
  EXPECT_EQ(reserve.BytesAt(70), 118);  // 17.5 rounds up
  EXPECT_EQ(reserve.BytesAt(72), 118);
  EXPECT_EQ(RankMemoryBytes(5000, 0, reserve), 5100);
  EXPECT_EQ(RankMemoryBytes(5000, 70, reserve), 5188);
  EXPECT_EQ(RankMemoryBytes(5000, 71, reserve), 5189);  // 17.75 rounds up to 18 as well
  EXPECT_EQ(RankMemoryBytes(7, 3, MemoryReserve()), 10);
}

TEST(RankMemoryBytes, ItsLargestValueOverARunIsThePeakMemory) {
  // 1F1B on two ranks, two microbatches, F = B = 1 s, 10 activation bytes per microbatch: rank 0
  // holds 20 at most, rank 1 10.
  Schedule s;
  ASSERT_TRUE(
      ParseScheduleText("rank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n", "t", &s).ok());
  StageCosts costs;
  ASSERT_TRUE(BuildCosts({{"f", "1"}, {"b", "1"}, {"activation", "10"}}, 2, &costs).ok());
  costs.static_bytes = {1000, 2000};
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(s, costs, &graph).ok());
  Timeline timeline;
  ASSERT_TRUE(RunCriticalPath(graph, IdealPlatform(2), &timeline).ok());
  const MemoryReserve reserve{5, 0.3};
  const RunMetrics m = ComputeMetrics(s, costs, graph, timeline, 0, reserve);
  // Rank 0: 1000 + 20 + 5 + 0.3 x 20; rank 1: 2000 + 10 + 5 + 0.3 x 10.
  const int64_t expected[] = {1031, 2018};
  for (int32_t rank = 0; rank < 2; ++rank) {
    int64_t largest = 0;
    for (const MemorySample& sample : m.memory_timeline[rank]) {
      largest = std::max(largest, RankMemoryBytes(m.ranks[rank].static_memory_bytes,
                                                  sample.live_activation_bytes, reserve));
    }
    EXPECT_EQ(largest, expected[rank]) << "rank " << rank;
    EXPECT_EQ(m.ranks[rank].peak_memory_bytes, expected[rank]) << "rank " << rank;
  }
}

}  // namespace
}  // namespace ppsim
