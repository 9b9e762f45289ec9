#include "models/stage_costs.h"

#include <gtest/gtest.h>

#include "schedules/registry.h"
#include "tests/support/costs.h"

namespace ppsim {
namespace {

TEST(BuildStageCosts, FullBackwardDefaultsToIPlusW) {
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

TEST(BuildStageCosts, GivenBOverridesIPlusWAndOverlapIsByForwardStage) {
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

TEST(BuildStageCosts, ReportsMissingAndInconsistentFlags) {
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
