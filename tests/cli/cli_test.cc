// The command line: exit codes and every user-facing message, verbatim.
#include "cli/cli.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/cli.h"

namespace ppsim {
namespace {

// `ppsim run` of 1F1B on 4 ranks with 8 microbatches on the ideal platform, plus `extra`.
CliResult RunIdeal(std::vector<std::string> extra) {
  std::vector<std::string> args = {"run",  "--schedule", "1F1B", "--pp", "4", "--microbatches",
                                   "8",    "--f",        "1",    "--b",  "2", "--platform",
                                   "ideal"};
  args.insert(args.end(), extra.begin(), extra.end());
  return Cli(args);
}

void ExpectInvalid(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, message + "\n");
  EXPECT_EQ(r.out, "");
}

TEST(Cli, JsonHasTheClosedFormMetricsOfCheckCase1) {
  const CliResult r = RunIdeal({"--activation", "1", "--memory-reserve", "0",
                                "--activation-overhead", "0", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"makespan_s\": 33,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"bubble_over_ideal\": 0.375,"), std::string::npos);
  EXPECT_NE(
      r.out.find("{\"rank\": 3, \"busy_s\": 24, \"span_s\": 24, \"idle_in_span_s\": 0, "
                 "\"first_start_s\": 3, \"last_end_s\": 27, \"p2p_wait_s\": 0, \"optimizer_s\": 0, "
                 "\"peak_activation_bytes\": 1, "
                 "\"peak_activation_time_s\": 3, \"static_memory_bytes\": 0, "
                 "\"reserve_bytes\": 0, \"peak_memory_bytes\": 1, "
                 "\"memory_capacity_bytes\": 85899345920, "
                 "\"oom\": false, \"memory\": {"),
      std::string::npos)
      << r.out;
}

std::vector<std::string> SplitLine(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) fields.push_back(field);
  return fields;
}

TEST(Cli, CsvHasAHeaderAndOneRowPerSchedule) {
  const CliResult r = Cli({"run", "--schedule", "GPipe,1F1B", "--pp", "4", "--microbatches", "8",
                           "--f", "1,1,2,1", "--b", "2,2,4,2", "--platform", "ideal", "--format",
                           "csv", "--engine", "critical-path"});
  ASSERT_EQ(r.code, 0) << r.err;
  std::stringstream lines(r.out);
  std::string header, gpipe, one_f_one_b, extra;
  std::getline(lines, header);
  std::getline(lines, gpipe);
  std::getline(lines, one_f_one_b);
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_EQ(header,
            "schedule,pp,stages,microbatches,platform,engine,makespan_s,bubble_over_makespan,"
            "bubble_over_ideal,stage_bubble_rate,peak_activation_bytes,compute_tasks,"
            "transfer_tasks,transfer_bytes,peak_memory_bytes,memory_capacity_bytes,oom_ranks,mfu,"
            "hfu,samples_per_s,tokens_per_s,time_to_train_s,gpu_hours,cost,dp,tp,"
            "allreduce_tail_s,intra_node_bytes,inter_node_bytes,model");
  // Check case 3. Busy = 8 x (3 + 3 + 6 + 3) = 120 s in all; rank 0 is busy 24 s and has the
  // longest span: GPipe 57 s (0..57), 1F1B 55 s.
  struct Want {
    std::string row;
    std::string name;
    double makespan;
  };
  for (const Want& w : {Want{gpipe, "GPipe", 57}, Want{one_f_one_b, "1F1B", 55}}) {
    const std::vector<std::string> f = SplitLine(w.row);
    ASSERT_EQ(f.size(), 29u) << w.row;
    EXPECT_EQ(f[0], w.name);
    EXPECT_EQ(std::vector<std::string>(f.begin() + 1, f.begin() + 6),
              (std::vector<std::string>{"4", "4", "8", "ideal", "critical-path"}));
    EXPECT_NEAR(std::stod(f[6]), w.makespan, 1e-12);
    EXPECT_NEAR(std::stod(f[7]), 1 - 120 / (4 * w.makespan), 1e-12);
    EXPECT_NEAR(std::stod(f[8]), (4 * w.makespan - 120) / 120, 1e-12);
    EXPECT_NEAR(std::stod(f[9]), (w.makespan - 24) / w.makespan, 1e-12);
    // The ideal platform's GPU is an 80 GiB H100; no model, sequence length or training run, so
    // MFU, HFU, tokens/s and the training totals are empty; 8 one-sequence microbatches.
    EXPECT_EQ(std::vector<std::string>(f.begin() + 10, f.begin() + 19),
              (std::vector<std::string>{"0", "64", "48", "0", "0", "85899345920", "0", "", ""}));
    EXPECT_NEAR(std::stod(f[19]), 8 / w.makespan, 1e-12);
    EXPECT_EQ(std::vector<std::string>(f.begin() + 20, f.end()),
              (std::vector<std::string>{"", "", "", "", "1", "1", "0", "0", "0"}));
  }
}

