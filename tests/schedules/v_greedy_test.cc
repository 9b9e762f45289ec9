// V-Half and V-Min against their authors. The orders and spans are sail-sg's reference
// implementation's (tests/data/v_greedy, from v_schedule_greedy.py at tag zero-bubble-v0.1.0; see
// the README there). The memory and bubble claims are the authors' closed forms:
//   - activation memory, in microbatches of a rank's share: 1F1B p, V-Half (p + 2) // 2,
//     V-Min (p + 4) // 3 (the authors' demo of the paper, huggingface.co/spaces/sail/
//     pipeline-parallelism-with-controllable-memory, description1.md @ abf8fd0, "Activation
//     Memory (by #micro-batch)"); 1/2x and 1/3x of 1F1B in the repository's README table at
//     zero-bubble-v0.1.0;
//   - bubble, same README table: 1F1B B = (p - 1) / (m + p - 1), V-Half B / 2, V-Min 2B / 3 plus
//     an O(n) overhead; at equal work 1F1B's longest span idles (p - 1)(F + B), the closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "base/files.h"
#include "schedules/generator.h"
#include "schedules/registry.h"
#include "sim/metrics.h"
#include "tests/support/runs.h"
#include "tests/support/schedules.h"

namespace ppsim {
namespace {

const char* const kNames[] = {"V-Half", "V-Min"};

// One configuration of tests/data/v_greedy/<name>.txt.
struct Reference {
  int32_t p = 0;
  int32_t m = 0;
  int32_t span = 0;   // Longest rank span at F = I = W = 1 per virtual stage, free transfers.
  std::string order;  // The ranks' orders in the text IR.
};

std::vector<Reference> ReadReferences(const std::string& name) {
  std::string text;
  const std::string path = std::string(PPSIM_SOURCE_DIR) + "/tests/data/v_greedy/" + name + ".txt";
  EXPECT_TRUE(ReadFile(path, &text).ok()) << "the reference orders are part of the repository";
  std::vector<Reference> refs;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("p ", 0) == 0) {
      Reference ref;
      std::istringstream fields(line);
      std::string p, m, span;
      fields >> p >> ref.p >> m >> ref.m >> span >> ref.span;
      refs.push_back(ref);
    } else if (!refs.empty()) {
      refs.back().order += line + "\n";
    }
  }
  return refs;
}

ScheduleParams Params(int32_t p, int32_t m, int32_t v = 2) { return ScheduleParams{p, v, m}; }

TEST(VGreedy, OrdersAreTheReferenceImplementations) {
  for (const char* name : kNames) {
    const std::vector<Reference> refs = ReadReferences(name);
    ASSERT_EQ(refs.size(), 24u) << name;
    for (const Reference& ref : refs) {
      EXPECT_EQ(GenerateText(name, Params(ref.p, ref.m)), ref.order)
          << name << " p=" << ref.p << " m=" << ref.m;
    }
  }
}

TEST(VGreedy, PlacesStagesInAV) {
  Schedule s;
  ASSERT_TRUE(GenerateVMin(Params(3, 4), &s).ok());
  EXPECT_EQ(s.num_stages, 6);
  EXPECT_EQ(s.stage_to_rank, (std::vector<RankIndex>{RankIndex(0), RankIndex(1), RankIndex(2),
                                                     RankIndex(2), RankIndex(1), RankIndex(0)}));
  EXPECT_EQ(GenerateText("V-Half", Params(4, 8, 0)), GenerateText("V-Half", Params(4, 8, 2)));
}

TEST(VGreedy, EveryConfigurationPassesCheckSchedule) {
  // GenerateSchedule runs CheckSchedule; GenerateText expects it to succeed.
  for (const char* name : kNames) {
    for (int32_t p = 2; p <= 8; ++p) {
      for (int32_t m : {1, 2, 3, 5, 8, p - 1, 2 * p, 3 * p + 1}) {
        if (m < 1) continue;
        Schedule s;
        const Status status = GenerateSchedule(name, Params(p, m), &s);
        EXPECT_TRUE(status.ok()) << name << " p=" << p << " m=" << m << ": " << status.message();
        EXPECT_EQ(s.NumActions(), static_cast<size_t>(6 * p * m)) << name;
      }
    }
  }
}

TEST(VGreedy, RejectsWhatTheVPlacementCannotHold) {
  EXPECT_EQ(GenerateError("V-Half", Params(4, 8, 3)),
            "V-Half needs exactly 2 stages per rank; got 3");
  EXPECT_EQ(GenerateError("V-Min", Params(4, 8, 1)),
            "V-Min needs exactly 2 stages per rank; got 1");
  EXPECT_EQ(GenerateError("V-Half", Params(0, 8)), "V-Half needs at least 1 rank; got 0");
  EXPECT_EQ(GenerateError("V-Min", Params(4, 0)), "V-Min needs at least 1 microbatch; got 0");
}

