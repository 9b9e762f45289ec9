// The zero-bubble automatic scheduler (schedules/zb_auto.h): ZB-1p, ZB-2p and ZB-auto.
//
// Expected values: the zero-bubble paper's Table 5 (arXiv 2401.10241v1 p. 8, = ICLR Table 5),
// whose ZB-1p and ZB-2p columns the authors computed with this heuristic from Table 9's profiled
// T_F, T_B, T_W and T_comm (v1 p. 16, = ICLR Table 6) and the memory deltas of their code
// (per layer M_B = 34h + 5as, M_W = 32h; Table 3's h, a, s): tests/validation, see SOURCES.md.
// Its 1F1B, ZB-H1 and ZB-H2 columns, from the same inputs, check the engines' timing of the same
// costs. Bubble rate = (longest stage span - m(T_F + T_B + T_W)) / longest stage span (§5.3).
// Uneven stages: the reference implementation's own orders (tests/data/zb_auto).
#include "schedules/zb_auto.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/files.h"
#include "schedules/registry.h"
#include "schedules/schedule_text.h"
#include "tests/support/runs.h"
#include "tests/support/schedules.h"

namespace ppsim {
namespace {

using Row = std::map<std::string, std::string>;

std::vector<Row> ReadValidationCsv(const std::string& name) {
  std::string text;
  const Status read = ReadFile(std::string(PPSIM_SOURCE_DIR) + "/tests/validation/" + name, &text);
  EXPECT_TRUE(read.ok()) << read.message();
  std::istringstream lines(text);
  std::string line;
  std::vector<std::string> header;
  std::vector<Row> rows;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::istringstream cell_stream(line);
    std::string cell;
    while (std::getline(cell_stream, cell, ',')) cells.push_back(cell);
    if (header.empty()) {
      header = cells;
      continue;
    }
    Row row;
    for (size_t k = 0; k < header.size() && k < cells.size(); ++k) row[header[k]] = cells[k];
    rows.push_back(row);
  }
  return rows;
}

// One setting of Table 5 with its Table 9 inputs.
struct Setting {
  std::string model;
  int32_t p = 0;
  int32_t m = 0;
  std::string f_ms, b_ms, w_ms, comm_ms;  // as printed
  int64_t mem_b = 0;                      // 34h + 5as
  int64_t mem_w = 0;                      // 32h
  Row rates;                              // Table 5's row
};

std::vector<Setting> Settings() {
  std::map<std::string, Row> setup;
  for (const Row& row : ReadValidationCsv("zero_bubble_setup.csv")) setup[row.at("model")] = row;
  std::map<std::pair<std::string, std::string>, Row> rates;
  for (const Row& row : ReadValidationCsv("zero_bubble_bubble_rates.csv")) {
    rates[{row.at("model"), row.at("microbatches_m")}] = row;
  }
  std::vector<Setting> settings;
  for (const Row& row : ReadValidationCsv("zero_bubble_profiled.csv")) {
    Setting s;
    s.model = row.at("model");
    s.p = std::stoi(row.at("stages_p"));
    s.m = std::stoi(row.at("microbatches_m"));
    s.f_ms = row.at("t_f_unit_not_stated");
    s.b_ms = row.at("t_b_unit_not_stated");
    s.w_ms = row.at("t_w_unit_not_stated");
    s.comm_ms = row.at("t_comm_unit_not_stated");
    const Row& model = setup.at(s.model);
    const int64_t h = std::stoll(model.at("hidden_size"));
    const int64_t a = std::stoll(model.at("attention_heads"));
    const int64_t seq = std::stoll(model.at("sequence_length"));
    s.mem_b = 34 * h + 5 * a * seq;
    s.mem_w = 32 * h;
    s.rates = rates.at({s.model, row.at("microbatches_m")});
    settings.push_back(s);
  }
  EXPECT_EQ(settings.size(), 12u);
  return settings;
}

// Table 9's milliseconds with three decimals as whole microseconds, as the reference's integer
// costs.
int64_t Micros(const std::string& ms) { return std::llround(std::stod(ms) * 1000); }

double Rounded4(double x) { return std::round(x * 1e4) / 1e4; }

TEST(ZeroBubbleAuto, HeuristicSpanGivesTable5ZB1pAndZB2p) {
  for (const Setting& s : Settings()) {
    for (const auto& [pending, column] :
         {std::pair{1, "bubble_rate_zb_1p_fraction"}, std::pair{2, "bubble_rate_zb_2p_fraction"}}) {
      std::vector<ZeroBubbleStage> stages(s.p);
      for (ZeroBubbleStage& stage : stages) {
        stage = {Micros(s.f_ms),
                 Micros(s.b_ms),
                 Micros(s.w_ms),
                 Micros(s.comm_ms),
                 s.mem_b,
                 s.mem_w,
                 int64_t{pending} * s.p * s.mem_b};
      }
      Schedule schedule;
      ZeroBubbleAutoResult result;
      const Status status = GenerateZeroBubbleAuto("ZB-auto", ScheduleParams{s.p, 0, s.m}, stages,
                                                   &schedule, &result);
      ASSERT_TRUE(status.ok()) << status.message();
      ASSERT_TRUE(CheckSchedule(schedule).ok());
      const double work =
          s.m * static_cast<double>(stages[0].forward_ticks + stages[0].backward_input_ticks +
                                    stages[0].backward_weight_ticks);
      const double rate =
          (static_cast<double>(result.span_ticks) - work) / static_cast<double>(result.span_ticks);
      EXPECT_DOUBLE_EQ(Rounded4(rate), std::stod(s.rates.at(column)))
          << s.model << " p=" << s.p << " m=" << s.m << " " << pending << "p: " << rate;
    }
  }
}

// The reference's orders for configurations whose stages all differ (tests/data/zb_auto).
TEST(ZeroBubbleAuto, MatchesTheReferenceOnUnevenStages) {
  std::string text;
  ASSERT_TRUE(
      ReadFile(std::string(PPSIM_SOURCE_DIR) + "/tests/data/zb_auto/reference.txt", &text).ok());
  std::istringstream lines(text);
  std::string line;
  int cases = 0;
  while (std::getline(lines, line)) {
    if (!line.starts_with("case ")) continue;
    int32_t p = 0, m = 0;
    int64_t comm = 0, k = 0, span = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "case p %d m %d comm %ld k %ld span %ld", &p, &m, &comm, &k,
                          &span),
              5)
        << line;
    std::vector<ZeroBubbleStage> stages(p);
    for (ZeroBubbleStage& stage : stages) {
      ASSERT_TRUE(std::getline(lines, line));
      int32_t s = 0;
      ASSERT_EQ(std::sscanf(line.c_str(), "stage %d f %ld i %ld w %ld mb %ld mw %ld", &s,
                            &stage.forward_ticks, &stage.backward_input_ticks,
                            &stage.backward_weight_ticks, &stage.activation_bytes,
                            &stage.activation_w_bytes),
                6)
          << line;
      stage.transfer_ticks = comm;
      stage.limit_bytes = k * p * stage.activation_bytes;
    }
    std::string want;
    for (int32_t s = 0; s < p; ++s) {
      ASSERT_TRUE(std::getline(lines, line));
      want += line + "\n";
    }
    Schedule schedule;
    ZeroBubbleAutoResult result;
    const Status status =
        GenerateZeroBubbleAuto("ZB-auto", ScheduleParams{p, 0, m}, stages, &schedule, &result);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(FormatScheduleText(schedule), want) << "case " << cases;
    EXPECT_EQ(result.span_ticks, span) << "case " << cases;
    ++cases;
  }
  EXPECT_EQ(cases, 40);
}

