// The results schema (batch/results.h): what the sweep writes reads back, and what is not a
// result is named by line.
#include "batch/results.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/results.h"

namespace ppsim {
namespace {

constexpr const char* kHeader =
    "point,schedule,makespan_s,bubble_over_makespan,bubble_over_ideal,stage_bubble_rate,"
    "throughput_microbatches_per_s,samples_per_s,tokens_per_s,mfu,hfu,peak_memory_bytes,"
    "static_memory_bytes,memory_capacity_bytes,oom,time_to_train_s,gpu_hours,cost,status,error,"
    "wall_s\n";

// 8 microbatches of 2 sequences of 4096 tokens in 12.5 ms on 8 GPUs with a model, no
// recomputation (no hfu), 86400 s to train on --train-tokens, no --gpu-hour-cost (no cost).
PointOutcome Ok() {
  PointOutcome o;
  o.values[kMakespanColumn] = 0.0125;
  o.values[kBubbleColumn] = 0.25;
  o.values[kBubbleOverIdealColumn] = 1.0 / 3;  // 0.25 / (1 - 0.25)
  o.values[kStageBubbleColumn] = 0.2;
  o.values[kThroughputColumn] = 640;         // 8 / 0.0125
  o.values[kSamplesColumn] = 1280;           // 640 x 2
  o.values[kTokensColumn] = 5242880;         // 1280 x 4096
  o.values[kMfuColumn] = 0.4;
  o.values[kPeakMemoryColumn] = 1 << 30;
  o.values[kStaticMemoryColumn] = 1 << 20;
  o.values[kCapacityColumn] = 80.0 * (1 << 30);  // 85899345920
  o.values[kTimeToTrainColumn] = 86400;
  o.values[kGpuHoursColumn] = 192;  // 8 GPUs x 24 h
  o.wall_s = 0.5;
  o.result = "{\"schedule\": \"1F1B\", \"makespan_s\": 0.0125}";
  return o;
}

constexpr const char* kOkRow =
    "0,1F1B,0.0125,0.25,0.3333333333333333,0.2,640,1280,5242880,0.4,,1073741824,1048576,"
    "85899345920,false,86400,192,,ok,,0.5\n";

TEST(Results, WrittenRowsReadBack) {
  PointOutcome failed;
  failed.status = PointStatus::kFailed;
  failed.error = "deadlock, \"at\" rank 0";
  failed.wall_s = 1;
  const std::string csv = ResultsHeader({"schedule"}) + "\n" +
                          ResultCsvLine(0, {"1F1B"}, Ok()) + "\n" +
                          ResultCsvLine(1, {"a,b"}, failed) + "\n";
  EXPECT_EQ(csv, std::string(kHeader) + kOkRow +
                     "1,\"a,b\",,,,,,,,,,,,,,,,,failed,\"deadlock, \"\"at\"\" rank 0\",1\n");
  ResultsTable table;
  ASSERT_TRUE(ReadResultsCsv(csv, "r.csv", &table).ok());
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.Axes(), std::vector<std::string>{"schedule"});
  // Every value of the ok row reads back; the empty optional cells are none.
  EXPECT_EQ(table.rows[0].values, Ok().values);
  EXPECT_EQ(table.rows[0].values[kPeakMemoryColumn], 1073741824.0);
  EXPECT_EQ(table.rows[0].values[kCapacityColumn], 85899345920.0);
  EXPECT_FALSE(table.rows[0].values[kHfuColumn].has_value());
  EXPECT_FALSE(table.rows[0].values[kCostColumn].has_value());
  EXPECT_FALSE(table.rows[0].oom);
  EXPECT_EQ(table.CsvLine(table.rows[0]) + "\n", kOkRow);
  EXPECT_EQ(table.rows[1].status, PointStatus::kFailed);
  EXPECT_EQ(table.CsvLine(table.rows[1]), ResultCsvLine(1, {"a,b"}, failed));

