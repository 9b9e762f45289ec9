#include "schedules/schedule.h"

#include <gtest/gtest.h>

#include "schedules/schedule_text.h"

namespace ppsim {
namespace {

// Parses the text IR and returns CheckSchedule's verdict.
Status Check(const std::string& text) {
  Schedule s;
  Status status = ParseScheduleText(text, "test.txt", &s);
  if (!status.ok()) return status;
  return CheckSchedule(s);
}

TEST(CheckSchedule, AcceptsCompleteSchedules) {
  EXPECT_TRUE(Check("rank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n").ok());
  EXPECT_TRUE(Check("rank 0: 0F0 0I0 0W0\nrank 1: 1F0 1I0 1W0\n").ok());
  EXPECT_TRUE(Check("rank 0: 0F0 0F1 (0F2;0B0)OVERLAP_F_B 0B1 0B2\n").ok());
}

TEST(CheckSchedule, RejectsARepeatedAction) {
  EXPECT_EQ(Check("rank 0: 0F0 0F1 0B0 0F1 0B1\n").message(),
            "rank 0, position 4 (0F1): 0F1 is repeated; it already appears at rank 0, position 2 "
            "(0F1)");
}

TEST(CheckSchedule, RejectsAMissingForward) {
  Schedule s;
  ASSERT_TRUE(ParseScheduleText("rank 0: 0F0 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n", "t", &s).ok());
  EXPECT_EQ(CheckSchedule(s).message(),
            "schedule: stage 0, microbatch 1 has no forward (0F1); every (stage, microbatch) "
            "needs exactly one F");
}

TEST(CheckSchedule, RejectsAMissingBackward) {
  EXPECT_EQ(Check("rank 0: 0F0 0F1 0B0\n").message(),
            "schedule: stage 0, microbatch 1 has no backward; every (stage, microbatch) needs one "
            "B, or one I and one W");
}

TEST(CheckSchedule, RejectsBothFullAndSplitBackward) {
  EXPECT_EQ(Check("rank 0: 0F0 0B0 0I0 0W0\n").message(),
            "rank 0, position 3 (0I0): stage 0, microbatch 0 already has a full backward (0B0); "
            "use either B or I and W, not both");
}

TEST(CheckSchedule, RejectsIWithoutW) {
  EXPECT_EQ(Check("rank 0: 0F0 0I0\n").message(),
            "rank 0, position 2 (0I0): stage 0, microbatch 0 has I but no W (0W0); a split "
            "backward needs both");
}

TEST(CheckSchedule, RejectsWBeforeItsI) {
  EXPECT_EQ(Check("rank 0: 0F0 0W0 0I0\n").message(),
            "rank 0, position 2 (0W0): 0W0 comes before its 0I0 (position 3); W needs its I first");
}

TEST(CheckSchedule, RejectsActionsOnTheWrongRank) {
  Schedule s;
  ASSERT_TRUE(ParseScheduleText("rank 0: 0F0 0B0\nrank 1: 1F0 1B0\n", "t", &s).ok());
  s.orders[0].push_back(Action::Single({OpKind::kForward, StageIndex(1), MicrobatchIndex(0)}));
  EXPECT_EQ(CheckSchedule(s).message(),
            "rank 0, position 3 (1F0): stage 1 belongs to rank 1; an action runs on the rank that "
            "holds its stage");
}

TEST(CheckSchedule, RejectsOutOfRangeMicrobatch) {
  Schedule s;
  ASSERT_TRUE(ParseScheduleText("rank 0: 0F0 0B0\n", "t", &s).ok());
  s.orders[0].push_back(Action::Single({OpKind::kForward, StageIndex(0), MicrobatchIndex(4)}));
  EXPECT_EQ(CheckSchedule(s).message(),
            "rank 0, position 3 (0F4): microbatch 4 is out of range; microbatches are 0..0");
}

TEST(InferScheduleShape, RejectsAStageOnTwoRanks) {
  Schedule s;
  EXPECT_EQ(ParseScheduleText("rank 0: 0F0 1F0\nrank 1: 1B0 0B0\n", "t", &s).message(),
            "t: rank 1, position 1 (1B0): stage 1 is already on rank 0, position 2 (1F0); each "
            "stage runs on exactly one rank");
}

TEST(InferScheduleShape, InfersTheStageToRankMapOfAVSchedule) {
  Schedule s;
  ASSERT_TRUE(ParseScheduleText("rank 0: 0F0 3F0\nrank 1: 1F0 2F0\n", "t", &s).ok());
  EXPECT_EQ(s.num_ranks, 2);
  EXPECT_EQ(s.num_stages, 4);
  EXPECT_EQ(s.num_microbatches, 1);
  EXPECT_EQ(s.stage_to_rank,
            (std::vector<RankIndex>{RankIndex(0), RankIndex(1), RankIndex(1), RankIndex(0)}));
}

TEST(InferScheduleShape, FindsTwoPipelinesWhenStagesSeeDisjointMicrobatches) {
  // DualPipe-like: stages 0-1 carry microbatches 0-1, stages 2-3 microbatches 2-3.
  Schedule s;
  ASSERT_TRUE(ParseScheduleText("rank 0: 0F0 0F1 3F2 3F3 3B2 3B3 0B0 0B1\n"
                                "rank 1: 1F0 1F1 2F2 2F3 1B0 1B1 2B2 2B3\n",
                                "t", &s)
                  .ok());
  EXPECT_EQ(s.pipelines, (std::vector<Pipeline>{{0, 1, 0, 1}, {2, 3, 2, 3}}));
  EXPECT_TRUE(CheckSchedule(s).ok()) << CheckSchedule(s).message();
}

TEST(CheckSchedule, RejectsAMicrobatchOutsideItsPipeline) {
  Schedule s;
  ASSERT_TRUE(ParseScheduleText("rank 0: 0F0 1F0 1B0 0B0\nrank 1: 2F1 3F1 3B1 2B1\n", "t", &s)
                  .ok());
  s.orders[0].push_back(Action::Single({OpKind::kForward, StageIndex(0), MicrobatchIndex(1)}));
  EXPECT_EQ(CheckSchedule(s).message(),
            "rank 0, position 5 (0F1): microbatch 1 flows through stages 2..3, not stage 0");
}

}  // namespace
}  // namespace ppsim
