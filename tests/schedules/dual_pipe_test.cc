// DeepSeek's DualPipe against its reference (deepseek-ai/DualPipe dualpipe/dualpipe.py,
// DualPipe.step) and the note's check case 8.
#include <gtest/gtest.h>

#include "tests/support/schedules.h"
#include "schedules/registry.h"
#include "schedules/schedule_text.h"
#include "tests/support/runs.h"

namespace ppsim {
namespace {

std::string Rejection(int32_t p, int32_t m, int32_t v) {
  return GenerateError("DualPipe", ScheduleParams{p, v, m, 0});
}

TEST(DualPipe, TwoModelCopiesEachWithItsOwnMicrobatches) {
  Schedule s;
  ASSERT_TRUE(GenerateSchedule("DualPipe", ScheduleParams{4, 0, 8, 0}, &s).ok());
  // Copy A: stages 0..3 on ranks 0..3; copy B: stages 4..7 on ranks 3..0.
  EXPECT_EQ(s.stage_to_rank,
            (std::vector<RankIndex>{RankIndex(0), RankIndex(1), RankIndex(2), RankIndex(3),
                                    RankIndex(3), RankIndex(2), RankIndex(1), RankIndex(0)}));
  EXPECT_EQ(s.pipelines, (std::vector<Pipeline>{{0, 3, 0, 3}, {4, 7, 4, 7}}));
}

TEST(DualPipe, FollowsTheReferenceStepByStep) {
  // p = 2, m = 4 worked through step(): both ranks are middle ranks with half_rank 0. Rank 0:
  // step 2 F0 F1; step 4 (middle, first pair not overlapped) F0, B1, then (F1, B0) overlapped;
  // step 6 B1, then B0 with zero bubble (I, its W queued); step 8 the W. Phase 0 of rank 0 is
  // copy A (stage 0, microbatches 0-1), phase 1 copy B (stage 3, microbatches 2-3); rank 1, in the
  // second half, has them the other way round.
  Schedule s;
  ASSERT_TRUE(GenerateSchedule("DualPipe", ScheduleParams{2, 0, 4, 0}, &s).ok());
  EXPECT_EQ(FormatScheduleText(s),
            "rank 0: 0F0 3F2 0F1 3B2 (3F3;0B0)OVERLAP_F_B 3B3 0I1 0W1\n"
            "rank 1: 2F2 1F0 2F3 1B0 (1F1;2B2)OVERLAP_F_B 1B1 2I3 2W3\n");
}

TEST(DualPipe, RejectsWhatTheReferenceAsserts) {
  EXPECT_EQ(Rejection(3, 8, 0), "DualPipe needs an even number of ranks (at least 2); got 3");
  EXPECT_EQ(Rejection(4, 6, 0),
            "DualPipe needs an even number of microbatches, at least 2 x pp = 8; got 6");
  EXPECT_EQ(Rejection(4, 9, 0),
            "DualPipe needs an even number of microbatches, at least 2 x pp = 8; got 9");
  EXPECT_EQ(Rejection(4, 8, 1), "DualPipe holds 2 stages per rank, one of each model copy; got 1");
}

class DualPipeCheckCase : public ::testing::TestWithParam<EngineKind> {};

proto::RunConfig DualPipeSpec(int32_t p, int32_t m, EngineKind engine) {
  proto::RunConfig spec = IdealRun("DualPipe", p, m, "1", "", engine);
  spec.clear_stages_per_rank();
  spec.set_i("1");
  spec.set_w("1");
  spec.set_overlap("3");
  spec.set_activation("1");
  return spec;
}

TEST_P(DualPipeCheckCase, Case8) {
  // F = 1, B = 2 (I = W = 1), F&B = 3, per chunk.
  const RunResult r = RunOk(DualPipeSpec(8, 20, GetParam()));
  EXPECT_NEAR(r.metrics.makespan_s, 66, 1e-9);
  EXPECT_EQ(Peaks(r), std::vector<int64_t>(8, 9));  // p + 1 chunk activations
  EXPECT_NEAR(RunOk(DualPipeSpec(8, 16, GetParam())).metrics.makespan_s, 54, 1e-9);
  EXPECT_NEAR(RunOk(DualPipeSpec(8, 32, GetParam())).metrics.makespan_s, 102, 1e-9);
  const RunResult small = RunOk(DualPipeSpec(4, 8, GetParam()));
  EXPECT_NEAR(small.metrics.makespan_s, 26, 1e-9);
  EXPECT_EQ(Peaks(small), std::vector<int64_t>(4, 5));
}

INSTANTIATE_TEST_SUITE_P(BothEngines, DualPipeCheckCase, ::testing::ValuesIn(kBothEngines),
                         [](const auto& info) {
                           return info.param == EngineKind::kSimGrid ? "SimGrid" : "CriticalPath";
                         });

}  // namespace
}  // namespace ppsim