  const std::string json = ResultJsonLine(0, {"schedule"}, {"1F1B"}, Ok()) + "\n" +
                           ResultJsonLine(1, {"schedule"}, {"a,b"}, failed) + "\n";
  EXPECT_EQ(json,
            "{\"point\": 0, \"values\": {\"schedule\": \"1F1B\"}, \"status\": \"ok\", \"error\": "
            "\"\", \"wall_s\": 0.5, \"result\": {\"schedule\": \"1F1B\", \"makespan_s\": 0.0125}}\n"
            "{\"point\": 1, \"values\": {\"schedule\": \"a,b\"}, \"status\": \"failed\", \"error\": "
            "\"deadlock, \\\"at\\\" rank 0\", \"wall_s\": 1}\n");
  // An ok outcome without the run's JSON (never sent by a point's process) still writes JSON.
  PointOutcome bare = Ok();
  bare.result.clear();
  EXPECT_EQ(ResultJsonLine(0, {"schedule"}, {"1F1B"}, bare),
            "{\"point\": 0, \"values\": {\"schedule\": \"1F1B\"}, \"status\": \"ok\", "
            "\"error\": \"\", \"wall_s\": 0.5, \"result\": null}");
  std::vector<std::string> axes;
  std::vector<ResultJsonRow> rows;
  ASSERT_TRUE(ReadResultsJsonLines(json, "r.jsonl", &axes, &rows).ok());
  EXPECT_EQ(axes, std::vector<std::string>{"schedule"});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].point, 1);
  EXPECT_EQ(rows[1].status, PointStatus::kFailed);
}

TEST(Results, APointProcessOutcomeRoundTrips) {
  PointOutcome o = Ok();
  o.values[kMakespanColumn] = 0.1 + 0.2;  // not a short decimal
  o.oom = true;
  PointOutcome back;
  ASSERT_TRUE(ParsePointOutcome(SerializePointOutcome(o), &back));
  EXPECT_EQ(back.values, o.values);
  EXPECT_FALSE(back.values[kHfuColumn].has_value());
  EXPECT_TRUE(back.oom);
  EXPECT_EQ(back.result, o.result);
  EXPECT_FALSE(ParsePointOutcome("{\"status\": \"ok\"}", &back));
  EXPECT_FALSE(ParsePointOutcome("not json", &back));
  // A torn result is not an outcome.
  const std::string whole = SerializePointOutcome(o);
  EXPECT_FALSE(ParsePointOutcome(whole.substr(0, whole.size() - 1), &back));
  EXPECT_FALSE(ParsePointOutcome(whole.substr(0, whole.find('\n')), &back));
  // An ok outcome without a value every run has is not one.
  PointOutcome lacking = Ok();
  lacking.values[kSamplesColumn].reset();
  EXPECT_FALSE(ParsePointOutcome(SerializePointOutcome(lacking), &back));
  // A failed one has none.
  PointOutcome failed;
  failed.status = PointStatus::kFailed;
  failed.error = "deadlock";
  ASSERT_TRUE(ParsePointOutcome(SerializePointOutcome(failed), &back));
  EXPECT_EQ(back.status, PointStatus::kFailed);
  EXPECT_EQ(back.values, ResultValues());
}

