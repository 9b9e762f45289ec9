// DualPipeV against torch's ScheduleDualPipeV: the expected orders are torch's pipeline_order
// (pytorch/pytorch @ cff2ecc8b32af684662aefe6fe058e41810e26ce, as recorded in
// tests/data/torch/DualPipeV.json); the timing is check case 9, derived by hand from that order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/schedules.h"
#include "schedules/generator.h"
#include "schedules/schedule_text.h"
#include "tests/support/runs.h"

namespace ppsim {
namespace {

std::string Generate(int32_t p, int32_t m, int32_t v = 2) {
  return GenerateText("DualPipeV", ScheduleParams{p, v, m});
}

std::string Rejection(int32_t p, int32_t m, int32_t v) {
  return GenerateError("DualPipeV", ScheduleParams{p, v, m});
}

TEST(DualPipeV, PlacesStagesInAV) {
  Schedule s;
  ASSERT_TRUE(GenerateDualPipeV(ScheduleParams{2, 2, 5}, &s).ok());
  EXPECT_EQ(s.num_ranks, 2);
  EXPECT_EQ(s.num_stages, 4);
  EXPECT_EQ(s.num_microbatches, 5);
  const std::vector<RankIndex> want = {RankIndex(0), RankIndex(1), RankIndex(1), RankIndex(0)};
  EXPECT_EQ(s.stage_to_rank, want);
}

TEST(DualPipeV, MatchesTorchPipelineOrder) {
  EXPECT_EQ(Generate(2, 4),
            "rank 0: 0F0 0F1 0F2 3F0 3I0 3W0 3F1 (0F3;3B1)OVERLAP_F_B (3F2;0B0)OVERLAP_F_B 3B2 "
            "(3F3;0B1)OVERLAP_F_B 3B3 0I2 0W2 0I3 0W3\n"
            "rank 1: 1F0 2F0 1F1 2F1 1F2 2B0 (2F2;1B0)OVERLAP_F_B (1F3;2B1)OVERLAP_F_B "
            "(2F3;1B1)OVERLAP_F_B 2B2 1B2 2I3 1I3 2W3 1W3\n");
  EXPECT_EQ(Generate(2, 5),
            "rank 0: 0F0 0F1 0F2 3F0 3I0 3W0 3F1 (0F3;3B1)OVERLAP_F_B (3F2;0B0)OVERLAP_F_B "
            "(0F4;3B2)OVERLAP_F_B (3F3;0B1)OVERLAP_F_B 3B3 (3F4;0B2)OVERLAP_F_B 3B4 0I3 0W3 0I4 "
            "0W4\n"
            "rank 1: 1F0 2F0 1F1 2F1 1F2 2B0 (2F2;1B0)OVERLAP_F_B (1F3;2B1)OVERLAP_F_B "
            "(2F3;1B1)OVERLAP_F_B (1F4;2B2)OVERLAP_F_B (2F4;1B2)OVERLAP_F_B 2B3 1B3 2I4 1I4 2W4 "
            "1W4\n");
  EXPECT_EQ(Generate(1, 2), "rank 0: 0F0 1F0 0F1 1B0 (1F1;0B0)OVERLAP_F_B 1B1 0I1 0W1\n");
}

TEST(DualPipeV, StagesPerRankZeroMeansTwo) { EXPECT_EQ(Generate(2, 4, 0), Generate(2, 4, 2)); }

TEST(DualPipeV, RejectsFewerMicrobatchesThanStages) {
  EXPECT_EQ(Rejection(4, 7, 2),
            "DualPipeV needs at least as many microbatches as stages (2 x pp = 8); got 7");
  EXPECT_EQ(Rejection(1, 1, 2),
            "DualPipeV needs at least as many microbatches as stages (2 x pp = 2); got 1");
}

TEST(DualPipeV, ChecksStagesPerRankBeforeMicrobatchesLikeTorch) {
  EXPECT_EQ(Rejection(4, 1, 3), "DualPipeV needs exactly 2 stages per rank; got 3");
  EXPECT_EQ(Rejection(4, 16, 4), "DualPipeV needs exactly 2 stages per rank; got 4");
  EXPECT_EQ(Rejection(0, 8, 2), "DualPipeV needs at least 1 rank; got 0");
  EXPECT_EQ(Rejection(4, 0, 2), "DualPipeV needs at least 1 microbatch; got 0");
}

TEST(DualPipeV, CheckCase9) {
  for (EngineKind engine : kBothEngines) {
    // Check case 9: F = I = W = 1 and an overlapped pair 3 per virtual stage; a rank's share
    // (two half-model stages) is twice that.
    proto::RunConfig spec = IdealRun("DualPipeV", 4, 10, "2", "", engine);
    spec.set_stages_per_rank(2);
    spec.set_i("2");
    spec.set_w("2");
    spec.set_overlap("6");
    EXPECT_NEAR(RunOk(spec).metrics.makespan_s, 66, 1e-9);
  }
}

}  // namespace
}  // namespace ppsim
