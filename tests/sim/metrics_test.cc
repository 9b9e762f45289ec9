// Memory accounting by the zero-bubble paper's rules (../shared/notes/schedules.md): F adds M_B
// when it starts; I frees M_B - M_W, W frees M_W, B frees M_B when they end.
#include "sim/metrics.h"

#include <gtest/gtest.h>

#include "schedules/schedule_text.h"

namespace ppsim {
namespace {

std::vector<int64_t> Peaks(const std::string& text, const std::string& activation,
                           const std::string& activation_w) {
  Schedule s;
  EXPECT_TRUE(ParseScheduleText(text, "t", &s).ok());
  CostText cost_text;
  cost_text.forward = "1";
  cost_text.backward_input = "1";
  cost_text.backward_weight = "1";
  cost_text.activation = activation;
  cost_text.activation_w = activation_w;
  StageCosts costs;
  Status status = BuildStageCosts(cost_text, s.num_stages, &costs);
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
  CostText text;
  text.forward = "1";
  text.backward = "2";
  StageCosts costs;
  ASSERT_TRUE(BuildStageCosts(text, 2, &costs).ok());
  TaskGraph graph;
  ASSERT_TRUE(CompileTaskGraph(s, costs, &graph).ok());
  PlatformOptions options;
  options.p2p_latency_s = 0.5;
  PlatformSpec platform;
  ASSERT_TRUE(MakePlatform("ideal", options, 2, &platform).ok());
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

}  // namespace
}  // namespace ppsim