// The same settings as runs: each schedule's stage bubble rate on both engines, with T_comm the
// latency of every transfer.
class ZeroBubbleTable5 : public ::testing::TestWithParam<EngineKind> {};

TEST_P(ZeroBubbleTable5, RunsReproduceEveryColumnPpsimHas) {
  for (const Setting& s : Settings()) {
    for (const auto& [schedule, column] : {std::pair{"ZB-1p", "bubble_rate_zb_1p_fraction"},
                                           std::pair{"ZB-2p", "bubble_rate_zb_2p_fraction"},
                                           std::pair{"ZB-H1", "bubble_rate_zb_h1_fraction"},
                                           std::pair{"ZB-H2", "bubble_rate_zb_h2_fraction"},
                                           std::pair{"1F1B", "bubble_rate_1f1b_fraction"}}) {
      proto::RunConfig config;
      config.set_schedule(schedule);
      config.set_pp(s.p);
      config.set_microbatches(s.m);
      config.set_f(s.f_ms + "ms");
      config.set_i(s.b_ms + "ms");
      config.set_w(s.w_ms + "ms");
      config.set_activation(std::to_string(s.mem_b));
      config.set_activation_w(std::to_string(s.mem_w));
      config.set_platform("ideal");
      config.set_p2p_latency(s.comm_ms + "ms");
      SetEngine(&config, GetParam());
      const RunResult r = RunOk(config);
      EXPECT_DOUBLE_EQ(Rounded4(r.metrics.stage_bubble_rate), std::stod(s.rates.at(column)))
          << schedule << " " << s.model << " p=" << s.p << " m=" << s.m << ": "
          << r.metrics.stage_bubble_rate;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothEngines, ZeroBubbleTable5, ::testing::ValuesIn(kBothEngines),
                         [](const auto& info) {
                           return info.param == EngineKind::kSimGrid ? "SimGrid" : "CriticalPath";
                         });

}  // namespace
}  // namespace ppsim
