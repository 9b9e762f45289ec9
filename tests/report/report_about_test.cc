// The report header's facts: the about file beside a sweep's CSV, and what was simulated from the
// JSON lines or a run's CSV.
#include "report/report_about.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ppsim {
namespace {

using Facts = std::vector<std::pair<std::string, std::string>>;

TEST(ReportAbout, FileBesideTheCsv) {
  EXPECT_EQ(AboutPath("out/results.csv"), "out/results.about.json");
  EXPECT_EQ(AboutPath("results"), "results.about.json");
}

TEST(ReportAbout, WrittenAndReadBack) {
  ReportAbout about;
  about.ppsim_version = "0.1.0";
  about.command = "ppsim sweep e.yaml -o r.csv";
  about.experiment = "study";
  about.experiment_file = "e.yaml";
  const std::string text = AboutJson(about);
  EXPECT_EQ(text,
            "{\n  \"ppsim_version\": \"0.1.0\",\n  \"command\": \"ppsim sweep e.yaml -o r.csv\",\n"
            "  \"experiment\": \"study\",\n  \"experiment_file\": \"e.yaml\"\n}\n");
  ReportAbout read;
  ASSERT_TRUE(ReadAboutJson(text, "r.about.json", &read).ok());
  EXPECT_EQ(read.ppsim_version, "0.1.0");
  EXPECT_EQ(read.command, about.command);
  EXPECT_EQ(read.experiment, "study");
  EXPECT_EQ(read.experiment_file, "e.yaml");
  EXPECT_EQ(read.baseline, "");
  // The experiment's baseline, when it names one, last.
  about.baseline = "1F1B";
  const std::string with_baseline = AboutJson(about);
  EXPECT_EQ(with_baseline.substr(with_baseline.find("\"experiment_file\"")),
            "\"experiment_file\": \"e.yaml\",\n  \"baseline\": \"1F1B\"\n}\n");
  ASSERT_TRUE(ReadAboutJson(with_baseline, "r.about.json", &read).ok());
  EXPECT_EQ(read.baseline, "1F1B");
}

TEST(ReportAbout, MalformedFileIsAnError) {
  const std::string valid =
      "r.about.json: not a JSON object of strings; an about file is {\"ppsim_version\": ..., "
      "\"command\": ..., \"experiment\": ..., \"experiment_file\": ...}";
  for (const char* text :
       {"", "[1]", "{\"command\": 3}", "{\"experiment\": ", "{\"baseline\": 0}"}) {
    ReportAbout about;
    EXPECT_EQ(ReadAboutJson(text, "r.about.json", &about).message(), valid) << text;
  }
}

TEST(ReportAbout, SimulatedFromARunCsvListsEachValueOnce) {
  const std::string csv =
      "schedule,pp,platform,dp,tp,model\n1F1B,4,h100-node,2,1,llama3-8b\n"
      "GPipe,4,h100-node,2,1,llama3-8b\nZB-V,8,h100-node,2,1,llama3-8b\n";
  ReportAbout about;
  SimulatedFromRunCsv(csv, &about);
  EXPECT_EQ(about.simulated, (Facts{{"model", "llama3-8b"},
                                    {"cluster", "h100-node"},
                                    {"parallelism", "pp 4, 8 \u00b7 tp 1 \u00b7 dp 2"}}));
}

TEST(ReportAbout, SimulatedFromJsonLinesOfOkPoints) {
  const std::string lines =
      "{\"point\":0,\"values\":{\"pp\":\"4\"},\"status\":\"ok\",\"error\":\"\",\"wall_s\":0.1,"
      "\"result\":{\"pp\":4,\"platform\":\"h100-node\",\"gpus\":4,\"dp\":1,\"tp\":1,\"cp\":1,"
      "\"model\":\"llama3-8b\"}}\n"
      "{\"point\":1,\"values\":{\"pp\":\"8\"},\"status\":\"ok\",\"error\":\"\",\"wall_s\":0.1,"
      "\"result\":{\"pp\":8,\"platform\":\"h100-node\",\"gpus\":8,\"dp\":1,\"tp\":1,\"cp\":1,"
      "\"model\":\"llama3-8b\"}}\n"
      "{\"point\":2,\"values\":{\"pp\":\"16\"},\"status\":\"failed\",\"error\":\"x\","
      "\"wall_s\":0.1}\n";
  ReportAbout about;
  SimulatedFromJsonLines(lines, &about);
  EXPECT_EQ(about.simulated,
            (Facts{{"model", "llama3-8b"},
                   {"cluster", "h100-node, 4, 8 GPUs"},
                   {"parallelism", "pp 4, 8 \u00b7 tp 1 \u00b7 dp 1 \u00b7 cp 1"}}));
}

}  // namespace
}  // namespace ppsim