// Activations per virtual stage: M_B = 1 (half of a rank's share, 2) and M_W = M_B, as the
// reference counts them (mem_of_stage: a chunk's activation lives from its F until its W).
StageCosts HalfShareActivations(int32_t stages, int64_t bytes) {
  StageCosts c;
  c.activation_bytes.assign(stages, bytes);
  c.activation_w_bytes.assign(stages, bytes);
  return c;
}

int64_t MaxPeak(const Schedule& s, int64_t bytes_per_stage) {
  const std::vector<int64_t> peaks =
      PeakActivationBytes(s, HalfShareActivations(s.num_stages, bytes_per_stage));
  return *std::max_element(peaks.begin(), peaks.end());
}

TEST(VGreedy, PeakActivationsAreTheAuthorsClosedFormsAtEqualWork) {
  for (int32_t p = 1; p <= 8; ++p) {
    for (int32_t m : {p, 2 * p, 3 * p}) {
      const std::string where = "p=" + std::to_string(p) + " m=" + std::to_string(m);
      Schedule one_f_one_b, half, min;
      ASSERT_TRUE(GenerateOneFOneB(ScheduleParams{p, 1, m}, &one_f_one_b).ok());
      ASSERT_TRUE(GenerateVHalf(Params(p, m), &half).ok());
      ASSERT_TRUE(GenerateVMin(Params(p, m), &min).ok());
      // A rank's share of activations is 2 bytes: 1F1B's stage holds all of it, a V chunk half.
      EXPECT_EQ(MaxPeak(one_f_one_b, 2), 2 * p) << where;
      EXPECT_EQ(MaxPeak(half, 1), 2 * ((p + 2) / 2)) << where;
      EXPECT_EQ(MaxPeak(min, 1), 2 * ((p + 4) / 3)) << where;
    }
  }
}

TEST(VGreedy, SpansAreTheReferencesOnBothEngines) {
  for (const char* name : kNames) {
    for (const Reference& ref : ReadReferences(name)) {
      if (ref.p < 2 || ref.m % ref.p != 0) continue;  // Keep the runs few.
      const std::string where =
          std::string(name) + " p=" + std::to_string(ref.p) + " m=" + std::to_string(ref.m);
      std::vector<double> spans_by_engine;
      for (EngineKind engine : kBothEngines) {
        // F = I = W = 2 for a rank's share: 1 per virtual stage, the reference's unit slot.
        proto::RunConfig spec = IdealRun(name, ref.p, ref.m, "2", "", engine);
        spec.set_stages_per_rank(2);
        spec.set_i("2");
        spec.set_w("2");
        const RunResult r = RunOk(spec);
        const std::vector<double> spans = Spans(r);
        const double longest = *std::max_element(spans.begin(), spans.end());
        EXPECT_NEAR(longest, ref.span, 1e-9) << where;
        if (ref.m >= 2 * ref.p) {
          // The README's claims against 1F1B's idle 6(p - 1) on its longest span at equal work
          // (the next test): V-Half idles at most half of it, V-Min at most two thirds.
          const double idle = longest - 6.0 * ref.m;
          const double share = std::string(name) == "V-Half" ? 1.0 / 2 : 2.0 / 3;
          EXPECT_LE(idle, share * 6.0 * (ref.p - 1) + 1e-9) << where;
        }
        // The zero-bubble papers' bubble rate: (S - busy) / S with busy = 6m.
        EXPECT_NEAR(r.metrics.stage_bubble_rate, (ref.span - 6.0 * ref.m) / ref.span, 1e-9)
            << where;
        spans_by_engine.insert(spans_by_engine.end(), spans.begin(), spans.end());
      }
      const size_t n = spans_by_engine.size() / 2;
      for (size_t r = 0; r < n; ++r) {
        EXPECT_NEAR(spans_by_engine[r], spans_by_engine[n + r], 1e-9) << where << " rank " << r;
      }
    }
  }
}

TEST(VGreedy, OneFOneBIdlesItsClosedFormAtEqualWork) {
  // The baseline of the README's bubble claims, at the V's work (F = 2, B = 4 per rank): rank 0's
  // span is the longest, 6(m + p - 1), so 6(p - 1) idle and the bubble rate B = (p - 1)/(m + p -
  // 1).
  for (EngineKind engine : kBothEngines) {
    const RunResult r = RunOk(IdealRun("1F1B", 4, 8, "2", "4", engine));
    const std::vector<double> spans = Spans(r);
    EXPECT_NEAR(*std::max_element(spans.begin(), spans.end()), 6.0 * (8 + 4 - 1), 1e-9);
    EXPECT_NEAR(r.metrics.stage_bubble_rate, 3.0 / 11, 1e-9);
  }
}

}  // namespace
}  // namespace ppsim
