// `ppsim search --baseline ARGS` (batch/search.h): the baseline is evaluated as a candidate is,
// and every candidate's speed-up is its tokens/s over the baseline's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "batch/search.h"
#include "cli/commands.h"

namespace ppsim {
namespace {

using Json = nlohmann::json;

// A small space: gpt3-1.5b (22 layers) on one DGX H100 node (8 GPUs), 32 sequences; 1F1B and
// GPipe over tp 1, 2, pp 2, 4, microbatch size 1, no recomputation.
const std::vector<std::string> kSpace = {
    "--model",           "gpt3-1.5b", "--platform",  "dgx-h100",   "--nodes",     "1",
    "--global-batch",    "32",        "--tp",        "1,2",        "--pp",        "2,4",
    "--microbatch-size", "1",         "--schedules", "1F1B,GPipe", "--recompute", "none"};

struct CliResult {
  int code = 0;
  std::string out;
  std::string err;
};

CliResult Search(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  std::ostringstream out, err;
  CliResult r;
  r.code = cli::SearchCommand(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// The relation the speed-up stands for: every candidate has the baseline's global batch and
// sequence length, so tokens/s over the baseline's is the baseline's iteration over the
// candidate's (the two sides are computed differently, hence equal to rounding).
void ExpectSpeedupsAreIterationRatios(const Json& j) {
  const double baseline_s = j.at("baseline").at("iteration_s").get<double>();
  ASSERT_GT(baseline_s, 0);
  for (const char* list : {"candidates", "pareto"}) {
    ASSERT_FALSE(j.at(list).empty()) << list;
    for (const Json& c : j.at(list)) {
      const double expected = baseline_s / c.at("iteration_s").get<double>();
      EXPECT_NEAR(c.at("speedup").get<double>(), expected, expected * 1e-12) << c.at("command");
    }
  }
}

// The search's best candidate given back as the baseline: two independent evaluations of one
// configuration, which must agree exactly, so its speed-up is exactly 1.
TEST(SearchBaseline, TheBestCandidateAsBaselineHasSpeedupOne) {
  const CliResult first = Search(kSpace, {"--format", "json", "--top", "3"});
  ASSERT_EQ(first.code, 0) << first.err;
  const Json best = Json::parse(first.out).at("candidates").at(0);
  const std::string command = best.at("command").get<std::string>();
  ASSERT_EQ(command.rfind("ppsim run ", 0), 0u) << command;
  const std::string args = command.substr(std::string("ppsim run ").size());
  const CliResult r = Search(kSpace, {"--format", "json", "--top", "3", "--baseline", args});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const Json& baseline = j.at("baseline");
  const Json& top = j.at("candidates").at(0);
  EXPECT_EQ(baseline.at("command"), command);
  EXPECT_EQ(baseline.at("iteration_s").get<double>(), top.at("iteration_s").get<double>());
  EXPECT_EQ(baseline.at("critical_path_s").get<double>(), top.at("critical_path_s").get<double>());
  EXPECT_EQ(baseline.at("work_bound_s").get<double>(), top.at("work_bound_s").get<double>());
  EXPECT_EQ(baseline.at("peak_memory_bytes"), top.at("peak_memory_bytes"));
  EXPECT_EQ(baseline.at("oom"), false);
  EXPECT_EQ(baseline.at("index"), -1);
  EXPECT_EQ(top.at("speedup").get<double>(), 1.0);
  EXPECT_EQ(baseline.at("speedup").get<double>(), 1.0);
  // The candidates are those of the search without a baseline.
  Json without = Json::parse(first.out).at("candidates");
  Json with = j.at("candidates");
  for (Json& c : with) c.erase("speedup");
  EXPECT_EQ(with, without);
  ExpectSpeedupsAreIterationRatios(j);
  // The table: the baseline's line before the ranking, and the speed-up column.
  const CliResult table = Search(kSpace, {"--top", "3", "--baseline", args});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_EQ(table.out.rfind("baseline: ", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("(fits): " + command + "\n"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("speed-up"), std::string::npos);
  EXPECT_NE(table.out.find(" 1.00x "), std::string::npos) << table.out;
}

// A baseline unlike any candidate (GPipe, tp 1, pp 2, dp 4, 2 sequences a microbatch): the search's
// fields fill the model, the batch and the cluster; every speed-up is the ratio of iterations.
TEST(SearchBaseline, EverySpeedupIsTheRatioOfIterations) {
  const std::string baseline = "--schedule GPipe --pp 2 --dp 4 --microbatch-size 2";
  const CliResult r = Search(kSpace, {"--format", "json", "--baseline", baseline});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const Json& b = j.at("baseline");
  EXPECT_EQ(b.at("command"),
            "ppsim run --schedule GPipe --pp 2 --global-batch 32 --model gpt3-1.5b "
            "--microbatch-size 2 --platform dgx-h100 --nodes 1 --dp 4");
  // 32 sequences over dp 4 in microbatches of 2: 4 microbatches a pipeline.
  EXPECT_EQ(b.at("microbatches"), 4);
  EXPECT_EQ(b.at("dp"), 4);
  EXPECT_TRUE(j.at("baseline_notes").empty());
  ExpectSpeedupsAreIterationRatios(j);
  // The CSV: a speedup column, the same numbers as the JSON's.
  const CliResult csv = Search(kSpace, {"--format", "csv", "--top", "1", "--baseline", baseline});
  ASSERT_EQ(csv.code, 0) << csv.err;
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  EXPECT_TRUE(header.ends_with(",sequence_parallel,speedup")) << header;
  const std::string row =
      csv.out.substr(header.size() + 1, csv.out.find('\n', header.size() + 1) - header.size() - 1);
  EXPECT_EQ(std::stod(row.substr(row.rfind(',') + 1)),
            j.at("candidates").at(0).at("speedup").get<double>());
}

// A baseline that does not fit is still simulated, and flagged.
TEST(SearchBaseline, AnOutOfMemoryBaselineIsSimulatedAndFlagged) {
  // The baseline's own reserve, 81,900 MiB of the H100's 81,920 MiB, leaves too little for it.
  const CliResult fits = Search(
      kSpace, {"--format", "json", "--baseline",
               "--schedule 1F1B --pp 2 --dp 4 --microbatch-size 1 --memory-reserve 81900MiB"});
  ASSERT_EQ(fits.code, 0) << fits.err;
  const Json b = Json::parse(fits.out).at("baseline");
  EXPECT_TRUE(b.at("oom").get<bool>());
  EXPECT_GT(b.at("peak_memory_bytes").get<int64_t>(), b.at("memory_capacity_bytes").get<int64_t>());
  EXPECT_GT(b.at("iteration_s").get<double>(), 0);
  const CliResult table =
      Search(kSpace, {"--baseline",
                      "--schedule 1F1B --pp 2 --dp 4 --microbatch-size 1 --memory-reserve "
                      "81900MiB"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("(OUT OF MEMORY: it would not run; simulated all the same)"),
            std::string::npos)
      << table.out;
}

TEST(SearchBaseline, BadBaselinesAreExitTwoNamingTheFlag) {
  const struct {
    std::string baseline;
    std::string message;
  } cases[] = {
      {"--tpp 2",
       "--baseline: --tpp: unknown option; did you mean --pp? see 'ppsim run --help' for the "
       "valid options\n"},
      {"--schedule 1F1B --pp 0", "--baseline: --pp: must be at least 1; got 0\n"},
      {"--schedule 1F1B --pp 2 --tp 2",
       "--baseline: tp 2 x pp 2 x cp 1 x dp 1 = 4 GPUs, but the candidates run on the search's 8 "
       "(--nodes 1 of dgx-h100); give the baseline 8 GPUs (its --tp, --pp, --cp or --dp)\n"},
      {"--schedule 1F1B --pp 2 --dp 4 --trace t.pftrace",
       "--baseline: --trace: the baseline writes no output file; it is simulated as the "
       "candidates are: run its command with `ppsim run` for one\n"},
      {"--schedule 1F1B --pp 2 --dp 4 --engine critical-path",
       "--baseline: --engine: not taken by a baseline, which is simulated with SimGrid as the "
       "candidates are and reported in the search's own outputs\n"},
      {"--schedule '1F1B --pp 2",
       "--baseline: unterminated single quote opened at character 12; close it with '\n"},
      {"--schedule 1F1B,GPipe --pp 2 --dp 4", ""},
      {"--schedule 1F1B --pp 2 --dp 4 --point 3",
       "--baseline: --point: a run here is given by its "
       "options alone\n"},
  };
  for (const auto& c : cases) {
    const CliResult r = Search(kSpace, {"--baseline", c.baseline});
    EXPECT_EQ(r.code, 2) << c.baseline << "\n" << r.err;
    if (!c.message.empty()) {
      EXPECT_EQ(r.err, c.message) << c.baseline;
    } else {
      EXPECT_EQ(r.err.rfind("--baseline: ", 0), 0u) << r.err;
    }
    EXPECT_EQ(r.out, "");
  }
}

// Megatron-LM's Llama 3 8B example (tests/data/megatron/llama3_8b_h100_fp8.args: tp 1, cp 1, no
// pp, micro-batch 1, global batch 128, sequences of 8192) on one DGX H100 node: Megatron's data
// parallelism fills the node's 8 GPUs. Its model and batch are the arguments', not the search's.
TEST(SearchBaseline, AMegatronBaselineEndToEnd) {
  const std::string args = "--megatron @" + std::string(PPSIM_SOURCE_DIR) +
                           "/tests/data/megatron/llama3_8b_h100_fp8.args";
  const CliResult r = Search({"--model",
                              "llama3-8b",
                              "--platform",
                              "dgx-h100",
                              "--nodes",
                              "1",
                              "--global-batch",
                              "128",
                              "--seq-len",
                              "8192",
                              "--tp",
                              "1,2",
                              "--pp",
                              "1,2",
                              "--microbatch-size",
                              "1",
                              "--schedules",
                              "1F1B",
                              "--recompute",
                              "none,selective",
                              "--format",
                              "json"},
                             {"--baseline", args});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const Json& b = j.at("baseline");
  // The degrees are the arguments' (tp 1, no pp, micro-batch 1), dp the node's 8 GPUs.
  EXPECT_EQ(b.at("tp"), 1);
  EXPECT_EQ(b.at("pp"), 1);
  EXPECT_EQ(b.at("microbatch_size"), 1);
  EXPECT_EQ(b.at("dp"), 8);
  // 128 sequences over dp 8 in microbatches of 1: 16 a pipeline.
  EXPECT_EQ(b.at("microbatches"), 16);
  EXPECT_EQ(b.at("command"), "ppsim run " + args + " --platform dgx-h100 --nodes 1");
  const Json& notes = j.at("baseline_notes");
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes.at(0),
            "the baseline's model, global batch and sequence length are its --megatron "
            "configuration's, not the search's --model llama3-8b (give them in --baseline to "
            "override)");
  // 128 sequences of 8192 tokens an iteration, for the baseline and the candidates alike.
  for (const Json& c : {b, j.at("candidates").at(0)}) {
    EXPECT_NEAR(c.at("tokens_per_s").get<double>() * c.at("iteration_s").get<double>(),
                128.0 * 8192, 1e-6)
        << c.at("command");
  }
  ExpectSpeedupsAreIterationRatios(j);
}

}  // namespace
}  // namespace ppsim
