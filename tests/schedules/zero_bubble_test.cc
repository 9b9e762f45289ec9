// The handcrafted zero-bubble schedules (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024,
// arXiv 2401.10241): ZB-H1, ZB-H2 and ZB-V.
//
// Expected orders: ZB-H1 and ZB-H2 as the paper's figures 3 and 4 draw them (ZB-H1: 1F1B's warmup
// of p - r forwards before the first I on stage r, then I(i), W(i - r), F(next); ZB-H2: a warmup
// of 2(p - 1 - r) + 1 forwards, then I(i), W(i - 2r), F(next)), written out by hand; ZB-V as
// torch's ScheduleZBVZeroBubble prints it (tests/data/torch/ZBVZeroBubble.json, bubbles
// dropped), itself a port of the reference's handcrafted get_zb_v_schedule. Expected timings and
// peaks: check cases 3, 5, 6 and 7 and the paper's closed forms
// (uniform stages, no communication): ZB-H1 makespan m(F + I + W) + (p - 1)(F + I - W), peak on
// stage i (1-based) (p - i + 1) M_B + (i - 1) M_W; ZB-H2 longest span m(F + I + W) +
// (p - 1)(F + I - 2W), peak (2p - 2i + 1) M_B + (2i - 2) M_W.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/schedules.h"
#include "schedules/registry.h"
#include "schedules/schedule_text.h"
#include "tests/support/runs.h"