TEST(Cli, SameInputGivesByteIdenticalOutput) {
  const std::vector<std::string> args = {"--f",   "1.2ms",    "--b", "2.4ms", "--message-bytes",
                                         "32MiB", "--format", "json"};
  std::vector<std::string> full = {"run", "--schedule",     "1F1B,GPipe", "--pp",
                                   "4",   "--microbatches", "8"};
  full.insert(full.end(), args.begin(), args.end());
  const CliResult a = Cli(full);
  const CliResult b = Cli(full);
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(Cli, DefaultJobComparesOneFOneBAndGPipeOnAnH100Node) {
  const CliResult r = Cli({"run"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("default job: ppsim run --schedule 1F1B,GPipe --pp 4 --microbatches 8 "
                        "--f 1.2ms --b 2.4ms --activation 1.5GiB --message-bytes 32MiB "
                        "--platform h100-node\n\nschedule  ",
                        0),
            0u)
      << r.out;
  // Peak activations: 1F1B holds 4 microbatches on rank 0, GPipe all 8 (x 1.5 GiB).
  EXPECT_NE(r.out.find("\n1F1B  "), std::string::npos);
  EXPECT_NE(r.out.find("  6 GiB  "), std::string::npos);
  EXPECT_NE(r.out.find("\nGPipe "), std::string::npos);
  EXPECT_NE(r.out.find("  12 GiB  "), std::string::npos);
}

TEST(Cli, FewerMicrobatchesThanRanksIsAccepted) {
  // 1F1B with m < p degenerates to GPipe's order: (m + p - 1)(F + B) = 5 x 3.
  const CliResult r = Cli({"run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "2", "--f",
                           "1", "--b", "2", "--platform", "ideal", "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\n1F1B,4,4,2,ideal,simgrid,15,"), std::string::npos) << r.out;
}

TEST(Cli, BadInputExitsTwoWithOneLine) {
  ExpectInvalid(Cli({"run", "--schedule", "2F2B", "--pp", "4", "--microbatches", "8", "--f", "1",
                     "--b", "2"}),
                "--schedule: unknown schedule '2F2B'; valid: "
                "GPipe, 1F1B, Interleaved1F1B, LoopedBFS, InterleavedZeroBubble, ZBVZeroBubble, "
                "DualPipeV, Megatron-Interleaved, ZB-H1, ZB-H2, ZB-1p, ZB-2p, ZB-auto, ZB-V, "
                "V-Half, V-Min, DualPipe");
  ExpectInvalid(RunIdeal({"--microbatch", "8"}),
                "--microbatch: unknown option; did you mean --microbatches? see 'ppsim run "
                "--help' for the valid options");
  ExpectInvalid(RunIdeal({"--bogus"}),
                "--bogus: unknown option; see 'ppsim run --help' for the valid options");
  ExpectInvalid(Cli({"run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "8", "--f",
                     "1,1,2", "--b", "2"}),
                "--f: 3 values for 4 ranks; give one value for all ranks or exactly 4, "
                "comma-separated (or --costs-per virtual-stage and one per virtual stage)");
  ExpectInvalid(Cli({"run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "8", "--f", "-1ms",
                     "--b", "2"}),
                "--f: negative duration '-1ms'; durations must be >= 0");
  ExpectInvalid(Cli({"run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "8", "--f", "1",
                     "--b", "fast"}),
                "--b: invalid duration 'fast'; expected a non-negative number with unit ns, us, "
                "ms or s (a bare number is seconds), e.g. 1.2ms");
  ExpectInvalid(Cli({"run", "--schedule", "1F1B", "--pp", "0", "--microbatches", "8", "--f", "1",
                     "--b", "2"}),
                "--pp: must be at least 1; got 0");
  ExpectInvalid(Cli({"run", "--schedule", "1F1B", "--pp", "four", "--microbatches", "8", "--f", "1",
                     "--b", "2"}),
                "--pp: expected an integer, got 'four'");
  ExpectInvalid(Cli({"run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "0", "--f", "1",
                     "--b", "2"}),
                "--microbatches: must be at least 1; got 0");
  ExpectInvalid(Cli({"run", "--schedule", "1F1B", "--pp", "9", "--microbatches", "8", "--f", "1",
                     "--b", "2"}),
                "--pp: 9 ranks need 9 GPUs; platform h100-node has 8 (1 node of 8; more with "
                "--nodes)");
  ExpectInvalid(RunIdeal({"--engine", "ns3"}),
                "--engine: unknown engine 'ns3'; valid: simgrid, "
                "critical-path");
  ExpectInvalid(RunIdeal({"--format", "xml"}),
                "--format: unknown format 'xml'; valid: table, json, csv");
  ExpectInvalid(RunIdeal({"--pp", "5"}), "--pp: given more than once; give each option once");
  ExpectInvalid(RunIdeal({"stray"}),
                "ppsim run: unexpected argument 'stray'; every value follows its "
                "option, see 'ppsim run --help'");
  ExpectInvalid(RunIdeal({"--p2p-bandwidth", "fast"}),
                "--p2p-bandwidth: invalid bandwidth 'fast'; expected a positive rate such as "
                "450GB/s, 50GiB/s, 400Gbps or 400Gb/s (a bare number is bytes per second), or inf");
  ExpectInvalid(Cli({"run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "8", "--f", "1"}),
                "--b: required; give the full backward time (--b) or its two parts (--i and --w)");
  ExpectInvalid(Cli({"frobnicate"}),
                "ppsim: unknown command 'frobnicate'; valid: run, schedule, schedules, model, "
                "sweep, merge, search, profile, calibrate, serve, report, platforms, help");
}

TEST(Cli, MalformedScheduleFileNamesFileLineAndColumn) {
  const std::string path = WriteFile("bad.txt", "rank 0: 0F0 0B0\nrank 1: 1F0 2X5 1B0\n");
  ExpectInvalid(Cli({"run", "--schedule-file", path, "--f", "1", "--b", "2"}),
                path +
                    ":2:13: invalid action '2X5'; expected <stage><F|I|B|W>[<microbatch>] or "
                    "(<a>;<b>)OVERLAP_F_B");
  const std::string csv = WriteFile("bad.csv", "0F0,0B0\n1F0,1B0,(1F1;)OVERLAP_F_B\n");
  ExpectInvalid(Cli({"schedule", "--schedule-file", csv}),
                csv +
                    ":2:9: invalid action '(1F1;)OVERLAP_F_B'; expected "
                    "<stage><F|I|B|W>[<microbatch>] or (<a>;<b>)OVERLAP_F_B");
}

TEST(Cli, IncompleteScheduleFileIsInvalidInput) {
  const std::string path = WriteFile("incomplete.txt", "rank 0: 0F0 0B0 0F1\n");
  ExpectInvalid(Cli({"run", "--schedule-file", path, "--f", "1", "--b", "2"}),
                path +
                    ": schedule: stage 0, microbatch 1 has no backward; every (stage, "
                    "microbatch) needs one B, or one I and one W");
}

TEST(Cli, DeadlockExitsOneNamingTheStuckRanks) {
  const std::string path =
      WriteFile("deadlock.txt", "rank 0: 0F0 0B0 0F1 0B1\nrank 1: 1F1 1B1 1F0 1B0\n");
  const CliResult r = Cli({"run", "--schedule-file", path, "--f", "1", "--b", "2"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "deadlock: rank 0 waits at 0B0 for 1B0; rank 1 waits at 1F1 for 0F1\n");
}

TEST(Cli, ScheduleFileRunsLikeTheGeneratedSchedule) {
  const std::string path = WriteFile("gpipe.csv", "0F0,0F1,0B0,0B1\n1F0,1F1,1B0,1B1\n");
  const CliResult r = Cli({"run", "--schedule-file", path, "--f", "1", "--b", "2", "--platform",
                           "ideal", "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  // GPipe p = 2, m = 2: (m + p - 1)(F + B) = 9.
  EXPECT_NE(r.out.find("," + std::string("2,2,2,ideal,simgrid,9,")), std::string::npos) << r.out;
}

TEST(Cli, SchedulePrintsTorchCsvAndText) {
  CliResult r = Cli({"schedule", "--schedule", "gpipe", "--pp", "2", "--microbatches", "2",
                     "--format", "torch-csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "0F0,0F1,0B0,0B1\n1F0,1F1,1B0,1B1\n");
  r = Cli({"schedule", "--schedule", "1F1B", "--pp", "2", "--microbatches", "2"});
  EXPECT_EQ(r.out, "rank 0: 0F0 0F1 0B0 0B1\nrank 1: 1F0 1B0 1F1 1B1\n");
}

TEST(Cli, TorchCsvOutputReadsBackAsTheSameScheduleWithTheSameMetrics) {
  for (const std::vector<std::string>& choice :
       {std::vector<std::string>{"--schedule", "DualPipe", "--pp", "4", "--microbatches", "8"},
        std::vector<std::string>{"--schedule", "ZBVZeroBubble", "--pp", "4", "--microbatches", "6"},
        std::vector<std::string>{"--schedule", "Interleaved1F1B", "--pp", "4", "--microbatches",
                                 "8", "--stages-per-rank", "3"}}) {
    std::vector<std::string> print = {"schedule"};
    print.insert(print.end(), choice.begin(), choice.end());
    print.insert(print.end(), {"--format", "torch-csv"});
    const CliResult csv = Cli(print);
    ASSERT_EQ(csv.code, 0) << csv.err;
    const std::string path = WriteFile(choice[1] + ".csv", csv.out);
    EXPECT_EQ(Cli({"schedule", "--schedule-file", path, "--format", "torch-csv"}).out, csv.out);

    // Costs per virtual stage, which a schedule file and a named schedule share.
    const std::vector<std::string> costs = {"--costs-per",
                                            "virtual-stage",
                                            "--f",
                                            "1,1,2,1,1,1,2,1,1,1,2,1",
                                            "--i",
                                            "1",
                                            "--w",
                                            "0.5",
                                            "--message-bytes",
                                            "1GB",
                                            "--platform",
                                            "h100-node",
                                            "--format",
                                            "csv"};
    const size_t stages = choice[1] == "Interleaved1F1B" ? 12 : 8;
    std::vector<std::string> stage_costs = costs;
    if (stages == 8) stage_costs[3] = "1,1,2,1,1,1,2,1";
    ExpectFileRunsAsNamed(choice, path, stage_costs);
  }
}

TEST(Cli, ComputeAndCommsCsvKeepsTheComputeOrder) {
  // torch's compute_comms form of GPipe pp=2, m=1: the SEND/RECV and REDUCE_GRAD are skipped.
  const std::string path =
      WriteFile("comms.csv",
                "0F0,0SEND_F0,0RECV_B0,0B0,0REDUCE_GRAD\n1RECV_F0,1F0,1B0,1SEND_B0,1REDUCE_GRAD\n");
  const CliResult r = Cli({"schedule", "--schedule-file", path});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "rank 0: 0F0 0B0\nrank 1: 1F0 1B0\n");
}

TEST(Cli, ScheduleFileMistakesNameRankPositionAndAction) {
  const std::string path = WriteFile("v.txt", "rank 0: 0F0 1F0 1B0 0B0\nrank 1: 2F0 2B0\n");
  ExpectInvalid(Cli({"run", "--schedule-file", path, "--f", "1", "--b", "2", "--microbatches", "1",
                     "--stage-to-rank", "0,1,1"}),
                path +
                    ": rank 0, position 2 (1F0): stage 1 belongs to rank 1; an action runs on "
                    "the rank that holds its stage");
  ExpectInvalid(
      Cli({"run", "--schedule-file", path, "--f", "1", "--b", "2", "--stage-to-rank", "0,0"}),
      "--stage-to-rank: 2 ranks for the 3 stages of " + path + "; give one rank per stage");
  const std::string big = WriteFile("big.txt", "rank 0: 0F0 0F1 0B0 0B1\n");
  ExpectInvalid(Cli({"run", "--schedule-file", big, "--f", "1", "--b", "2", "--microbatches", "1"}),
                big +
                    ": rank 0, position 2 (0F1): microbatch 1 is out of range; --microbatches 1 "
                    "allows 0..0");
  const std::string two = WriteFile("two.txt", "rank 0: 0F0 1F0\nrank 1: 1B0 0B0\n");
  ExpectInvalid(
      Cli({"schedule", "--schedule-file", two}),
      two +
          ": rank 1, position 1 (1B0): stage 1 is already on rank 0, position 2 (1F0); each "
          "stage runs on exactly one rank");
}

TEST(Cli, MicrobatchGroupSizeIsMegatrons) {
  ExpectInvalid(RunIdeal({"--microbatch-group-size", "4"}),
                "--microbatch-group-size: applies to --schedule Megatron-Interleaved only");
  const CliResult r = Cli({"schedule", "--schedule", "Megatron-Interleaved", "--pp", "2",
                           "--microbatches", "4", "--microbatch-group-size", "4"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("rank 1: 1F0 1F1 1F2 1F3 3F0 3B0"), std::string::npos) << r.out;
}

TEST(Cli, TorchRejectionsNameTheRule) {
  ExpectInvalid(
      Cli({"schedule", "--schedule", "Interleaved1F1B", "--pp", "2", "--microbatches", "5"}),
      "--microbatches: Interleaved1F1B needs microbatches to be a multiple of rounds = "
      "max(1, m // pp) = 2; got 5");
}

TEST(Cli, MemoryLimitFlagsOomAndFailOnOomExitsOne) {
  // 1F1B rank r holds 4 - r activations of 1 GB: a 3.5 GB limit does not fit rank 0 (4 GB).
  const std::vector<std::string> args = {"--activation",          "1GB", "--memory-limit", "3.5GB",
                                         "--memory-reserve",      "0",   "--format",       "json",
                                         "--activation-overhead", "0"};
  const CliResult r = RunIdeal(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"oom\": true,\n  \"oom_ranks\": 1,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"peak_memory_bytes\": 4000000000, \"memory_capacity_bytes\": "
                       "3500000000, \"oom\": true, \"memory\": {"),
            std::string::npos);
  std::vector<std::string> fail = args;
  fail.push_back("--fail-on-oom");
  const CliResult f = RunIdeal(fail);
  EXPECT_EQ(f.code, 1);
  EXPECT_EQ(f.err, "out of memory: 1F1B rank 0 needs 3.725 GiB of 3.26 GiB\n");
  ExpectInvalid(RunIdeal({"--memory-limit", "0"}), "--memory-limit: must be more than 0 bytes");
}

// The default reserve, once memory is counted: 3 GiB (CUDA context and NCCL) and 10% of the peak
// activations (the allocator): rank 0 needs 4 GB + 3 GiB + 0.4 GB; rank 3 1 GB + 3 GiB + 0.1 GB.
TEST(Cli, TheDefaultReserveCountsTowardsOutOfMemory) {
  const CliResult r =
      RunIdeal({"--activation", "1GB", "--memory-limit", "7GB", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\"reserve_bytes\": 3621225472, \"peak_memory_bytes\": 7621225472, "
                       "\"memory_capacity_bytes\": 7000000000, \"oom\": true, \"memory\": {"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"reserve_bytes\": 3321225472, \"peak_memory_bytes\": 4321225472, "),
            std::string::npos);
  // No memory counted, no reserve.
  const CliResult none = RunIdeal({"--format", "json"});
  EXPECT_NE(none.out.find("\"reserve_bytes\": 0, \"peak_memory_bytes\": 0, "), std::string::npos)
      << none.out;
  ExpectInvalid(RunIdeal({"--activation-overhead", "-1"}),
                "--activation-overhead: invalid value '-1'; valid: a fraction of the peak "
                "activations, 0 to 10");
}

// `ppsim run` of a schedule found from costs on 4 ranks, 8 microbatches of F = I = W = 1 s,
// M_B = 1 GB and M_W = 0.5 GB, on the ideal platform, plus `extra`.
CliResult RunFromCosts(const std::string& schedule, std::vector<std::string> extra) {
  std::vector<std::string> args = {"run",    "--schedule",
                                   schedule, "--pp",
                                   "4",      "--microbatches",
                                   "8",      "--f",
                                   "1",      "--i",
                                   "1",      "--w",
                                   "1",      "--activation",
                                   "1GB",    "--activation-w",
                                   "0.5GB",  "--memory-reserve",
                                   "0",      "--activation-overhead",
                                   "0",      "--platform",
                                   "ideal"};
  args.insert(args.end(), extra.begin(), extra.end());
  return Cli(args);
}

TEST(Cli, ZBAutoFitsItsActivationsIntoTheMemoryLimit) {
  // 1F1B's rank 0 holds 4 microbatches (4 GB) and runs out of 2.5 GB; ZB-auto plans within it.
  const CliResult one_f_one_b =
      RunFromCosts("1F1B", {"--memory-limit", "2.5GB", "--format", "json"});
  ASSERT_EQ(one_f_one_b.code, 0) << one_f_one_b.err;
  EXPECT_NE(one_f_one_b.out.find("\"oom\": true,"), std::string::npos);
  const CliResult r = RunFromCosts("ZB-auto", {"--memory-limit", "2.5GB", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["oom"].get<bool>());
  for (const nlohmann::json& rank : j["ranks"]) {
    EXPECT_LE(rank["peak_activation_bytes"].get<int64_t>(), 2'500'000'000) << rank.dump();
  }
  // 1p and 2p are ZB-1p's and ZB-2p's limits.
  for (const auto& [schedule, limit] : {std::pair{"ZB-1p", "1p"}, std::pair{"ZB-2p", "2p"}}) {
    const CliResult named = RunFromCosts(schedule, {"--format", "json"});
    const CliResult automatic =
        RunFromCosts("ZB-auto", {"--memory-limit", limit, "--format", "json"});
    ASSERT_EQ(named.code, 0) << named.err;
    ASSERT_EQ(automatic.code, 0) << automatic.err;
    EXPECT_EQ(nlohmann::json::parse(named.out)["ranks"],
              nlohmann::json::parse(automatic.out)["ranks"])
        << limit;
  }
}

TEST(Cli, ZB1pThatDoesNotFitTheGpuRunsAndReportsOutOfMemory) {
  // 1 GB of activations per microbatch, 4 of them in 1p, on a 3 GB GPU: like 1F1B, out of memory.
  const CliResult r = RunFromCosts("ZB-1p", {"--memory-limit", "3GB", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["oom"].get<bool>());
  EXPECT_EQ(j["ranks"][0]["peak_activation_bytes"].get<int64_t>(), 4'000'000'000);
}

TEST(Cli, SchedulesFoundFromCostsSayWhatTheyNeed) {
  ExpectInvalid(
      Cli({"schedule", "--schedule", "ZB-1p", "--pp", "4", "--microbatches", "8"}),
      "--schedule: ZB-1p is found from the stages' costs and memory, which a schedule alone does "
      "not have; run it with 'ppsim run' (costs from --model, a profile, or --f, --i, "
      "--w with --activation)");
  ExpectInvalid(Cli({"run", "--schedule", "ZB-2p", "--pp", "4", "--microbatches", "8", "--f", "1",
                     "--i", "1", "--w", "1", "--platform", "ideal"}),
                "--activation: ZB-2p places forwards as memory allows and needs each stage's "
                "activation bytes M_B; give --model, a profile with activation, or --activation "
                "(and --activation-w)");
  ExpectInvalid(Cli({"run", "--schedule", "ZB-1p", "--pp", "4", "--microbatches", "8", "--f", "1",
                     "--b", "2", "--activation", "1", "--platform", "ideal"}),
                "--i: ZB-1p splits the backward into I and W; give --i and --w, not only --b");
  ExpectInvalid(RunIdeal({"--memory-limit", "3p"}),
                "--memory-limit: 3p limits ZB-auto's activations; other schedules take a size "
                "(the GPU's memory)");
  ExpectInvalid(RunFromCosts("ZB-1p", {"--memory-limit", "2p"}),
                "--memory-limit: 2p limits ZB-auto's activations; ZB-1p takes a size (the GPU's "
                "memory)");
  ExpectInvalid(RunFromCosts("ZB-auto", {"--memory-limit", "0p"}),
                "--memory-limit: invalid value '0p'; a multiple of p x M_B is a whole 1p to 1024p, "
                "or give a size (80GiB)");
  ExpectInvalid(RunFromCosts("ZB-auto", {"--memory-limit", "0.5GB"}),
                "--memory-limit: ZB-auto cannot place a forward on stage 0: 476.8 MiB of GPU "
                "memory leaves 476.8 MiB for activations beside 0 B of parameters, gradients and "
                "optimizer state and the reserve, but one microbatch holds 953.7 MiB; valid: a "
                "limit that leaves at least that, or a multiple of p x M_B (1p)");
}

TEST(Cli, ProfileCsvRunsLikeTheSameFlags) {
  const std::string path = WriteFile("prof.csv",
                                     "stage,f_ms,b_ms,activation_MiB,message_MiB\n"
                                     "0,1,2,100,32\n1,1,2,100,32\n2,2,4,100,32\n3,1,2,100,32\n");
  const std::vector<std::string> common = {
      "run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "8", "--format", "json"};
  std::vector<std::string> from_profile = common;
  from_profile.insert(from_profile.end(), {"--profile", path});
  std::vector<std::string> from_flags = common;
  from_flags.insert(from_flags.end(), {"--f", "1ms,1ms,2ms,1ms", "--b", "2ms,2ms,4ms,2ms",
                                       "--activation", "100MiB", "--message-bytes", "32MiB"});
  const CliResult a = Cli(from_profile);
  const CliResult b = Cli(from_flags);
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  ExpectInvalid(
      Cli({"run", "--schedule", "1F1B", "--pp", "2", "--microbatches", "2", "--profile", path}),
      path +
          ": 4 stages in the profile for 2 ranks; give one per rank or one for all "
          "(or --costs-per virtual-stage and one per virtual stage)");
}

std::vector<std::string> ModelRun(std::vector<std::string> extra) {
  std::vector<std::string> args = {"run", "--schedule", "1F1B",     "--pp", "4", "--microbatches",
                                   "16",  "--platform", "h100-node"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(Cli, Llama3On4H100sFitsWithItsStaticMemory) {
  const CliResult r = Cli(ModelRun({"--model", "llama3-8b", "--format", "json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  // Llama-3 8B (h 4096, 32 heads, 8 KV heads, FFN 14336, vocab 128256, untied): a layer has
  // 2h^2 + 2h(h/4) + 3h*ffn + 2h (RMSNorm) = 218,112,000 parameters; rank 0 holds 8 layers and
  // the embedding (128256 x 4096), at 18 bytes per parameter (Megatron's mixed-precision Adam
  // with fp32 gradients, docs/source/api-guide/dist_optimizer.md).
  const int64_t layer = 2LL * 4096 * 4096 + 2LL * 4096 * 1024 + 3LL * 4096 * 14336 + 2 * 4096;
  const int64_t rank0_static = 18 * (8 * layer + 128256LL * 4096);
  EXPECT_NE(r.out.find("\"static_memory_bytes\": " + std::to_string(rank0_static) + ","),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"oom\": false,"), std::string::npos);
  EXPECT_NE(r.out.find("\"model\": \"llama3-8b\""), std::string::npos);
}

// What each rank's peak memory is made of (--format json, ranks[].memory): with --dp 4 --zero 1
// rank 0's P = 8 layers + the embedding (as above) hold 2P of bf16 weights, 4P of fp32 gradients
// and ceil(12P / 4) of optimizer state (fp32 main parameters, Adam's moments: ZeRO-1's quarter);
// the reserve is 3 GiB fixed and ceil(0.1 x the peak activations); the parts sum to the peak.
TEST(Cli, EachRanksPeakMemoryIsTheSumOfItsParts) {
  const CliResult r = Cli(ModelRun(
      {"--model", "llama3-8b", "--dp", "4", "--zero", "1", "--nodes", "2", "--format", "json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const int64_t layer = 2LL * 4096 * 4096 + 2LL * 4096 * 1024 + 3LL * 4096 * 14336 + 2 * 4096;
  const int64_t p = 8 * layer + 128256LL * 4096;
  const nlohmann::json& rank0 = j["ranks"][0]["memory"];
  EXPECT_EQ(rank0["weights_bytes"].get<int64_t>(), 2 * p);
  EXPECT_EQ(rank0["gradients_bytes"].get<int64_t>(), 4 * p);
  EXPECT_EQ(rank0["optimizer_state_bytes"].get<int64_t>(), (12 * p + 3) / 4);
  EXPECT_EQ(rank0["unsplit_static_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(rank0["fixed_reserve_bytes"].get<int64_t>(), 3LL << 30);
  const int64_t activations = j["ranks"][0]["peak_activation_bytes"].get<int64_t>();
  EXPECT_EQ(rank0["activations_bytes"].get<int64_t>(), activations);
  EXPECT_EQ(rank0["fragmentation_bytes"].get<int64_t>(), (activations + 9) / 10);
  for (const nlohmann::json& rank : j["ranks"]) {
    int64_t sum = 0;
    for (const auto& [name, bytes] : rank["memory"].items()) sum += bytes.get<int64_t>();
    EXPECT_EQ(sum, rank["peak_memory_bytes"].get<int64_t>()) << "rank " << rank["rank"];
  }
}

// The optimizer step reads and writes 30 bytes per parameter (fp32 main gradient, main parameter
// and two moments read; those and the bf16 parameter written) at the GPU's HBM bandwidth (H100
// SXM: 3.35 TB/s), after the rank's last action: rank 0 of llama3-8b on 4 ranks holds 8 layers
// of 218,112,000 parameters and the 128256 x 4096 embedding.
TEST(Cli, TheOptimizerStepTakesItsBytesOverTheHbmBandwidth) {
  const CliResult r = Cli(ModelRun({"--model", "llama3-8b", "--format", "json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const double params = 8.0 * 218112000 + 128256.0 * 4096;
  const double step = 30 * params / 3.35e12;
  const nlohmann::json& rank0 = j["ranks"][0];
  EXPECT_NEAR(rank0["optimizer_s"].get<double>(), step, 1e-12 * step);
  EXPECT_EQ(j["optimizer_tasks"].get<int>(), 4);
  // Rank 0 ends last: the iteration ends with its step.
  EXPECT_NEAR(j["makespan_s"].get<double>(), rank0["last_end_s"].get<double>() + step, 1e-9);
}

TEST(Cli, Llama3_70bOn4H100sIsOutOfMemoryWithTheNumbers) {
  // 70.6B parameters x 18 bytes / 4 ranks is about 318 GB per rank, far above 80 GiB.
  const CliResult r = Cli(ModelRun({"--model", "llama3-70b"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("out of memory      4 of 4 ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of 80 GiB  OOM"), std::string::npos) << r.out;
  const CliResult f = Cli(ModelRun({"--model", "llama3-70b", "--fail-on-oom"}));
  EXPECT_EQ(f.code, 1);
  EXPECT_EQ(f.err.rfind("out of memory: 1F1B rank 0 needs ", 0), 0u) << f.err;
}

TEST(Cli, ModelFlagsRejectBadValuesByName) {
  ExpectInvalid(Cli(ModelRun({"--model", "llama3-8b", "--tp", "3"})),
                "--tp: 3 does not divide the 32 heads of llama3-8b");
  ExpectInvalid(Cli(ModelRun({"--model", "llama3-8b", "--dtype", "fp4"})),
                "--dtype: unknown value 'fp4'; valid: bf16, fp16, fp8, mxfp8 (did you mean fp8?)");
  ExpectInvalid(Cli(ModelRun({"--model", "llama3-8b", "--recompute", "some"})),
                "--recompute: unknown value 'some'; valid: none, selective, full");
  ExpectInvalid(Cli(ModelRun({"--model", "llama3-8b", "--layers-per-stage", "8,8,8"})),
                "--layers-per-stage: 3 entries for 4 stages; give one per stage");
  ExpectInvalid(Cli(ModelRun({"--model", "llama3-8b", "--flash-attention", "maybe"})),
                "--flash-attention: unknown value 'maybe'; valid: on, off");
  ExpectInvalid(Cli(ModelRun({"--model", "llama3-8b", "--flash-attention", "onn"})),
                "--flash-attention: unknown value 'onn'; valid: on, off (did you mean on?)");
  ExpectInvalid(Cli(ModelRun({"--model", "llama3-8b", "--placement", "contigous"})),
                "--placement: invalid placement 'contigous'; valid: contiguous, round-robin, or a "
                "comma list of GPU numbers (the first GPU of each rank's group), e.g. 0,8,1,9 "
                "(did you mean contiguous?)");
  ExpectInvalid(Cli(ModelRun({"--model", "llama3-8b", "--zero", "4"})),
                "--zero: 4 is not a ZeRO stage; valid: 0, 1, 2, 3");
  ExpectInvalid(Cli(ModelRun({"--model", "llama3-8b", "--efficiency", "1.5"})),
                "--efficiency: invalid value '1.5'; expected a fraction of peak in [0.001, 1], e.g. "
                "0.45");
  ExpectInvalid(Cli(ModelRun({"--f", "1", "--b", "2", "--dtype", "fp8"})),
                "--dtype: applies with --model only");
  ExpectInvalid(Cli(ModelRun({"--model", "llama3-9b"})),
                "--model: unknown model 'llama3-9b'; valid: gpt3-1.5b, gpt3-6.2b, gpt3-14.6b, "
                "gpt3-28.3b, gpt3-175b, llama3-8b, llama3-8b-128k, llama3-70b, llama3-405b, "
                "mixtral-8x7b, mixtral-8x22b, dbrx, deepseek-v3, or a model file (.textproto, "
                ".json, .yaml) (did you mean llama3-8b?)");
  ExpectInvalid(Cli(ModelRun({"--model", "llama3-8b", "--profile", "p.csv"})),
                "--profile: give --profile or --model, not both");
}

TEST(Cli, ModelFileErrorsAreLocated) {
  const std::string path = WriteFile("m.yaml",
                                     "name: tiny\nlayers: 4\nhidden: 512\nheads: 8\n"
                                     "vocab: 1000\nmlp: SWIGLUE\n");
  ExpectInvalid(Cli(ModelRun({"--model", path})),
                path +
                    ":6:6: mlp: unknown value 'SWIGLUE'; valid: GELU, SWIGLU (did you mean "
                    "SWIGLU?)");
  const std::string ok = WriteFile("m2.yaml",
                                   "name: tiny\nlayers: 4\nhidden: 512\nheads: 8\n"
                                   "vocab: 1000\nseq_len: 256\nmlp: GELU\n"
                                   "norm: LAYERNORM\ntied_embeddings: true\n");
  const CliResult r = Cli(ModelRun({"--model", ok, "--format", "csv"}));
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(Cli, ModelPrintsPerStageCosts) {
  const CliResult r = Cli({"model", "--model", "gpt3-175b", "--pp", "8", "--format", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  // GPT-3 175B with its 50257 vocabulary: 174.6B parameters (Brown et al. 2020, Table 2.1).
  EXPECT_NE(r.out.find("\"parameters\": 1746"), std::string::npos) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("{\"stage\": 7, \"layers\": 12,"), std::string::npos);
}

}  // namespace
}  // namespace ppsim

namespace ppsim {
namespace {

TEST(CliPlatforms, ListsThePresetsWithTheirKeyNumbers) {
  const CliResult r = Cli({"platforms"});
  EXPECT_EQ(r.code, 0);
  std::istringstream lines(r.out);
  std::vector<std::string> names;
  for (std::string line; std::getline(lines, line) && !line.empty();) {
    names.push_back(line.substr(0, line.find(' ')));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"ideal", "h100-node", "dgx-a100", "dgx-h100",
                                             "h800-cluster", "hgx-h200", "dgx-b200", "gb200-nvl72",
                                             "gb300-nvl72", "pcie-l40s"}));
  EXPECT_NE(r.out.find("dgx-b200    8 GPUs per node (B200: 2.25 PFLOP/s bf16, 167.6 GiB); "
                       "NVSwitch 900 GB/s per GPU port; NIC 50 GB/s per GPU, rail-optimized 32 "
                       "nodes/leaf; host link 63 GB/s per GPU\n"),
            std::string::npos)
      << r.out;
  // A printed preset is a cluster file.
  const CliResult text = Cli({"platforms", "dgx-h100"});
  EXPECT_EQ(text.code, 0);
  const std::string path = WriteFile("dgx.textproto", text.out);
  const CliResult run = Cli({"run", "--schedule", "1F1B", "--pp", "16", "--microbatches", "16",
                             "--f", "1", "--b", "2", "--platform", path, "--nodes", "2"});
  EXPECT_EQ(run.code, 0) << run.err;
  ExpectInvalid(Cli({"platforms", "dgx"}),
                "ppsim platforms: unknown preset 'dgx'; valid: ideal, h100-node, dgx-a100, "
                "dgx-h100, h800-cluster, hgx-h200, dgx-b200, gb200-nvl72, gb300-nvl72, pcie-l40s");
}

double Makespan(const CliResult& r) {
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out)["makespan_s"].get<double>();
}

TEST(CliPlatforms, Llama70bOnTwoDgxH100NodesIsSlowerWithSlowerNics) {
  const std::vector<std::string> run = {
      "run",        "--schedule", "1F1B",     "--pp",    "16", "--microbatches", "32",  "--model",
      "llama3-70b", "--platform", "dgx-h100", "--nodes", "2",  "--format",       "json"};
  std::vector<std::string> slow = run;
  slow.insert(slow.end(), {"--set", "nic.bandwidth=100Gbps"});
  const CliResult fast_result = Cli(run);
  const nlohmann::json fast = nlohmann::json::parse(fast_result.out);
  // Ranks 0-7 on node 0, 8-15 on node 1: 32 activations and 32 gradients of s x b x h x 2 =
  // 8192 x 8192 x 2 bytes cross between GPU 7 and GPU 8 (rail 7 to rail 0, through the spine).
  EXPECT_EQ(fast["traffic"]["inter_node"]["transfers"].get<int64_t>(), 64);
  EXPECT_EQ(fast["traffic"]["inter_node"]["bytes"].get<double>(), 64.0 * 8192 * 8192 * 2);
  EXPECT_GT(Makespan(Cli(slow)), Makespan(fast_result));
}

TEST(CliPlatforms, JsonListsTheLinksWithBytesAndBusyTime) {
  // GPipe, one microbatch on GPUs 0 and 8 of two dgx-h100 nodes: one 1 GB activation out of
  // node 0's NIC 0 (5 us + 20 ms), one gradient back.
  const CliResult r = Cli({"run", "--schedule", "GPipe",    "--pp",    "2",   "--microbatches",
                           "1",   "--f",        "1ms",      "--b",     "2ms", "--message-bytes",
                           "1GB", "--platform", "dgx-h100", "--nodes", "2",   "--placement",
                           "0,8", "--format",   "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const nlohmann::json& links = j["links"];
  ASSERT_EQ(links.size(), 4u);
  EXPECT_EQ(links[0]["link"].get<std::string>(), "node0.nic0.tx");
  EXPECT_EQ(links[0]["inter_node"].get<bool>(), true);
  EXPECT_EQ(links[0]["bandwidth_bytes_per_s"].get<double>(), 50e9);
  EXPECT_EQ(links[0]["bytes"].get<double>(), 1e9);
  EXPECT_NEAR(links[0]["busy_s"].get<double>(), 5e-6 + 0.02, 1e-12);
  const double makespan = 3 * 2e-3 + 2 * (5e-6 + 0.02);
  EXPECT_NEAR(j["makespan_s"].get<double>(), makespan, 1e-12);
  EXPECT_NEAR(links[0]["utilization"].get<double>(), 1e9 / (50e9 * makespan), 1e-12);
  EXPECT_EQ(links[1]["link"].get<std::string>(), "node0.nic0.rx");
  EXPECT_EQ(j["traffic"]["intra_node"]["transfers"].get<int64_t>(), 0);
}

TEST(CliPlatforms, BadClustersAndSettingsExitTwoWithTheLocation) {
  const std::string bad = WriteFile("bad.json", "{\"gpu\": {\"dense_bf16\": \"fast\"}}");
  ExpectInvalid(Cli({"run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "8", "--f", "1",
                     "--b", "2", "--platform", bad}),
                bad +
                    ":1:24: gpu.dense_bf16: invalid FLOP rate 'fast'; expected a positive FLOP "
                    "rate such as 989TFLOP/s or 2.25PFLOPS (a bare number is FLOP/s)\n" +
                    bad + ": gpu.memory: required; e.g. 80GiB\n" + bad +
                    ": gpus_per_node: required; e.g. 8\n" + bad +
                    ": intra_node.kind: required; valid: NVSWITCH, NVLINK, PCIE, UNLIMITED\n" +
                    bad + ": intra_node.bandwidth: required; e.g. 450GB/s");
  ExpectInvalid(Cli({"run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "8", "--f", "1",
                     "--b", "2", "--platform", "dgx-h100", "--set", "nic.speed=1Gbps"}),
                "--set nic.speed: unknown key; valid: name, description, gpu.name, "
                "gpu.dense_bf16, gpu.dense_fp8, gpu.memory, gpu.memory_bandwidth, gpu.sms, "
                "gpu.matmul_efficiency, gpu.matmul_efficiency_fp8, gpu.attention_efficiency, "
                "gpu.memory_efficiency, gpu.mxfp8, "
                "gpus_per_node, "
                "nodes, intra_node.kind, intra_node.bandwidth, intra_node.latency, "
                "nic.attachment, nic.bandwidth, nic.latency, network.topology, "
                "network.nodes_per_leaf, network.oversubscription, network.uplink_latency, "
                "host_link.bandwidth, host_link.latency");
  ExpectInvalid(RunIdeal({"--nodes", "0"}), "--nodes: must be at least 1; got 0");
  ExpectInvalid(RunIdeal({"--hosts", "a,b"}),
                "--hosts: applies to an XML platform (--platform FILE.xml) only");
  ExpectInvalid(RunIdeal({"--dp", "2"}),
                "--dp: 2 replicas all-reduce their gradients, but no stage has any; give "
                "--model, a profile with grad_bytes, or --grad-bytes");
  ExpectInvalid(Cli({"run", "--schedule", "1F1B", "--pp", "4", "--microbatches", "8", "--model",
                     "llama3-8b", "--dtype", "fp8", "--platform", "dgx-a100"}),
                "--dtype: fp8 needs a GPU with that precision; A100 SXM4 80GB of dgx-a100 has no "
                "peak for it (gpu.dense_fp8); use bf16 or --set gpu.dense_fp8=...");
}

constexpr const char* kTwoHostXml = R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="lab" routing="Full">
    <host id="a" speed="1Gf"/>
    <host id="b" speed="2Gf"/>
    <link id="wire" bandwidth="10GBps" latency="5us"/>
    <route src="a" dst="b"><link_ctn id="wire"/></route>
  </zone>
</platform>
)";

TEST(CliPlatforms, SimGridXmlPlatformsRunWithAHostPerGpu) {
  const std::string xml = WriteFile("lab.xml", kTwoHostXml);
  const std::vector<std::string> run = {
      "run", "--schedule", "GPipe", "--pp",     "2",   "--microbatches",
      "1",   "--f",        "1ms",   "--b",      "2ms", "--message-bytes",
      "1GB", "--platform", xml,     "--format", "json"};
  std::vector<std::string> args = run;
  args.insert(args.end(), {"--hosts", "a,b"});
  // Durations hold whatever the host's speed: 2 x 1 ms + 2 x 2 ms + 2 x (5 us + 1 GB / 10 GB/s).
  EXPECT_NEAR(Makespan(Cli(args)), 6e-3 + 2 * (5e-6 + 0.1), 1e-12);
  args = run;
  args.insert(args.end(), {"--hosts", "a,c"});
  ExpectInvalid(Cli(args), "--hosts: 'c' not in " + xml + "; its hosts: a, b");
  args = run;
  args.insert(args.end(), {"--hosts", "a,b", "--engine", "critical-path"});
  ExpectInvalid(Cli(args),
                "--engine: critical-path needs a cluster (a preset or a cluster file); "
                "the routes of the XML platform " +
                    xml + " are known to SimGrid only; use --engine simgrid");
  args = run;
  args.insert(args.end(), {"--hosts", "a"});
  ExpectInvalid(Cli(args),
                "--pp: 2 ranks need 2 GPUs; platform " + xml + " has 1 (the hosts of --hosts)");
}

TEST(CliPlatforms, AnXmlPlatformWithoutARouteTheRunNeedsIsRefusedNamingThePair) {
  // Host c has no route to a: SimGrid would abort when the first transfer starts.
  std::string text = kTwoHostXml;
  text.insert(text.find("    <link"), "    <host id=\"c\" speed=\"1Gf\"/>\n");
  const std::string xml = WriteFile("island.xml", text);
  const std::vector<std::string> run = {
      "run", "--schedule", "GPipe", "--pp",       "2", "--microbatches", "1", "--f",
      "1ms", "--b",        "2ms",   "--platform", xml};
  std::vector<std::string> args = run;
  args.insert(args.end(), {"--hosts", "a,c"});
  ExpectInvalid(Cli(args), "--hosts: no route from 'a' to 'c' in " + xml +
                               ", and the run sends from GPU 0 to GPU 1; order the hosts so that "
                               "GPUs that communicate have a route, or add the route to the file");
  // The route is symmetric: b sends to a over it.
  args = run;
  args.insert(args.end(), {"--hosts", "b,a", "--format", "json"});
  EXPECT_NEAR(Makespan(Cli(args)), 2 * 1e-3 + 2 * 2e-3 + 2 * 5e-6, 1e-12);
}

}  // namespace
}  // namespace ppsim

namespace ppsim {
namespace {

std::vector<std::string> TracedRun(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "run", "--schedule", "1F1B", "--pp",         "4",    "--microbatches",  "8",    "--f",
      "1ms", "--b",        "2ms",  "--activation", "1GiB", "--message-bytes", "32MiB"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CliTraces, WritesEachOutputIdenticallyOnEveryRun) {
  // The same command twice (the command line is recorded in the traces).
  const std::string dir = ::testing::TempDir();
  std::map<std::string, std::string> first;
  for (int k = 0; k < 2; ++k) {
    const CliResult r = Cli(TracedRun({"--trace", dir + "t.pftrace", "--chrome-trace",
                                       dir + "t.json.gz", "--timeline", dir + "t.html"}));
    ASSERT_EQ(r.code, 0) << r.err;
    for (const char* extension : {".pftrace", ".json.gz", ".html"}) {
      const std::string bytes = ReadFile(dir + "t" + extension);
      EXPECT_FALSE(Exists(dir + "t" + extension + ".tmp"));
      if (k == 0) {
        EXPECT_GT(bytes.size(), 1000u) << extension;
        first[extension] = bytes;
      } else {
        EXPECT_TRUE(bytes == first[extension]) << extension << " differs between runs";
      }
    }
  }
}

TEST(CliTraces, SeveralSchedulesGetOneFileEach) {
  const std::string dir = ::testing::TempDir();
  for (const char* name : {"both.1F1B.pftrace", "both.GPipe.pftrace", "both.pftrace"}) {
    std::remove((dir + name).c_str());
  }
  std::vector<std::string> args = TracedRun({"--trace", dir + "both.pftrace"});
  args[2] = "1F1B,GPipe";
  const CliResult r = Cli(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Exists(dir + "both.1F1B.pftrace"));
  EXPECT_TRUE(Exists(dir + "both.GPipe.pftrace"));
  EXPECT_FALSE(Exists(dir + "both.pftrace"));
}

TEST(CliTraces, BadOutputsAndWindowsExitTwoBeforeRunning) {
  const std::string dir = ::testing::TempDir();
  auto err = [](const std::vector<std::string>& extra) {
    const CliResult r = Cli(TracedRun(extra));
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    return r.err;
  };
  EXPECT_EQ(err({"--trace", "t.json"}),
            "--trace: 't.json' must end in .pftrace or .pftrace.gz; for JSON use --chrome-trace\n");
  EXPECT_EQ(err({"--chrome-trace", "t.pftrace"}),
            "--chrome-trace: 't.pftrace' must end in .json or .json.gz\n");
  EXPECT_EQ(err({"--timeline", "t.png"}), "--timeline: 't.png' must end in .svg or .html\n");
  EXPECT_EQ(err({"--timeline", dir + "no/such/t.svg"}), "--timeline: cannot write '" + dir +
                                                            "no/such/t.svg': folder '" + dir +
                                                            "no/such/' does not exist\n");
  EXPECT_EQ(err({"--trace-microbatches", "0:4"}),
            "--trace-microbatches: limits a trace or timeline; add --trace, --chrome-trace or "
            "--timeline\n");
  const std::string never = dir + "cli_traces_never_written.pftrace";
  std::remove(never.c_str());
  EXPECT_EQ(err({"--trace", never, "--trace-microbatches", "6:10"}),
            "--trace-microbatches: microbatches 6:10 are not all in the run; it has microbatches "
            "0 to 7 (window 0:8)\n");
  EXPECT_FALSE(Exists(never));
}

}  // namespace
}  // namespace ppsim

namespace ppsim {
namespace {

TEST(CliHelp, EveryCommandPrintsItsOwnOptionsAndExitsZero) {
  struct Case {
    std::vector<std::string> args;
    std::string usage;
    std::string option;
  };
  const Case cases[] = {
      {{"help", "run"}, "usage: ppsim run --schedule NAME", "--microbatches M"},
      {{"run", "-h"}, "usage: ppsim run --schedule NAME", "--microbatches M"},
      {{"run", "--pp", "4", "--help"}, "usage: ppsim run --schedule NAME", "--trace FILE"},
      {{"schedules", "--help"}, "usage: ppsim schedules", ""},
      {{"sweep", "--help"}, "usage: ppsim sweep FILE -o RESULTS.csv", "-o [ --output ] FILE"},
      {{"help", "sweep"}, "usage: ppsim sweep FILE -o RESULTS.csv", "--point-timeout TIME"},
      {{"schedule", "-h"}, "usage: ppsim schedule", "--stages-per-rank V"},
      {{"model", "--help"}, "usage: ppsim model", "--sequence-parallel"},
      {{"merge", "-h"}, "usage: ppsim merge", "-o [ --output ] FILE"},
      {{"report", "-h"}, "usage: ppsim report", "-o [ --output ] REPORT.html"},
      {{"platforms", "--help"}, "usage: ppsim platforms", "--keys"},
  };
  for (const Case& c : cases) {
    const CliResult r = Cli(c.args);
    EXPECT_EQ(r.code, 0) << c.args[0] << " " << c.args[1];
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out.rfind(c.usage, 0), 0u) << r.out;
    EXPECT_NE(r.out.find(c.option), std::string::npos) << r.out;
  }
}

TEST(CliHelp, RunGroupsItsOptions) {
  const std::string out = Cli({"run", "--help"}).out;
  std::vector<size_t> at;
  for (const char* group : {"\nschedule:\n", "\ncosts (", "\nanalytic model:\n", "\ncluster:\n",
                            "\nparallelism and placement:\n", "\noutputs:\n"}) {
    at.push_back(out.find(group));
    EXPECT_NE(at.back(), std::string::npos) << group;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end()));
  // Each flag is in its group: --tp under parallelism, --set under cluster.
  EXPECT_GT(out.find("  --tp T"), at[4]);
  EXPECT_GT(out.find("  --set PATH=VALUE"), at[3]);
  EXPECT_LT(out.find("  --set PATH=VALUE"), at[4]);
}

TEST(CliHelp, UnknownCommandsAndHelpTopicsSuggestTheClosest) {
  EXPECT_EQ(Cli({"help", "swep"}).err,
            "ppsim help: unknown command 'swep'; valid: run, schedule, schedules, model, sweep, "
            "merge, search, profile, calibrate, serve, report, platforms (did you mean sweep?)\n");
  EXPECT_EQ(Cli({"help", "swep"}).code, 2);
}

TEST(CliJson, OutputIsValidJsonWhateverTheNamesHold) {
  const std::string name = "tiny \"quoted\", \\ and\nnew line";
  const std::string path = WriteFile("quoted.json", nlohmann::json({{"name", name},
                                                                    {"layers", 4},
                                                                    {"hidden", 512},
                                                                    {"heads", 8},
                                                                    {"vocab", 1000},
                                                                    {"seq_len", 256},
                                                                    {"mlp", "GELU"},
                                                                    {"norm", "LAYERNORM"},
                                                                    {"tied_embeddings", true}})
                                                        .dump());
  const CliResult model = Cli({"model", "--model", path, "--pp", "2", "--format", "json"});
  ASSERT_EQ(model.code, 0) << model.err;
  EXPECT_EQ(nlohmann::json::parse(model.out)["model"], name);
  const CliResult run = Cli({"run", "--schedule", "1F1B", "--pp", "2", "--microbatches", "2",
                             "--model", path, "--platform", "ideal", "--format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["model"], name);
}

}  // namespace
}  // namespace ppsim