// On an ok row the optional columns may be empty or numbers, the others must be numbers; each
// bad cell is named with the column and what it may hold.
TEST(Results, OptionalColumnsMayBeEmptyButNotText) {
  const std::string ok = kOkRow;
  auto with = [&](int point, int column, const std::string& text) {
    // The cells of kOkRow after point and schedule, one of them replaced.
    std::vector<std::string> cells;
    std::string rest = ok.substr(7, ok.size() - 8);  // after "0,1F1B,", without the line break
    for (size_t at = 0;;) {
      const size_t comma = rest.find(',', at);
      cells.push_back(rest.substr(at, comma - at));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    cells[column] = text;
    std::string row = std::to_string(point) + ",1F1B";
    for (const std::string& cell : cells) row += "," + cell;
    return row + "\n";
  };
  const std::string csv = std::string(kHeader) + with(0, kTokensColumn, "") +
                          with(1, kCostColumn, "4.5") + with(2, kMfuColumn, "high") +
                          with(3, kSamplesColumn, "") + with(4, kCapacityColumn, "80GiB");
  ResultsTable table;
  EXPECT_EQ(ReadResultsCsv(csv, "r.csv", &table).message(),
            "r.csv:4: mfu 'high' is not a number; mfu is a number, or empty when the run has none\n"
            "r.csv:5: samples_per_s '' is not a number; an ok row has a number in each metric "
            "column but tokens_per_s, mfu, hfu, time_to_train_s, gpu_hours and cost, which may "
            "be empty\n"
            "r.csv:6: memory_capacity_bytes '80GiB' is not a number; an ok row has a number in "
            "each metric column but tokens_per_s, mfu, hfu, time_to_train_s, gpu_hours and cost, "
            "which may be empty");
  ASSERT_TRUE(ReadResultsCsv(std::string(kHeader) + with(0, kTokensColumn, "") +
                                 with(1, kCostColumn, "4.5"),
                             "r.csv", &table)
                  .ok());
  EXPECT_FALSE(table.rows[0].values[kTokensColumn].has_value());
  EXPECT_EQ(table.rows[1].values[kCostColumn], 4.5);
}

TEST(Results, HeaderNamesEveryColumnInOrder) {
  EXPECT_EQ(ResultsHeader({"schedule"}) + "\n", kHeader);
  ResultsTable table;
  EXPECT_EQ(ReadResultsCsv("point,pp,makespan_s,bubble_over_makespan,stage_bubble_rate,"
                           "bubble_over_ideal\n",
                           "r.csv", &table)
                .message(),
            "r.csv:1: column 5 is 'stage_bubble_rate', expected 'bubble_over_ideal'; a results "
            "CSV has point, the swept axes, then makespan_s, bubble_over_makespan, "
            "bubble_over_ideal, stage_bubble_rate, throughput_microbatches_per_s, samples_per_s, "
            "tokens_per_s, mfu, hfu, peak_memory_bytes, static_memory_bytes, "
            "memory_capacity_bytes, oom, time_to_train_s, gpu_hours, cost, status, error, wall_s");
}

TEST(Results, ResumeDropsBadRowsAndATornLastLine) {
  std::string bad = kOkRow;
  bad.replace(0, 13, "1,1F1B,x");  // "0,1F1B,0.0125" with the makespan "x"
  const std::string csv = std::string(kHeader) + kOkRow + bad +
                          "2,GPipe,,,,,,,,,,,,,,,,,skipped,why,0\n"
                          "3,GPipe,0.01";
  ResultsTable table;
  EXPECT_EQ(ReadResultsCsv(csv, "r.csv", &table).message(),
            "r.csv:3: makespan_s 'x' is not a number; an ok row has a number in each metric "
            "column but tokens_per_s, mfu, hfu, time_to_train_s, gpu_hours and cost, which may "
            "be empty\nr.csv:5: 3 fields, expected 21");
  std::vector<std::string> dropped;
  ASSERT_TRUE(ReadResultsCsv(csv, "r.csv", &table, &dropped).ok());
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[1].point, 2);
  EXPECT_EQ(dropped, (std::vector<std::string>{
                         "r.csv:5: torn last line (no line break)",
                         "r.csv:3: makespan_s 'x' is not a number; an ok row has a number in "
                         "each metric column but tokens_per_s, mfu, hfu, time_to_train_s, "
                         "gpu_hours and cost, which may be empty"}));
}

