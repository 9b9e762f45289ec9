// Check cases 1-3, from both engines. The expected values are the
// closed forms: 1F1B and GPipe take (m + p - 1)(F + B) on uniform stages without communication,
// bubble over ideal (p - 1)/m, and 1F1B holds min(p - r, m) activations on rank r, GPipe m.
#include <gtest/gtest.h>

#include "tests/support/runs.h"

namespace ppsim {
namespace {

class CheckCases : public ::testing::TestWithParam<EngineKind> {};

TEST_P(CheckCases, Case1UniformStagesWithoutCommunication) {
  for (const char* schedule : {"1F1B", "GPipe"}) {
    proto::RunConfig spec = IdealRun(schedule, 4, 8, "1", "2", GetParam());
    spec.set_activation("1");
    const RunResult r = RunOk(spec);
    EXPECT_NEAR(r.metrics.makespan_s, (8 + 4 - 1) * 3.0, 1e-9) << schedule;  // 33
    EXPECT_NEAR(r.metrics.bubble_over_ideal, 3.0 / 8, 1e-12) << schedule;   // 0.375
    // Sum of busy = 4 ranks x 8 microbatches x 3 s = 96 of 4 x 33 = 132.
    EXPECT_NEAR(r.metrics.bubble_over_makespan, 1 - 96.0 / 132, 1e-12) << schedule;
    for (const RankMetrics& k : r.metrics.ranks) EXPECT_NEAR(k.busy_s, 24, 1e-9);
  }
  proto::RunConfig one_f_one_b = IdealRun("1F1B", 4, 8, "1", "2", GetParam());
  one_f_one_b.set_activation("1");
  EXPECT_EQ(Peaks(RunOk(one_f_one_b)), (std::vector<int64_t>{4, 3, 2, 1}));
  proto::RunConfig gpipe = IdealRun("GPipe", 4, 8, "1", "2", GetParam());
  gpipe.set_activation("1");
  EXPECT_EQ(Peaks(RunOk(gpipe)), (std::vector<int64_t>{8, 8, 8, 8}));
}

TEST_P(CheckCases, Case2LatencyOnEveryCrossRankDependency) {
  EXPECT_NEAR(RunOk(WithLatency(IdealRun("1F1B", 4, 8, "1", "2", GetParam()), 0.1))
                  .metrics.makespan_s,
              34.6, 1e-9);
  EXPECT_NEAR(RunOk(WithLatency(IdealRun("GPipe", 4, 8, "1", "2", GetParam()), 0.1))
                  .metrics.makespan_s,
              33.6, 1e-9);
  EXPECT_NEAR(RunOk(WithLatency(IdealRun("1F1B", 4, 8, "1", "2", GetParam()), 0.5))
                  .metrics.makespan_s,
              41.0, 1e-9);
}

TEST_P(CheckCases, Case3UnevenStages) {
  const RunResult one_f_one_b = RunOk(IdealRun("1F1B", 4, 8, "1,1,2,1", "2,2,4,2", GetParam()));
  EXPECT_NEAR(one_f_one_b.metrics.makespan_s, 55, 1e-9);
  const std::vector<double> spans = Spans(one_f_one_b);
  const double want[] = {55, 52, 49, 42};
  ASSERT_EQ(spans.size(), 4u);
  for (int r = 0; r < 4; ++r) EXPECT_NEAR(spans[r], want[r], 1e-9) << "rank " << r;
  EXPECT_NEAR(RunOk(IdealRun("GPipe", 4, 8, "1,1,2,1", "2,2,4,2", GetParam())).metrics.makespan_s,
              57, 1e-9);
}

TEST_P(CheckCases, StageBubbleRateIsTheLongestSpansIdleShare) {
  // 1F1B uneven: rank 0 has the longest span, 55 s, and is busy 8 x 3 = 24 s.
  const RunResult r = RunOk(IdealRun("1F1B", 4, 8, "1,1,2,1", "2,2,4,2", GetParam()));
  EXPECT_NEAR(r.metrics.stage_bubble_rate, (55.0 - 24) / 55, 1e-12);
  EXPECT_NEAR(r.metrics.ranks[0].idle_in_span_s, 31, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(BothEngines, CheckCases, ::testing::ValuesIn(kBothEngines),
                         [](const auto& info) {
                           return info.param == EngineKind::kSimGrid ? "SimGrid" : "CriticalPath";
                         });

}  // namespace
}  // namespace ppsim
