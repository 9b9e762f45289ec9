// Generated orders against their references: torch's ScheduleGPipe (from torch's own
// pipeline_order, tests/data/torch/GPipe.json) and the standard 1F1B order
// (Megatron-LM's forward_backward_pipelining_without_interleaving: warmup p - r - 1 forwards,
// steady one forward one backward, cooldown backwards), written out by hand.
#include <gtest/gtest.h>

#include "tests/support/schedules.h"
#include "schedules/registry.h"
#include "schedules/schedule_text.h"

namespace ppsim {
namespace {

std::string Generate(const std::string& name, int32_t p, int32_t m, int32_t v = 1) {
  return GenerateText(name, ScheduleParams{p, v, m});
}

TEST(GPipe, MatchesTorchPipelineOrder) {
  // torch GPipe pp=2, microbatches=3 (REDUCE_GRAD bookkeeping dropped).
  EXPECT_EQ(Generate("GPipe", 2, 3),
            "rank 0: 0F0 0F1 0F2 0B0 0B1 0B2\n"
            "rank 1: 1F0 1F1 1F2 1B0 1B1 1B2\n");
  EXPECT_EQ(Generate("gpipe", 1, 1), "rank 0: 0F0 0B0\n");
}

TEST(OneFOneB, WarmsUpPMinusRMinusOneThenAlternates) {
  EXPECT_EQ(Generate("1F1B", 4, 8),
            "rank 0: 0F0 0F1 0F2 0F3 0B0 0F4 0B1 0F5 0B2 0F6 0B3 0F7 0B4 0B5 0B6 0B7\n"
            "rank 1: 1F0 1F1 1F2 1B0 1F3 1B1 1F4 1B2 1F5 1B3 1F6 1B4 1F7 1B5 1B6 1B7\n"
            "rank 2: 2F0 2F1 2B0 2F2 2B1 2F3 2B2 2F4 2B3 2F5 2B4 2F6 2B5 2F7 2B6 2B7\n"
            "rank 3: 3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 3F4 3B4 3F5 3B5 3F6 3B6 3F7 3B7\n");
}

TEST(OneFOneB, AcceptsFewerMicrobatchesThanRanks) {
  EXPECT_EQ(Generate("1F1B", 4, 2),
            "rank 0: 0F0 0F1 0B0 0B1\n"
            "rank 1: 1F0 1F1 1B0 1B1\n"
            "rank 2: 2F0 2F1 2B0 2B1\n"
            "rank 3: 3F0 3B0 3F1 3B1\n");
}

TEST(Registry, NamesAreCaseInsensitiveAndUnknownNamesListTheValidOnes) {
  EXPECT_NE(FindSchedule("gPiPe"), nullptr);
  Schedule s;
  EXPECT_EQ(GenerateSchedule("2F2B", ScheduleParams{4, 1, 8}, &s).message(),
            "unknown schedule '2F2B'; valid: "
            "GPipe, 1F1B, Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, ZBVZeroBubble, "
            "DualPipeV, Megatron-Interleaved, ZB-H1, ZB-H2, ZB-1p, ZB-2p, ZB-auto, ZB-V, V-Half, "
            "V-Min, DualPipe");
}

TEST(Registry, OneStagePerRankSchedulesRejectVirtualStages) {
  Schedule s;
  EXPECT_EQ(GenerateSchedule("1F1B", ScheduleParams{4, 2, 8}, &s).message(),
            "1F1B has one stage per rank; got 2");
  EXPECT_EQ(GenerateSchedule("GPipe", ScheduleParams{0, 1, 8}, &s).message(),
            "GPipe needs at least 1 rank; got 0");
}

}  // namespace
}  // namespace ppsim
