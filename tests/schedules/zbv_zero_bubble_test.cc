// ZBVZeroBubble against torch's ScheduleZBVZeroBubble: the expected orders are torch's
// pipeline_order (pytorch/pytorch @ cff2ecc8b32af684662aefe6fe058e41810e26ce, as recorded in
// tests/data/torch/ZBVZeroBubble.json) with its bubble slots dropped; the timings are
// check case 7 (the zero-bubble paper's ZB-V at F = I = W).
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
  return GenerateText("ZBVZeroBubble", ScheduleParams{p, v, m});
}

std::string Rejection(int32_t p, int32_t m, int32_t v) {
  return GenerateError("ZBVZeroBubble", ScheduleParams{p, v, m});
}

TEST(ZBVZeroBubble, PlacesStagesInAV) {
  Schedule s;
  ASSERT_TRUE(GenerateZBVZeroBubble(ScheduleParams{3, 2, 4}, &s).ok());
  EXPECT_EQ(s.num_ranks, 3);
  EXPECT_EQ(s.num_stages, 6);
  EXPECT_EQ(s.num_microbatches, 4);
  const std::vector<RankIndex> want = {RankIndex(0), RankIndex(1), RankIndex(2),
                                       RankIndex(2), RankIndex(1), RankIndex(0)};
  EXPECT_EQ(s.stage_to_rank, want);
}

TEST(ZBVZeroBubble, MatchesTorchPipelineOrder) {
  EXPECT_EQ(Generate(2, 4),
            "rank 0: 0F0 0F1 0F2 3F0 3I0 3W0 3F1 3I1 3W1 0F3 0I0 0W0 3F2 3I2 3W2 0I1 0W1 3F3 3I3 "
            "3W3 0I2 0W2 0I3 0W3\n"
            "rank 1: 1F0 2F0 1F1 2F1 2I0 2W0 1F2 1I0 1W0 2F2 2I1 2W1 1F3 1I1 1W1 2F3 2I2 2W2 1I2 "
            "2I3 1I3 1W2 2W3 1W3\n");
  EXPECT_EQ(Generate(1, 1), "rank 0: 0F0 1F0 1I0 1W0 0I0 0W0\n");
}

TEST(ZBVZeroBubble, DropsThePlannedMicrobatchesBeyondM) {
  // torch plans max(2p - 1, m) = 5 microbatches for p = 3, m = 2 and blanks those >= 2.
  EXPECT_EQ(Generate(3, 2),
            "rank 0: 0F0 0F1 5F0 5I0 5W0 5F1 5I1 5W1 0I0 0W0 0I1 0W1\n"
            "rank 1: 1F0 1F1 4F0 4F1 4I0 4W0 4I1 4W1 1I0 1W0 1I1 1W1\n"
            "rank 2: 2F0 3F0 2F1 3F1 3I0 3W0 2I0 2W0 3I1 3W1 2I1 2W1\n");
  EXPECT_EQ(Generate(2, 1),
            "rank 0: 0F0 3F0 3I0 3W0 0I0 0W0\n"
            "rank 1: 1F0 2F0 2I0 2W0 1I0 1W0\n");
}

TEST(ZBVZeroBubble, StagesPerRankZeroMeansTwo) { EXPECT_EQ(Generate(2, 4, 0), Generate(2, 4, 2)); }

TEST(ZBVZeroBubble, RejectsWhatTorchRejects) {
  EXPECT_EQ(Rejection(4, 8, 3), "ZBVZeroBubble needs exactly 2 stages per rank; got 3");
  EXPECT_EQ(Rejection(4, 8, 1), "ZBVZeroBubble needs exactly 2 stages per rank; got 1");
  EXPECT_EQ(Rejection(0, 8, 2), "ZBVZeroBubble needs at least 1 rank; got 0");
  EXPECT_EQ(Rejection(4, 0, 2), "ZBVZeroBubble needs at least 1 microbatch; got 0");
}

TEST(ZBVZeroBubble, CheckCase7HasNoBubbleInsideTheSpans) {
  for (EngineKind engine : kBothEngines) {
    // Check case 7: F = I = W = 1 and M_B = 1 per virtual stage, so 2 for a rank's share.
    proto::RunConfig spec = IdealRun("ZBVZeroBubble", 4, 8, "2", "", engine);
    spec.set_stages_per_rank(2);
    spec.set_i("2");
    spec.set_w("2");
    spec.set_activation("2");
    const RunResult r = RunOk(spec);
    EXPECT_NEAR(r.metrics.makespan_s, 51, 1e-9);
    const std::vector<double> spans = Spans(r);
    ASSERT_EQ(spans.size(), 4u);
    for (int rank = 0; rank < 4; ++rank) EXPECT_NEAR(spans[rank], 48, 1e-9) << "rank " << rank;
    EXPECT_EQ(Peaks(r), (std::vector<int64_t>{8, 8, 8, 8}));
  }
}

}  // namespace
}  // namespace ppsim
