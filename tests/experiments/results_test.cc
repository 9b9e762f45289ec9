// The results schema (experiments/results.h): what the sweep writes reads back, and what is not a
// result is named by line.
#include "experiments/results.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ppsim {
namespace {

constexpr const char* kHeader =
    "point,schedule,makespan_s,bubble_over_makespan,stage_bubble_rate,"
    "throughput_microbatches_per_s,peak_memory_bytes,static_memory_bytes,oom,status,error,wall_s\n";

PointOutcome Ok() {
  PointOutcome o;
  o.makespan_s = 0.0125;
  o.bubble_over_makespan = 0.25;
  o.stage_bubble_rate = 0.2;
  o.throughput_microbatches_per_s = 640;
  o.peak_memory_bytes = 1 << 30;
  o.static_memory_bytes = 1 << 20;
  o.wall_s = 0.5;
  o.result = {{"schedule", "1F1B"}, {"makespan_s", 0.0125}};
  return o;
}

TEST(Results, WrittenRowsReadBack) {
  PointOutcome failed;
  failed.status = PointStatus::kFailed;
  failed.error = "deadlock, \"at\" rank 0";
  failed.wall_s = 1;
  const std::string csv = ResultsHeader({"schedule"}) + "\n" +
                          ResultCsvLine(0, {"1F1B"}, Ok()) + "\n" +
                          ResultCsvLine(1, {"a,b"}, failed) + "\n";
  EXPECT_EQ(csv, std::string(kHeader) +
                     "0,1F1B,0.0125,0.25,0.2,640,1073741824,1048576,false,ok,,0.5\n"
                     "1,\"a,b\",,,,,,,,failed,\"deadlock, \"\"at\"\" rank 0\",1\n");
  ResultsTable table;
  ASSERT_TRUE(ReadResultsCsv(csv, "r.csv", &table).ok());
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.Axes(), std::vector<std::string>{"schedule"});
  EXPECT_EQ(table.rows[0].metric[kPeakMemoryColumn], 1073741824.0);
  EXPECT_EQ(table.rows[1].status, PointStatus::kFailed);
  EXPECT_EQ(table.CsvLine(table.rows[1]), ResultCsvLine(1, {"a,b"}, failed));

  const std::string json = ResultJsonLine(0, {"schedule"}, {"1F1B"}, Ok()) + "\n" +
                           ResultJsonLine(1, {"schedule"}, {"a,b"}, failed) + "\n";
  EXPECT_EQ(json,
            "{\"point\": 0, \"values\": {\"schedule\": \"1F1B\"}, \"status\": \"ok\", \"error\": "
            "\"\", \"wall_s\": 0.5, \"result\": {\"schedule\": \"1F1B\", \"makespan_s\": 0.0125}}\n"
            "{\"point\": 1, \"values\": {\"schedule\": \"a,b\"}, \"status\": \"failed\", \"error\": "
            "\"deadlock, \\\"at\\\" rank 0\", \"wall_s\": 1}\n");
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
  o.makespan_s = 0.1 + 0.2;  // not a short decimal
  PointOutcome back;
  ASSERT_TRUE(ParsePointOutcome(SerializePointOutcome(o), &back));
  EXPECT_EQ(back.makespan_s, o.makespan_s);
  EXPECT_EQ(back.peak_memory_bytes, o.peak_memory_bytes);
  EXPECT_EQ(back.result, o.result);
  EXPECT_FALSE(ParsePointOutcome("{\"status\": \"ok\"}", &back));
  EXPECT_FALSE(ParsePointOutcome("not json", &back));
}

TEST(Results, ResumeDropsBadRowsAndATornLastLine) {
  const std::string csv = std::string(kHeader) +
                          "0,1F1B,0.0125,0.25,0.2,640,1073741824,1048576,false,ok,,0.5\n"
                          "1,1F1B,x,0.25,0.2,640,1073741824,1048576,false,ok,,0.5\n"
                          "2,GPipe,,,,,,,,skipped,why,0\n"
                          "3,GPipe,0.01";
  ResultsTable table;
  EXPECT_EQ(ReadResultsCsv(csv, "r.csv", &table).message(),
            "r.csv:3: makespan_s 'x' is not a number; an ok row has a number in each metric "
            "column\nr.csv:5: 3 fields, expected 12");
  std::vector<std::string> dropped;
  ASSERT_TRUE(ReadResultsCsv(csv, "r.csv", &table, &dropped).ok());
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[1].point, 2);
  EXPECT_EQ(dropped, (std::vector<std::string>{
                         "r.csv:5: torn last line (no line break)",
                         "r.csv:3: makespan_s 'x' is not a number; an ok row has a number in "
                         "each metric column"}));
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

}  // namespace
}  // namespace ppsim