namespace ppsim {
namespace {

std::string Generate(const std::string& name, int32_t p, int32_t m, int32_t v = 0) {
  return GenerateText(name, ScheduleParams{p, v, m});
}

std::string Rejection(const std::string& name, int32_t p, int32_t m, int32_t v) {
  return GenerateError(name, ScheduleParams{p, v, m});
}

TEST(ZBH1, KeepsOneFOneBWarmupAndDelaysWeightsByRank) {
  EXPECT_EQ(Generate("ZB-H1", 4, 8),
            "rank 0: 0F0 0F1 0F2 0F3 0I0 0W0 0F4 0I1 0W1 0F5 0I2 0W2 0F6 0I3 0W3 0F7 0I4 0W4 "
            "0I5 0W5 0I6 0W6 0I7 0W7\n"
            "rank 1: 1F0 1F1 1F2 1I0 1F3 1I1 1W0 1F4 1I2 1W1 1F5 1I3 1W2 1F6 1I4 1W3 1F7 1I5 1W4 "
            "1I6 1W5 1I7 1W6 1W7\n"
            "rank 2: 2F0 2F1 2I0 2F2 2I1 2F3 2I2 2W0 2F4 2I3 2W1 2F5 2I4 2W2 2F6 2I5 2W3 2F7 2I6 "
            "2W4 2I7 2W5 2W6 2W7\n"
            "rank 3: 3F0 3I0 3F1 3I1 3F2 3I2 3F3 3I3 3W0 3F4 3I4 3W1 3F5 3I5 3W2 3F6 3I6 3W3 3F7 "
            "3I7 3W4 3W5 3W6 3W7\n");
}

TEST(ZBH1, FewerMicrobatchesThanRanksCapTheWarmup) {
  EXPECT_EQ(Generate("ZB-H1", 4, 2),
            "rank 0: 0F0 0F1 0I0 0W0 0I1 0W1\n"
            "rank 1: 1F0 1F1 1I0 1I1 1W0 1W1\n"
            "rank 2: 2F0 2F1 2I0 2I1 2W0 2W1\n"
            "rank 3: 3F0 3I0 3F1 3I1 3W0 3W1\n");
  EXPECT_EQ(Generate("ZB-H1", 1, 2), "rank 0: 0F0 0I0 0W0 0F1 0I1 0W1\n");
}

TEST(ZBH2, WarmsUpWithTwiceTheForwardsAndDelaysWeightsByTwiceTheRank) {
  EXPECT_EQ(Generate("ZB-H2", 4, 8),
            "rank 0: 0F0 0F1 0F2 0F3 0F4 0F5 0F6 0I0 0W0 0F7 0I1 0W1 0I2 0W2 0I3 0W3 0I4 0W4 "
            "0I5 0W5 0I6 0W6 0I7 0W7\n"
            "rank 1: 1F0 1F1 1F2 1F3 1F4 1I0 1F5 1I1 1F6 1I2 1W0 1F7 1I3 1W1 1I4 1W2 1I5 1W3 "
            "1I6 1W4 1I7 1W5 1W6 1W7\n"
            "rank 2: 2F0 2F1 2F2 2I0 2F3 2I1 2F4 2I2 2F5 2I3 2F6 2I4 2W0 2F7 2I5 2W1 2I6 2W2 "
            "2I7 2W3 2W4 2W5 2W6 2W7\n"
            "rank 3: 3F0 3I0 3F1 3I1 3F2 3I2 3F3 3I3 3F4 3I4 3F5 3I5 3F6 3I6 3W0 3F7 3I7 3W1 "
            "3W2 3W3 3W4 3W5 3W6 3W7\n");
}

TEST(ZBH2, FewerMicrobatchesThanTheWarmupCapIt) {
  EXPECT_EQ(Generate("ZB-H2", 2, 2),
            "rank 0: 0F0 0F1 0I0 0W0 0I1 0W1\n"
            "rank 1: 1F0 1I0 1F1 1I1 1W0 1W1\n");
}

TEST(ZBV, MatchesTorchZBVZeroBubbleOrder) {
  EXPECT_EQ(
      Generate("ZB-V", 4, 8, 2),
      "rank 0: 0F0 0F1 0F2 0F3 0F4 0F5 0F6 7F0 7I0 7W0 7F1 7I1 7W1 7F2 7I2 7W2 7F3 7I3 7W3 0F7 "
      "0I0 0W0 7F4 7I4 7W4 0I1 0W1 7F5 7I5 7W5 0I2 0W2 7F6 7I6 7W6 0I3 0W3 7F7 7I7 7W7 0I4 0W4 "
      "0I5 0W5 0I6 0W6 0I7 0W7\n"
      "rank 1: 1F0 1F1 1F2 1F3 1F4 6F0 1F5 6F1 6I0 6W0 6F2 6I1 6W1 6F3 6I2 6W2 1F6 1I0 1W0 6F4 "
      "6I3 6W3 1F7 1I1 1W1 6F5 6I4 6W4 1I2 1W2 6F6 6I5 6W5 1I3 1W3 6F7 6I6 6W6 1I4 6I7 1I5 1W4 "
      "1I6 1W5 1I7 1W6 6W7 1W7\n"
      "rank 2: 2F0 2F1 2F2 5F0 2F3 5F1 2F4 5F2 5I0 5W0 5F3 5I1 5W1 2F5 2I0 2W0 5F4 5I2 5W2 2F6 "
      "2I1 2W1 5F5 5I3 5W3 2F7 2I2 2W2 5F6 5I4 5W4 2I3 2W3 5F7 5I5 5W5 2I4 5I6 2I5 5I7 2I6 2W4 "
      "2I7 2W5 5W6 5W7 2W6 2W7\n"
      "rank 3: 3F0 4F0 3F1 4F1 3F2 4F2 3F3 4F3 4I0 4W0 3F4 3I0 3W0 4F4 4I1 4W1 3F5 3I1 3W1 4F5 "
      "4I2 4W2 3F6 3I2 3W2 4F6 4I3 4W3 3F7 3I3 3W3 4F7 4I4 4W4 3I4 4I5 3I5 4I6 3I6 4I7 3I7 3W4 "
      "4W5 4W6 4W7 3W5 3W6 3W7\n");
  EXPECT_EQ(Generate("ZB-V", 1, 2, 2), "rank 0: 0F0 1F0 1I0 1W0 0F1 0I0 0W0 1F1 1I1 1W1 0I1 0W1\n");
}

TEST(ZBV, FewerMicrobatchesThanTwoPMinusOneDropTheExtrasAsTorchDoes) {
  EXPECT_EQ(Generate("ZB-V", 4, 3, 2),
            "rank 0: 0F0 0F1 0F2 7F0 7I0 7W0 7F1 7I1 7W1 7F2 7I2 7W2 0I0 0W0 0I1 0W1 0I2 0W2\n"
            "rank 1: 1F0 1F1 1F2 6F0 6F1 6I0 6W0 6F2 6I1 6W1 6I2 6W2 1I0 1W0 1I1 1W1 1I2 1W2\n"
            "rank 2: 2F0 2F1 2F2 5F0 5F1 5F2 5I0 5W0 5I1 5W1 2I0 2W0 5I2 5W2 2I1 2W1 2I2 2W2\n"
            "rank 3: 3F0 4F0 3F1 4F1 3F2 4F2 4I0 4W0 3I0 3W0 4I1 4W1 3I1 3W1 4I2 4W2 3I2 3W2\n");
  EXPECT_EQ(Generate("ZB-V", 2, 1, 2),
            "rank 0: 0F0 3F0 3I0 3W0 0I0 0W0\n"
            "rank 1: 1F0 2F0 2I0 2W0 1I0 1W0\n");
}

TEST(ZBV, DefaultsToTwoStagesPerRankInVPlacement) {
  Schedule s;
  ASSERT_TRUE(GenerateSchedule("ZB-V", ScheduleParams{4, 0, 8}, &s).ok());
  EXPECT_EQ(s.num_stages, 8);
  const std::vector<int32_t> want = {0, 1, 2, 3, 3, 2, 1, 0};
  ASSERT_EQ(s.stage_to_rank.size(), want.size());
  for (size_t stage = 0; stage < want.size(); ++stage) {
    EXPECT_EQ(s.stage_to_rank[stage].value(), want[stage]) << "stage " << stage;
  }
  EXPECT_EQ(FormatScheduleText(s), Generate("ZB-V", 4, 8, 2));
}

TEST(ZeroBubble, RejectsWhatCannotBeBuiltNamingTheRule) {
  EXPECT_EQ(Rejection("ZB-V", 4, 8, 3), "ZB-V needs exactly 2 stages per rank; got 3");
  EXPECT_EQ(Rejection("ZB-V", 4, 8, 1), "ZB-V needs exactly 2 stages per rank; got 1");
  EXPECT_EQ(Rejection("ZB-V", 0, 8, 2), "ZB-V needs at least 1 rank; got 0");
  EXPECT_EQ(Rejection("ZB-V", 4, 0, 2), "ZB-V needs at least 1 microbatch; got 0");
  EXPECT_EQ(Rejection("ZB-H1", 4, 8, 2), "ZB-H1 has one stage per rank; got 2");
  EXPECT_EQ(Rejection("ZB-H2", 4, 8, 2), "ZB-H2 has one stage per rank; got 2");
  EXPECT_EQ(Rejection("ZB-H1", 0, 8, 1), "ZB-H1 needs at least 1 rank; got 0");
  EXPECT_EQ(Rejection("ZB-H2", 4, 0, 1), "ZB-H2 needs at least 1 microbatch; got 0");
}

// Uniform or per-stage F, I and W on the ideal platform; M_B = 2 bytes and M_W = 1 byte, so the
// paper's peaks in units of M_B come out doubled.
proto::RunConfig SplitSpec(const std::string& schedule, int32_t p, int32_t m, int32_t v,
                  const std::string& f, const std::string& i, const std::string& w,
                  EngineKind engine) {
  proto::RunConfig spec;
  spec.set_schedule(schedule);
  spec.set_pp(p);
  spec.set_stages_per_rank(v);
  spec.set_microbatches(m);
  spec.set_f(f);
  spec.set_i(i);
  spec.set_w(w);
  spec.set_activation("2");
  spec.set_activation_w("1");
  spec.set_platform("ideal");
  SetEngine(&spec, engine);
  return spec;
}

void ExpectSpans(const RunResult& r, const std::vector<double>& want) {
  const std::vector<double> spans = Spans(r);
  ASSERT_EQ(spans.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(spans[k], want[k], 1e-9) << "rank " << k;
}

class ZeroBubbleCases : public ::testing::TestWithParam<EngineKind> {};

TEST_P(ZeroBubbleCases, Case3UnevenStagesZBH1) {
  const RunResult r =
      RunOk(SplitSpec("ZB-H1", 4, 8, 1, "1,1,2,1", "1,1,2,1", "1,1,2,1", GetParam()));
  EXPECT_NEAR(r.metrics.makespan_s, 50, 1e-9);
}

TEST_P(ZeroBubbleCases, Case5ZBH1UniformStages) {
  const RunResult r = RunOk(SplitSpec("ZB-H1", 4, 8, 1, "1", "1", "1", GetParam()));
  EXPECT_NEAR(r.metrics.makespan_s, 27, 1e-9);
  ExpectSpans(r, {27, 26, 25, 24});
  EXPECT_EQ(Peaks(r), (std::vector<int64_t>{8, 7, 6, 5}));  // [4, 3.5, 3, 2.5] M_B
  EXPECT_NEAR(RunOk(SplitSpec("ZB-H1", 4, 8, 1, "1", "2", "1", GetParam())).metrics.makespan_s, 38,
              1e-9);
  EXPECT_NEAR(RunOk(SplitSpec("ZB-H1", 8, 16, 1, "1", "2", "1", GetParam())).metrics.makespan_s, 78,
              1e-9);
}

TEST_P(ZeroBubbleCases, Case6ZBH2EveryStageBusyForItsWholeSpan) {
  const RunResult r = RunOk(SplitSpec("ZB-H2", 4, 8, 1, "1", "1", "1", GetParam()));
  EXPECT_NEAR(r.metrics.makespan_s, 27, 1e-9);
  ExpectSpans(r, {24, 24, 24, 24});
  EXPECT_EQ(Peaks(r), (std::vector<int64_t>{14, 12, 10, 8}));  // [7, 6, 5, 4] M_B
}

TEST_P(ZeroBubbleCases, Case7ZBV) {
  // F = I = W = 1 and M_B = 1 per virtual stage: given per virtual stage.
  proto::RunConfig spec = SplitSpec("ZB-V", 4, 8, 2, "1", "1", "1", GetParam());
  spec.set_costs_per("virtual-stage");
  spec.set_activation("1");
  spec.clear_activation_w();
  const RunResult r = RunOk(spec);
  EXPECT_NEAR(r.metrics.makespan_s, 51, 1e-9);
  ExpectSpans(r, {48, 48, 48, 48});
  EXPECT_EQ(Peaks(r), (std::vector<int64_t>{8, 8, 8, 8}));
}

struct Costs {
  double f, i, w;
};
constexpr Costs kCosts[] = {{1, 1, 1}, {1, 2, 1}, {2, 3, 1}, {1.5, 1, 0.5}};

TEST_P(ZeroBubbleCases, ZBH1MatchesThePapersClosedForms) {
  for (const auto& [p, m] : {std::pair{2, 4}, std::pair{3, 5}, std::pair{6, 12}, std::pair{8, 8}}) {
    for (const Costs& c : kCosts) {
      const RunResult r = RunOk(SplitSpec("ZB-H1", p, m, 1, std::to_string(c.f),
                                          std::to_string(c.i), std::to_string(c.w), GetParam()));
      EXPECT_NEAR(r.metrics.makespan_s, m * (c.f + c.i + c.w) + (p - 1) * (c.f + c.i - c.w), 1e-9)
          << "p=" << p << " m=" << m << " F=" << c.f << " I=" << c.i << " W=" << c.w;
      std::vector<int64_t> peaks;
      for (int32_t stage = 1; stage <= p; ++stage) {
        peaks.push_back(2 * (p - stage + 1) + (stage - 1));
      }
      EXPECT_EQ(Peaks(r), peaks) << "p=" << p << " m=" << m;
    }
  }
}

TEST_P(ZeroBubbleCases, ZBH2MatchesThePapersClosedForms) {
  for (const auto& [p, m] : {std::pair{2, 3}, std::pair{3, 8}, std::pair{4, 7}, std::pair{6, 16}}) {
    for (const Costs& c : kCosts) {
      const RunResult r = RunOk(SplitSpec("ZB-H2", p, m, 1, std::to_string(c.f),
                                          std::to_string(c.i), std::to_string(c.w), GetParam()));
      const std::vector<double> spans = Spans(r);
      ASSERT_FALSE(spans.empty());
      EXPECT_NEAR(*std::max_element(spans.begin(), spans.end()),
                  m * (c.f + c.i + c.w) + (p - 1) * (c.f + c.i - 2 * c.w), 1e-9)
          << "p=" << p << " m=" << m << " F=" << c.f << " I=" << c.i << " W=" << c.w;
      std::vector<int64_t> peaks;
      for (int32_t stage = 1; stage <= p; ++stage) {
        peaks.push_back(2 * (2 * p - 2 * stage + 1) + (2 * stage - 2));
      }
      EXPECT_EQ(Peaks(r), peaks) << "p=" << p << " m=" << m;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothEngines, ZeroBubbleCases, ::testing::ValuesIn(kBothEngines),
                         [](const auto& info) {
                           return info.param == EngineKind::kSimGrid ? "SimGrid" : "CriticalPath";
                         });

}  // namespace
}  // namespace ppsim
