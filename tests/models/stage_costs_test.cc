#include "models/stage_costs.h"

#include <gtest/gtest.h>

#include "schedules/registry.h"
#include "schedules/schedule_text.h"
#include "tests/support/costs.h"

namespace ppsim {
namespace {

TEST(OverrideStageCosts, FullBackwardDefaultsToIPlusW) {
  StageCosts c;
  ASSERT_TRUE(BuildCosts({{"f", "1,1,2,1"}, {"i", "1,1,2,1"}, {"w", "0.5"}}, 4, &c).ok());
  EXPECT_EQ(c.backward_s, (std::vector<double>{1.5, 1.5, 2.5, 1.5}));
  EXPECT_TRUE(c.has_split_backward());
  // Defaults: no activation, no message, overlap = F + B.
  EXPECT_EQ(c.activation_bytes, (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(c.message_bytes, (std::vector<int64_t>{0, 0, 0, 0}));
  const Action overlap = Action::OverlapForwardBackward(
      {OpKind::kForward, StageIndex(2), MicrobatchIndex(3)},
      {OpKind::kBackward, StageIndex(1), MicrobatchIndex(0)});
  EXPECT_EQ(c.ActionDuration(overlap), 2 + 1.5);
}

TEST(OverrideStageCosts, GivenBOverridesIPlusWAndOverlapIsByForwardStage) {
  StageCosts c;
  ASSERT_TRUE(BuildCosts({{"f", "1"}, {"b", "2"}, {"i", "1.5"}, {"w", "1.5"}, {"overlap", "2.5,3.5"}},
                         2, &c)
                  .ok());
  EXPECT_EQ(c.backward_s, (std::vector<double>{2, 2}));
  const Action overlap = Action::OverlapForwardBackward(
      {OpKind::kForward, StageIndex(1), MicrobatchIndex(0)},
      {OpKind::kBackward, StageIndex(0), MicrobatchIndex(0)});
  EXPECT_EQ(c.ActionDuration(overlap), 3.5);
}

Schedule Generated(const char* name, int32_t p, int32_t m, int32_t v) {
  Schedule schedule;
  ScheduleParams params;
  params.num_ranks = p;
  params.num_microbatches = m;
  params.stages_per_rank = v;
  EXPECT_TRUE(GenerateSchedule(name, params, &schedule).ok());
  return schedule;
}

RankShares SharesOf(const Schedule& schedule) {
  RankShares shares;
  EXPECT_TRUE(RankSharesOf(schedule, FlagLocator(), &shares).ok());
  return shares;
}

TEST(RankShares, CutEachShareOfAModelCopyIntoItsStages) {
  // Interleaved, p = 2, v = 2: the copy's 4 stages in order hold share 0 (stages 0 and 1, on
  // ranks 0 and 1) and share 1 (stages 2 and 3).
  RankShares s = SharesOf(Generated("Interleaved1F1B", 2, 4, 2));
  EXPECT_EQ(s.num_ranks, 2);
  EXPECT_EQ(s.share, (std::vector<int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(s.split, (std::vector<int32_t>{2, 2, 2, 2}));
  EXPECT_EQ(s.index, (std::vector<int32_t>{0, 1, 0, 1}));
  // ZB-V, p = 2: the same cut, whatever the V placement.
  s = SharesOf(Generated("ZB-V", 2, 4, 2));
  EXPECT_EQ(s.share, (std::vector<int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(s.index, (std::vector<int32_t>{0, 1, 0, 1}));
  // DualPipe, p = 2: two copies (stages 0-1 and 2-3, stage 2 + k on rank 1 - k), each stage a
  // whole share: rank 0 holds share 0 of copy A and share 1 of copy B.
  s = SharesOf(Generated("DualPipe", 2, 4, 2));
  EXPECT_EQ(s.share, (std::vector<int32_t>{0, 1, 0, 1}));
  EXPECT_EQ(s.split, (std::vector<int32_t>{1, 1, 1, 1}));
  EXPECT_EQ(s.index, (std::vector<int32_t>{0, 0, 0, 0}));
}

TEST(RankShares, StagesMustCutTheSharesEvenly) {
  Schedule three;  // 3 stages on 2 ranks
  ASSERT_TRUE(ParseScheduleText("rank 0: 0F0 2F0 2B0 0B0\nrank 1: 1F0 1B0\n", "t.txt", &three)
                  .ok());
  RankShares s;
  EXPECT_EQ(RankSharesOf(three, FlagLocator(), &s).message(),
            "--costs-per: costs per rank share split a model copy's stages evenly, but stages 0..2 "
            "are 3 for 2 ranks; give --costs-per virtual-stage and per-stage costs");
}

TEST(RankShares, SplitDurationsExactlyBytesWholeAndMessagesNot) {
  const RankShares shares = SharesOf(Generated("Interleaved1F1B", 2, 4, 2));
  StageCosts c;
  ASSERT_TRUE(OverrideStageCosts(CostValuesOf({{"f", "1,3"},
                                               {"b", "2"},
                                               {"activation", "7,8"},
                                               {"activation_w", "5"},
                                               {"message_bytes", "64"},
                                               {"overlap", "5"}}),
                                 nullptr, 4, FlagLocator(), &c, &shares)
                  .ok());
  EXPECT_EQ(c.forward_s, (std::vector<double>{0.5, 0.5, 1.5, 1.5}));
  EXPECT_EQ(c.backward_s, (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(c.overlap_s, (std::vector<double>{2.5, 2.5, 2.5, 2.5}));
  // 7 bytes over two stages: 4 then 3; 8: 4 and 4; 5: 3 and 2.
  EXPECT_EQ(c.activation_bytes, (std::vector<int64_t>{4, 3, 4, 4}));
  EXPECT_EQ(c.activation_w_bytes, (std::vector<int64_t>{3, 2, 3, 2}));
  // The boundary tensor is the same whatever the cut.
  EXPECT_EQ(c.message_bytes, (std::vector<int64_t>{64, 64, 64, 64}));
  EXPECT_EQ(OverrideStageCosts(CostValuesOf({{"f", "1,2,3"}, {"b", "2"}}), nullptr, 4,
                               FlagLocator(), &c, &shares)
                .message(),
            "--f: 3 values for 2 ranks; give one value for all ranks or exactly 2, "
            "comma-separated (or --costs-per virtual-stage and one per virtual stage)");
}

TEST(RankShares, DualPipeCopiesHoldTheSameSharesInOppositeDirections) {
  // p = 4: copy A's stage k and copy B's stage 4 + k hold share k; --f 1,1,2,1 makes share 2
  // (copy A's stage 2 on rank 2, copy B's stage 6 on rank 1) the slow one.
  const RankShares shares = SharesOf(Generated("DualPipe", 4, 8, 2));
  StageCosts c;
  ASSERT_TRUE(OverrideStageCosts(CostValuesOf({{"f", "1,1,2,1"}, {"b", "2"}}), nullptr, 8,
                                 FlagLocator(), &c, &shares)
                  .ok());
  EXPECT_EQ(c.forward_s, (std::vector<double>{1, 1, 2, 1, 1, 1, 2, 1}));
}

TEST(OverrideStageCosts, ReportsMissingAndInconsistentFlags) {
  StageCosts c;
  EXPECT_EQ(BuildCosts({}, 4, &c).message(),
            "--f: required; give the forward time of each virtual stage, e.g. --f 1.2ms");
  EXPECT_EQ(BuildCosts({{"f", "1"}}, 4, &c).message(),
            "--b: required; give the full backward time (--b) or its two parts (--i and --w)");
  EXPECT_EQ(BuildCosts({{"f", "1"}, {"i", "1"}}, 4, &c).message(),
            "--i: given without --w; a split backward needs both --i and --w");
  EXPECT_EQ(BuildCosts({{"f", "1"}, {"b", "2,2"}}, 4, &c).message(),
            "--b: 2 values for 4 virtual stages; give one value for all stages or exactly 4, "
            "comma-separated");
  EXPECT_EQ(BuildCosts({{"f", "1,2,3"}, {"b", "2"}}, 4, &c).message(),
            "--f: 3 values for 4 virtual stages; give one value for all stages or exactly 4, "
            "comma-separated");
  EXPECT_EQ(BuildCosts({{"f", "1"}, {"b", "2"}, {"activation", "1GB"}, {"activation_w", "2GB"}},
                       4, &c)
                .message(),
            "--activation-w: 2000000000 bytes at stage 0 exceed --activation (1000000000 bytes); "
            "M_W is the part of M_B held from I until W");
}

TEST(CheckCostsCoverSchedule, SplitBackwardSchedulesNeedIAndW) {
  Schedule s;
  s.num_ranks = 1;
  s.num_stages = 1;
  s.num_microbatches = 1;
  s.stage_to_rank = {RankIndex(0)};
  s.orders = {{Action::Single({OpKind::kForward, StageIndex(0), MicrobatchIndex(0)}),
               Action::Single({OpKind::kBackwardInput, StageIndex(0), MicrobatchIndex(0)}),
               Action::Single({OpKind::kBackwardWeight, StageIndex(0), MicrobatchIndex(0)})}};
  StageCosts c;
  ASSERT_TRUE(BuildCosts({{"f", "1"}, {"b", "2"}}, 1, &c).ok());
  EXPECT_EQ(CheckCostsCoverSchedule(c, s, FlagLocator()).message(),
            "--i/--w: the schedule splits the backward into I and W (first at rank 0, position 2 "
            "(0I0)); give --i and --w, not only --b");
}

}  // namespace
}  // namespace ppsim
