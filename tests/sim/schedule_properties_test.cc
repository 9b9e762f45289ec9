// Properties every schedule must have over a grid of (p, m, v): each (stage, microbatch) has
// exactly one F and one backward, the order never deadlocks, the torch CSV and text forms read back
// as the same schedule with the same simulated metrics, and activation peaks equal the closed forms
// where one exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "schedules/registry.h"
#include "interop/torch_schedule_csv.h"
#include "schedules/schedule_text.h"
#include "schedules/zb_auto.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/task_graph.h"
#include "tests/support/platforms.h"

namespace ppsim {
namespace {

struct Config {
  int32_t p;
  int32_t m;
  int32_t v;
};

std::vector<Config> Grid() {
  std::vector<Config> grid;
  for (int32_t p : {1, 2, 3, 4, 6, 8}) {
    for (int32_t m : {1, 2, 3, 4, 5, 8, 12, 16, 24}) {
      for (int32_t v : {0, 1, 2, 3, 4}) grid.push_back({p, m, v});
    }
  }
  return grid;
}

// M_B = 2, M_W = 1 bytes per stage; uneven durations so that no two stages look alike.
StageCosts Costs(int32_t stages) {
  StageCosts c;
  for (int32_t s = 0; s < stages; ++s) {
    c.forward_s.push_back(1 + 0.125 * (s % 3));
    c.backward_input_s.push_back(1 + 0.25 * (s % 2));
    c.backward_weight_s.push_back(0.5 + 0.125 * (s % 4));
    c.backward_s.push_back(c.backward_input_s[s] + c.backward_weight_s[s]);
    c.activation_bytes.push_back(2);
    c.activation_w_bytes.push_back(1);
    c.message_bytes.push_back(1000 * (s + 1));
  }
  return c;
}

// Closed-form peak live activation per rank, in bytes with M_B = 2 and M_W = 1, or nothing.
std::optional<std::vector<int64_t>> ClosedFormPeaks(const std::string& name, const Config& c,
                                                    const Schedule& s) {
  const int32_t p = s.num_ranks;
  const int32_t m = c.m;
  std::vector<int64_t> peaks;
  for (int32_t r = 0; r < p; ++r) {
    const int32_t i = r + 1;  // 1-based stage of the zero-bubble paper
    if (name == "GPipe") {
      peaks.push_back(2 * m);
    } else if (name == "1F1B") {
      peaks.push_back(2 * std::min(p - r, m));
    } else if (name == "ZB-H1" && m >= p) {
      peaks.push_back(2 * (p - i + 1) + (i - 1));
    } else if (name == "ZB-H2" && m >= 2 * p - 1) {
      peaks.push_back(2 * (2 * p - 2 * i + 1) + (2 * i - 2));
    } else if (name == "DualPipe") {
      peaks.push_back(2 * (p + 1));
    } else if (name == "Megatron-Interleaved" || (name == "Interleaved1F1B" && m % p == 0)) {
      // Megatron's warmup of (p - r - 1) * 2 + (v - 1) * g chunk forwards (g = p; torch's
      // Interleaved1F1B has the same when p divides m), one more in the steady state, at most all
      // m * v. Rank 0 holds p + (p - 1)/v whole-rank activations, as the note's table says.
      const int32_t v = s.num_stages / p;
      const int32_t total = m * v;
      const int32_t warmup = std::min((p - r - 1) * 2 + (v - 1) * p, total);
      peaks.push_back(2 * std::min(warmup + 1, total));
    } else {
      return std::nullopt;
    }
  }
  return peaks;
}

// What the schedules found from costs know of Costs(p) on the platform of Simulate, with each
// stage's activations limited to 3 microbatches' (and at least the 1F1B warmup's 2 M_B).
std::vector<ZeroBubbleStage> ZeroBubbleStages(int32_t p) {
  const StageCosts c = Costs(p);
  auto ns = [](double s) { return std::llround(s * 1e9); };
  std::vector<ZeroBubbleStage> stages;
  for (int32_t s = 0; s < p; ++s) {
    stages.push_back({ns(c.forward_s[s]), ns(c.backward_input_s[s]), ns(c.backward_weight_s[s]),
                      ns(0.01 + static_cast<double>(c.message_bytes[s]) / 1e6),
                      c.activation_bytes[s], c.activation_w_bytes[s], 3 * 2});
  }
  return stages;
}

RunMetrics Simulate(const Schedule& s, const StageCosts& costs) {
  TaskGraph graph;
  const Status status = CompileTaskGraph(s, costs, &graph);
  EXPECT_TRUE(status.ok()) << status.message();
  const PlatformSpec platform = IdealPlatform(s.num_ranks, 0.01, 1e6);
  Timeline timeline;
  EXPECT_TRUE(RunCriticalPath(graph, platform, &timeline).ok());
  return ComputeMetrics(s, costs, graph, timeline);
}

void ExpectSameMetrics(const RunMetrics& a, const RunMetrics& b, const std::string& where) {
  EXPECT_EQ(a.makespan_s, b.makespan_s) << where;
  EXPECT_EQ(a.num_transfer_tasks, b.num_transfer_tasks) << where;
  ASSERT_EQ(a.ranks.size(), b.ranks.size()) << where;
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    EXPECT_EQ(a.ranks[r].span_s, b.ranks[r].span_s) << where;
    EXPECT_EQ(a.ranks[r].peak_activation_bytes, b.ranks[r].peak_activation_bytes) << where;
  }
}

class EverySchedule : public ::testing::TestWithParam<std::string> {};

TEST_P(EverySchedule, IsCompleteFeasibleRoundTripsAndMeetsClosedForms) {
  const std::string name = GetParam();
  int generated = 0;
  for (const Config& c : Grid()) {
    Schedule s;
    ScheduleParams params{c.p, c.v, c.m, 0};
    const std::vector<ZeroBubbleStage> zero_bubble = ZeroBubbleStages(c.p);
    if (FindSchedule(name)->needs_costs) params.stage_costs = &zero_bubble;
    if (!GenerateSchedule(name, params, &s).ok()) continue;
    ++generated;
    const std::string where = name + " p=" + std::to_string(c.p) + " m=" + std::to_string(c.m) +
                              " v=" + std::to_string(c.v);
    // GenerateSchedule ran CheckSchedule: one F and one backward per (stage, microbatch).
    const StageCosts costs = Costs(s.num_stages);
    const RunMetrics metrics = Simulate(s, costs);

    for (const bool csv : {true, false}) {
      Schedule back;
      const Status read = csv ? ParseScheduleTorchCsv(FormatScheduleTorchCsv(s), "t.csv", &back)
                              : ParseScheduleText(FormatScheduleText(s), "t.txt", &back);
      ASSERT_TRUE(read.ok()) << where << ": " << read.message();
      ASSERT_TRUE(CheckSchedule(back).ok()) << where;
      EXPECT_EQ(back.orders, s.orders) << where;
      EXPECT_EQ(back.stage_to_rank, s.stage_to_rank) << where;
      EXPECT_EQ(back.pipelines, s.pipelines) << where;
      ExpectSameMetrics(Simulate(back, costs), metrics, where + (csv ? " (csv)" : " (text)"));
    }

    if (auto peaks = ClosedFormPeaks(name, c, s)) {
      EXPECT_EQ(PeakActivationBytes(s, costs), *peaks) << where;
    }
    if (params.stage_costs != nullptr) {
      // Found within the limit (ZB-1p: p M_B, ZB-2p: 2p M_B, ZB-auto: as given).
      const int64_t limit = name == "ZB-1p" ? 2 * c.p : name == "ZB-2p" ? 4 * c.p : 3 * 2;
      for (int64_t peak : PeakActivationBytes(s, costs)) EXPECT_LE(peak, limit) << where;
    }
  }
  EXPECT_GT(generated, 5) << name << " accepted too few configurations of the grid";
}

std::vector<std::string> ScheduleNamesList() {
  std::vector<std::string> names;
  for (const ScheduleInfo& info : AllSchedules()) names.emplace_back(info.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(All, EverySchedule, ::testing::ValuesIn(ScheduleNamesList()),
                         [](const auto& info) {
                           std::string n = info.param;
                           n.erase(std::remove(n.begin(), n.end(), '-'), n.end());
                           return n;
                         });

}  // namespace
}  // namespace ppsim
