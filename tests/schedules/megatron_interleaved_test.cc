// Megatron-LM's interleaved 1F1B against its reference: the orders below are worked out by hand
// from megatron/core/pipeline_parallel/schedules.py (get_schedule_table: groups of g microbatches
// through chunk 0, then chunk 1; get_pp_rank_microbatches: warmup (p - r - 1) * 2 + (v - 1) * g;
// then one forward and one backward, backwards on the mirrored chunk).
#include <gtest/gtest.h>

#include "schedules/registry.h"
#include "schedules/schedule_text.h"
#include "sim/metrics.h"
#include "tests/support/runs.h"
#include "tests/support/schedules.h"

namespace ppsim {
namespace {

std::string Generate(int32_t p, int32_t m, int32_t v, int32_t g) {
  return GenerateText("Megatron-Interleaved", ScheduleParams{p, v, m, g});
}

std::string Rejection(int32_t p, int32_t m, int32_t v, int32_t g) {
  return GenerateError("Megatron-Interleaved", ScheduleParams{p, v, m, g});
}

TEST(MegatronInterleaved, FollowsTheScheduleTableWithMirroredBackwardChunks) {
  // p = 2, v = 2, m = 4, g = 2: table (0,c0) (1,c0) (0,c1) (1,c1) (2,c0) (3,c0) (2,c1) (3,c1);
  // stage = chunk * p + rank. Rank 0 warms up with 2 + 2 = 4 forwards, rank 1 with 2.
  EXPECT_EQ(Generate(2, 4, 2, 2),
            "rank 0: 0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 2B2 2B3 0B2 0B3\n"
            "rank 1: 1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3\n");
  // The defaults are v = 2 and g = p.
  EXPECT_EQ(Generate(2, 4, 0, 0), Generate(2, 4, 2, 2));
}

TEST(MegatronInterleaved, LargerGroupsLengthenTheWarmup) {
  // g = 4: one group; rank 1 warms up with (2 - 1 - 1) * 2 + (2 - 1) * 4 = 4 forwards.
  EXPECT_EQ(Generate(2, 4, 2, 4).substr(Generate(2, 4, 2, 4).find("rank 1:")),
            "rank 1: 1F0 1F1 1F2 1F3 3F0 3B0 3F1 3B1 3F2 3B2 3F3 3B3 1B0 1B1 1B2 1B3\n");
}

TEST(MegatronInterleaved, RejectsWhatMegatronRejects) {
  EXPECT_EQ(Rejection(2, 4, 2, 1),
            "Megatron-Interleaved needs the microbatch group size in [pp, m] = [2, 4]; got 1");
  EXPECT_EQ(Rejection(2, 4, 2, 5),
            "Megatron-Interleaved needs the microbatch group size in [pp, m] = [2, 4]; got 5");
  EXPECT_EQ(Rejection(4, 9, 2, 4),
            "Megatron-Interleaved needs the last microbatch group (m % g = 1) to be empty or at "
            "least pp = 4 microbatches");
  EXPECT_EQ(Rejection(1, 4, 2, 0),
            "Megatron-Interleaved needs at least 2 ranks (Megatron runs pp = 1 without "
            "pipelining); got 1");
}

// --overlap-moe-expert-parallel-comm, worked out by hand from Megatron-LM at d98e8a64:
// megatron/core/pipeline_parallel/schedules.py get_pp_rank_microbatches (warmup + 1 with
// overlap_moe_expert_parallel_comm) and forward_backward_pipelining_with_interleaving, whose steady
// state calls forward_backward_helper_wrapper(f_virtual_microbatch_id=k + warmup,
// b_virtual_microbatch_id=k) and so combined_1f1b_schedule_for_interleaved_pipelining
// (combined_1f1b.py) with both: one OVERLAP_F_B pair. p = 2, v = 2, m = 4, g = 2, the table of the
// test above: rank 0 warms up with 2 + 2 + 1 = 5 forwards (entries 0-4), pairs F(5..7) with
// B(0..2), then B(3..7); rank 1 with 0 + 2 + 1 = 3, pairs F(3..7) with B(0..4), then B(5..7).
TEST(MegatronInterleaved, EpAllToAllOverlapWarmsUpOneMoreAndPairsTheSteadyState) {
  ScheduleParams params{2, 2, 4, 2};
  params.moe_a2a_overlap = true;
  EXPECT_EQ(GenerateText("Megatron-Interleaved", params),
            "rank 0: 0F0 0F1 2F0 2F1 0F2 (0F3;2B0)OVERLAP_F_B (2F2;2B1)OVERLAP_F_B "
            "(2F3;0B0)OVERLAP_F_B 0B1 2B2 2B3 0B2 0B3\n"
            "rank 1: 1F0 1F1 3F0 (3F1;3B0)OVERLAP_F_B (1F2;3B1)OVERLAP_F_B (1F3;1B0)OVERLAP_F_B "
            "(3F2;1B1)OVERLAP_F_B (3F3;3B2)OVERLAP_F_B 3B3 1B2 1B3\n");
  // Without pipelining (pp 1): combined_1f1b_schedule_for_no_pipelining: F0 alone, then F(i + 1)
  // with B(i), then the last B alone.
  ScheduleParams one{1, 0, 3, 0};
  one.moe_a2a_overlap = true;
  EXPECT_EQ(GenerateText("1F1B", one),
            "rank 0: 0F0 (0F1;0B0)OVERLAP_F_B (0F2;0B1)OVERLAP_F_B 0B2\n");
}

TEST(MegatronInterleaved, EpAllToAllOverlapOnlyWithMegatronsSchedules) {
  ScheduleParams params{2, 0, 4, 0};
  params.moe_a2a_overlap = true;
  EXPECT_EQ(GenerateError("1F1B", params),
            "Megatron-LM overlaps the expert-parallel all-to-alls with pp > 1 only in its "
            "interleaved schedule (it asserts a virtual pipeline size); got 1F1B with pp 2; "
            "valid: 1F1B with pp 1, or Megatron-Interleaved");
  EXPECT_EQ(GenerateError("GPipe", params),
            "Megatron-LM's combined 1F1B runs with its interleaved schedule (or without "
            "pipelining); got GPipe; valid: Megatron-Interleaved, or 1F1B with pp 1");
}

TEST(MegatronInterleaved, EpAllToAllOverlapHoldsOneMoreMicrobatchOfActivations) {
  // Check case 4's shape (p = 4, m = 8, v = 2, g = 4), 2 bytes per chunk activation: plain, rank r
  // peaks at (p - r - 1) * 2 + (v - 1) * g + 1 = [11, 9, 7, 5] chunks; with the overlap the warmup
  // has one forward more and the first pair's forward starts before its backward frees: + 1.
  ScheduleParams params{4, 2, 8, 4};
  StageCosts costs;
  costs.forward_s.assign(8, 1);
  costs.backward_s.assign(8, 2);
  costs.activation_bytes.assign(8, 2);
  Schedule plain;
  ASSERT_TRUE(GenerateSchedule("Megatron-Interleaved", params, &plain).ok());
  EXPECT_EQ(PeakActivationBytes(plain, costs), (std::vector<int64_t>{22, 18, 14, 10}));
  params.moe_a2a_overlap = true;
  Schedule overlap;
  ASSERT_TRUE(GenerateSchedule("Megatron-Interleaved", params, &overlap).ok());
  EXPECT_EQ(PeakActivationBytes(overlap, costs), (std::vector<int64_t>{24, 20, 16, 12}));
}

class MegatronCheckCase : public ::testing::TestWithParam<EngineKind> {};

TEST_P(MegatronCheckCase, Case4InterleavedBubble) {
  // Check case 4: p = 4, m = 8, per-rank F = 1, B = 2 split over the chunks: m(F + B) plus
  // (p - 1)(F + B)/v: 28.5 for v = 2, 26.25 for v = 4. Rank r peaks at
  // (p - r - 1) * 2 + (v - 1) * p + 1 chunk activations: [11, 9, 7, 5] x 2 bytes.
  proto::RunConfig spec = IdealRun("Megatron-Interleaved", 4, 8, "1", "2", GetParam());
  spec.set_stages_per_rank(2);
  spec.set_activation("4");
  const RunResult r = RunOk(spec);
  EXPECT_NEAR(r.metrics.makespan_s, 8 * 3 + 3 * 3 / 2.0, 1e-9);
  EXPECT_EQ(Peaks(r), (std::vector<int64_t>{22, 18, 14, 10}));
  proto::RunConfig four = IdealRun("Megatron-Interleaved", 4, 8, "1", "2", GetParam());
  four.set_stages_per_rank(4);
  EXPECT_NEAR(RunOk(four).metrics.makespan_s, 8 * 3 + 3 * 3 / 4.0, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(BothEngines, MegatronCheckCase, ::testing::ValuesIn(kBothEngines),
                         [](const auto& info) {
                           return info.param == EngineKind::kSimGrid ? "SimGrid" : "CriticalPath";
                         });

}  // namespace
}  // namespace ppsim