TEST(Results, JsonLinesAreCheckedLineByLine) {
  std::vector<std::string> axes = {"schedule"};
  std::vector<ResultJsonRow> rows;
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  const std::string text =
      "{\"point\": 0, \"values\": {\"schedule\": \"1F1B\"}, \"status\": \"ok\", \"error\": \"\", "
      "\"wall_s\": 1}\n"
      "{\"point\": -1}\n"
      "{\"point\": 2, \"values\": {\"pp\": \"4\"}, \"status\": \"ok\"}\n" +
      deep + "\n" + "{\"point\": 4,\n";
  EXPECT_EQ(ReadResultsJsonLines(text, "r.jsonl", &axes, &rows).message(),
            "r.jsonl:1: \"result\" is there exactly when status is ok\n"
            "r.jsonl:2: \"point\" is not a whole number >= 0\n"
            "r.jsonl:3: \"values\" are not this sweep's axes\n"
            "r.jsonl:4: nested more than 64 deep; a results line is flat\n"
            "r.jsonl:5: not valid JSON; each line is one JSON object");
  EXPECT_TRUE(rows.empty());
}

TEST(Results, ARunCsvReadsAsATableOfOneAxis) {
  // 16 microbatches on 2 replicas in 0.5 s: 64 microbatches/s; 2 ranks out of memory.
  const std::string csv = std::string(kRunCsvHeader) +
                          "ZB-H1,4,4,16,h100-node,simgrid,0.5,0.1,0.125,0.05,0,1,2,3,"
                          "96636764160,85899345920,2,0.4,0.5,128,524288,86400,192,480,2,1,0,0,0\n";
  ResultsTable table;
  ASSERT_TRUE(ReadRunCsv(csv, "run.csv", &table).ok());
  EXPECT_EQ(ResultsHeader(table.Axes()), ResultsHeader({"schedule"}));
  EXPECT_EQ(table.header.size(), 21u);
  ASSERT_EQ(table.rows.size(), 1u);
  const ResultRow& row = table.rows[0];
  EXPECT_EQ(row.line, 2);
  EXPECT_EQ(row.point, 0);
  EXPECT_EQ(row.status, PointStatus::kOk);
  EXPECT_TRUE(row.oom);
  EXPECT_EQ(table.CsvLine(row),
            "0,ZB-H1,0.5,0.1,0.125,0.05,64,128,524288,0.4,0.5,96636764160,,85899345920,true,86400,"
            "192,480,ok,,");
  EXPECT_EQ(row.values[kThroughputColumn], 64.0);
  EXPECT_EQ(row.values[kHfuColumn], 0.5);
  EXPECT_FALSE(row.values[kStaticMemoryColumn].has_value());
}

TEST(Results, ARunCsvNamesWhatIsMissingOrWrong) {
  ResultsTable table;
  std::string header = kRunCsvHeader;
  header.replace(header.find("mfu,"), 4, "");
  EXPECT_EQ(ReadRunCsv(header, "run.csv", &table).message(),
            "run.csv:1: missing column 'mfu'; a run CSV (a run's CSV output) has schedule, "
            "microbatches, dp, oom_ranks, makespan_s, bubble_over_makespan, bubble_over_ideal, "
            "stage_bubble_rate, samples_per_s, tokens_per_s, mfu, hfu, peak_memory_bytes, "
            "memory_capacity_bytes, time_to_train_s, gpu_hours, cost");
  const std::string csv = std::string(kRunCsvHeader) +
                          "1F1B,4,4,8,ideal,simgrid,soon,0.1,0.125,0.05,0,1,2,3,1,0,0,,,16,,,,,1,"
                          "1,0,0,0\n"
                          "1F1B,4,4,8,ideal,simgrid,0.5,0.1,0.125,0.05,0,1,2,3,1,0,0,,,16,,,,,two,"
                          "1,0,0,0\n"
                          "GPipe,4\n";
  EXPECT_EQ(ReadRunCsv(csv, "run.csv", &table).message(),
            "run.csv:2: makespan_s 'soon' is not a number; an ok row has a number in each metric "
            "column but tokens_per_s, mfu, hfu, time_to_train_s, gpu_hours and cost, which may "
            "be empty\n"
            "run.csv:3: dp 'two' is not a whole number >= 0\n"
            "run.csv:4: 2 fields, expected 29");
  EXPECT_TRUE(table.rows.empty());
}

}  // namespace
}  // namespace ppsim
