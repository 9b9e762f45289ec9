// torch's multi-stage schedules against torch itself. The expected orders are torch's
// pipeline_order (pytorch/pytorch @ cff2ecc8b32af684662aefe6fe058e41810e26ce,
// torch/distributed/pipelining/schedules.py) with the None bubble slots dropped, copied from
// tests/data/torch/{Interleaved1F1B,LoopedBFS,InterleavedZeroBubble}.json. The
// makespans and peaks are check case 4.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/schedules.h"
#include "schedules/registry.h"
#include "schedules/schedule_text.h"
#include "tests/support/runs.h"

namespace ppsim {
namespace {

std::string Generate(const std::string& name, int32_t p, int32_t m, int32_t v) {
  return GenerateText(name, ScheduleParams{p, v, m});
}

std::string Rejection(const std::string& name, int32_t p, int32_t m, int32_t v) {
  return GenerateError(name, ScheduleParams{p, v, m});
}

proto::RunConfig InterleavedSpec(int32_t v, const std::string& f, const std::string& b, EngineKind engine) {
  proto::RunConfig spec = IdealRun("Interleaved1F1B", 4, 8, f, b, engine);
  spec.set_stages_per_rank(v);
  return spec;
}

TEST(Interleaved1F1B, MatchesTorchPipelineOrder) {
  EXPECT_EQ(Generate("Interleaved1F1B", 2, 4, 2),
            "rank 0: 0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 2B2 2B3 0B2 0B3\n"
            "rank 1: 1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3\n");
  // m = 3 on 2 ranks: one round of 3 microbatches.
  EXPECT_EQ(Generate("Interleaved1F1B", 2, 3, 2),
            "rank 0: 0F0 0F1 0F2 2F0 2F1 2F2 2B0 2B1 2B2 0B0 0B1 0B2\n"
            "rank 1: 1F0 1F1 1F2 3F0 3B0 3F1 3B1 3F2 3B2 1B0 1B1 1B2\n");
}

TEST(Interleaved1F1B, AcceptsFewerMicrobatchesThanRanks) {
  EXPECT_EQ(Generate("Interleaved1F1B", 4, 2, 2),
            "rank 0: 0F0 0F1 4F0 4F1 4B0 4B1 0B0 0B1\n"
            "rank 1: 1F0 1F1 5F0 5F1 5B0 5B1 1B0 1B1\n"
            "rank 2: 2F0 2F1 6F0 6F1 6B0 6B1 2B0 2B1\n"
            "rank 3: 3F0 3F1 7F0 7B0 7F1 7B1 3B0 3B1\n");
}

TEST(Interleaved1F1B, DefaultsToTwoStagesPerRankPlacedInALoop) {
  Schedule s;
  ASSERT_TRUE(GenerateSchedule("Interleaved1F1B", ScheduleParams{2, 0, 4}, &s).ok());
  EXPECT_EQ(s.num_ranks, 2);
  EXPECT_EQ(s.num_stages, 4);
  EXPECT_EQ(s.num_microbatches, 4);
  EXPECT_EQ(s.stage_to_rank,
            (std::vector<RankIndex>{RankIndex(0), RankIndex(1), RankIndex(0), RankIndex(1)}));
  EXPECT_EQ(FormatScheduleText(s),
            "rank 0: 0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 2B2 2B3 0B2 0B3\n"
            "rank 1: 1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3\n");
}

TEST(Interleaved1F1B, RejectsMicrobatchesThatAreNotAMultipleOfRounds) {
  EXPECT_EQ(Rejection("Interleaved1F1B", 2, 5, 2),
            "Interleaved1F1B needs microbatches to be a multiple of rounds = max(1, m // pp) = 2; "
            "got 5");
  EXPECT_EQ(Rejection("Interleaved1F1B", 3, 16, 3),
            "Interleaved1F1B needs microbatches to be a multiple of rounds = max(1, m // pp) = 5; "
            "got 16");
}

TEST(Interleaved1F1B, RejectsEmptyPipelines) {
  EXPECT_EQ(Rejection("Interleaved1F1B", 0, 8, 2), "Interleaved1F1B needs at least 1 rank; got 0");
  EXPECT_EQ(Rejection("Interleaved1F1B", 4, 0, 2),
            "Interleaved1F1B needs at least 1 microbatch; got 0");
  EXPECT_EQ(Rejection("Interleaved1F1B", 4, 8, -1),
            "Interleaved1F1B needs at least 1 stage per rank; got -1");
}

class Interleaved1F1BCheckCase : public ::testing::TestWithParam<EngineKind> {};

TEST_P(Interleaved1F1BCheckCase, Case4TwoAndFourChunksPerRank) {
  // Per rank F = 1, B = 2, split evenly over the chunks (costs are per rank by default).
  proto::RunConfig two = InterleavedSpec(2, "1", "2", GetParam());
  two.set_activation("4");  // A whole rank's M_B is 4 bytes, so the peaks are 4 x [5.5, ...].
  const RunResult r = RunOk(two);
  EXPECT_NEAR(r.metrics.makespan_s, 28.5, 1e-9);
  EXPECT_EQ(Peaks(r), (std::vector<int64_t>{22, 18, 14, 10}));
  EXPECT_NEAR(RunOk(InterleavedSpec(4, "1", "2", GetParam())).metrics.makespan_s, 26.25, 1e-9);
  // The same check case with the chunks' own costs.
  proto::RunConfig per_chunk = InterleavedSpec(2, "0.5", "1", GetParam());
  per_chunk.set_costs_per("virtual-stage");
  EXPECT_NEAR(RunOk(per_chunk).metrics.makespan_s, 28.5, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(BothEngines, Interleaved1F1BCheckCase, ::testing::ValuesIn(kBothEngines),
                         [](const auto& info) {
                           return info.param == EngineKind::kSimGrid ? "SimGrid" : "CriticalPath";
                         });

TEST(LoopedBFS, MatchesTorchPipelineOrder) {
  EXPECT_EQ(Generate("LoopedBFS", 2, 4, 2),
            "rank 0: 0F0 0F1 0F2 0F3 2F0 2F1 2F2 2F3 2B3 2B2 2B1 2B0 0B3 0B2 0B1 0B0\n"
            "rank 1: 1F0 1F1 1F2 1F3 3F0 3F1 3F2 3F3 3B3 3B2 3B1 3B0 1B3 1B2 1B1 1B0\n");
}

TEST(LoopedBFS, AcceptsAnyNumberOfMicrobatches) {
  // torch has no rounds rule here: 5 microbatches on 2 ranks is fine.
  Schedule s;
  Status status = GenerateSchedule("LoopedBFS", ScheduleParams{2, 2, 5}, &s);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(Generate("LoopedBFS", 4, 2, 2),
            "rank 0: 0F0 0F1 4F0 4F1 4B1 4B0 0B1 0B0\n"
            "rank 1: 1F0 1F1 5F0 5F1 5B1 5B0 1B1 1B0\n"
            "rank 2: 2F0 2F1 6F0 6F1 6B1 6B0 2B1 2B0\n"
            "rank 3: 3F0 3F1 7F0 7F1 7B1 7B0 3B1 3B0\n");
}

TEST(LoopedBFS, RejectsEmptyPipelines) {
  EXPECT_EQ(Rejection("LoopedBFS", 0, 4, 2), "LoopedBFS needs at least 1 rank; got 0");
  EXPECT_EQ(Rejection("LoopedBFS", 2, 0, 2), "LoopedBFS needs at least 1 microbatch; got 0");
  EXPECT_EQ(Rejection("LoopedBFS", 2, 4, -3), "LoopedBFS needs at least 1 stage per rank; got -3");
}

TEST(InterleavedZeroBubble, MatchesTorchPipelineOrder) {
  EXPECT_EQ(Generate("InterleavedZeroBubble", 2, 4, 2),
            "rank 0: 0F0 0F1 2F0 2F1 2I0 2W0 0F2 2I1 2W1 0F3 0I0 0W0 2F2 0I1 0W1 2F3 2I2 2W2 2I3 "
            "2W3 0I2 0W2 0I3 0W3\n"
            "rank 1: 1F0 1F1 3F0 3I0 3F1 3I1 3W0 1F2 1I0 3W1 1F3 1I1 1W0 3F2 3I2 1W1 3F3 3I3 3W2 "
            "1I2 3W3 1I3 1W2 1W3\n");
}

TEST(InterleavedZeroBubble, AcceptsFewerMicrobatchesThanRanks) {
  // torch adds bubbles to this order (_add_bubbles_to_actions) but keeps every rank's sequence.
  EXPECT_EQ(Generate("InterleavedZeroBubble", 4, 2, 2),
            "rank 0: 0F0 0F1 4F0 4F1 4I0 4W0 4I1 4W1 0I0 0W0 0I1 0W1\n"
            "rank 1: 1F0 1F1 5F0 5F1 5I0 5I1 5W0 1I0 5W1 1I1 1W0 1W1\n"
            "rank 2: 2F0 2F1 6F0 6F1 6I0 6I1 2I0 6W0 2I1 6W1 2W0 2W1\n"
            "rank 3: 3F0 3F1 7F0 7I0 7F1 7I1 3I0 3I1 7W0 7W1 3W0 3W1\n");
}

TEST(InterleavedZeroBubble, RejectsMicrobatchesThatAreNotAMultipleOfRounds) {
  EXPECT_EQ(Rejection("InterleavedZeroBubble", 2, 5, 2),
            "InterleavedZeroBubble needs microbatches to be a multiple of rounds = max(1, m // pp) "
            "= 2; got 5");
  EXPECT_EQ(Rejection("InterleavedZeroBubble", 3, 32, 4),
            "InterleavedZeroBubble needs microbatches to be a multiple of rounds = max(1, m // pp) "
            "= 10; got 32");
}

TEST(InterleavedZeroBubble, RejectsEmptyPipelines) {
  EXPECT_EQ(Rejection("InterleavedZeroBubble", 0, 4, 2),
            "InterleavedZeroBubble needs at least 1 rank; got 0");
  EXPECT_EQ(Rejection("InterleavedZeroBubble", 2, 0, 2),
            "InterleavedZeroBubble needs at least 1 microbatch; got 0");
}

}  // namespace
}  // namespace ppsim
