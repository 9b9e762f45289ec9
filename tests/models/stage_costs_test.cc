#include "models/stage_costs.h"

#include <gtest/gtest.h>

#include "schedules/registry.h"

namespace ppsim {
namespace {

TEST(BuildStageCosts, FullBackwardDefaultsToIPlusW) {
  CostText text;
  text.forward = "1,1,2,1";
  text.backward_input = "1,1,2,1";
  text.backward_weight = "0.5";
  StageCosts c;
  ASSERT_TRUE(BuildStageCosts(text, 4, &c).ok());
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

TEST(BuildStageCosts, GivenBOverridesIPlusWAndOverlapIsByForwardStage) {
  CostText text;
  text.forward = "1";
  text.backward = "2";
  text.backward_input = "1.5";
  text.backward_weight = "1.5";
  text.overlap = "2.5,3.5";
  StageCosts c;
  ASSERT_TRUE(BuildStageCosts(text, 2, &c).ok());
  EXPECT_EQ(c.backward_s, (std::vector<double>{2, 2}));
  const Action overlap = Action::OverlapForwardBackward(
      {OpKind::kForward, StageIndex(1), MicrobatchIndex(0)},
      {OpKind::kBackward, StageIndex(0), MicrobatchIndex(0)});
  EXPECT_EQ(c.ActionDuration(overlap), 3.5);
}

TEST(BuildStageCosts, ReportsMissingAndInconsistentFlags) {
  StageCosts c;
  CostText text;
  EXPECT_EQ(BuildStageCosts(text, 4, &c).message(),
            "--f: required; give the forward time of each virtual stage, e.g. --f 1.2ms");
  text.forward = "1";
  EXPECT_EQ(BuildStageCosts(text, 4, &c).message(),
            "--b: required; give the full backward time (--b) or its two parts (--i and --w)");
  text.backward_input = "1";
  EXPECT_EQ(BuildStageCosts(text, 4, &c).message(),
            "--i: given without --w; a split backward needs both --i and --w");
  text.backward_input.clear();
  text.backward = "2,2";
  EXPECT_EQ(BuildStageCosts(text, 4, &c).message(),
            "--b: 2 values for 4 virtual stages; give one value for all stages or exactly 4, "
            "comma-separated");
  text.backward = "2";
  text.activation = "1GB";
  text.activation_w = "2GB";
  EXPECT_EQ(BuildStageCosts(text, 4, &c).message(),
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
  CostText text;
  text.forward = "1";
  text.backward = "2";
  StageCosts c;
  ASSERT_TRUE(BuildStageCosts(text, 1, &c).ok());
  EXPECT_EQ(CheckCostsCoverSchedule(c, s).message(),
            "--i/--w: the schedule splits the backward into I and W (first at rank 0, position 2 "
            "(0I0)); give --i and --w, not only --b");
}

}  // namespace
}  // namespace ppsim
