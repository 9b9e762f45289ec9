// Experiment files and sweeps: parsing, expansion, skips, verbatim errors, and the guarantees of
// `ppsim sweep` (order and bytes for any -j, resume after a kill, crashes, shards).
#include "batch/sweep.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "batch/results.h"
#include "cli/cli.h"
#include "experiments/experiment.h"
#include "tests/support/cli.h"

namespace ppsim {
namespace {

std::string Dir() { return ::testing::TempDir(); }

// The results without the wall time (the last CSV column, and the JSON lines' own wall_s).
std::string WithoutWallTime(const std::string& text) {
  static const std::regex kCsvWall(",[0-9.e+-]+\n");
  static const std::regex kJsonWall(", \"wall_s\": [0-9.e+-]+");
  return std::regex_replace(std::regex_replace(text, kJsonWall, ""), kCsvWall, ",\n");
}

constexpr const char* kTextProto = R"(name: "grid"
base { pp: 4 f: "1ms" b: "2ms" message_bytes: "16MiB" platform: "h100-node" }
axes {
  field: "schedule" values: "1F1B" values: "GPipe" values: "Interleaved1F1B"
  with { field: "stages_per_rank" values: "1" values: "1" values: "2" }
}
axes { field: "microbatches" values: "4" values: "8" }
skip {
  when { field: "schedule" equals: "GPipe" }
  when { field: "microbatches" not_equals: "4" }
  reason: "GPipe only at 4"
}
)";

constexpr const char* kJson = R"({"name": "grid",
  "base": {"pp": 4, "f": "1ms", "b": "2ms", "messageBytes": "16MiB", "platform": "h100-node"},
  "axes": [
    {"field": "schedule", "values": ["1F1B", "GPipe", "Interleaved1F1B"],
     "with": [{"field": "stages_per_rank", "values": ["1", "1", "2"]}]},
    {"field": "microbatches", "values": ["4", "8"]}],
  "skip": [{"when": [{"field": "schedule", "equals": ["GPipe"]},
                     {"field": "microbatches", "not_equals": ["4"]}],
            "reason": "GPipe only at 4"}]}
)";

constexpr const char* kYaml = R"(name: grid
base: {pp: 4, f: 1ms, b: 2ms, message_bytes: 16MiB, platform: h100-node}
axes:
  - field: schedule
    values: [1F1B, GPipe, Interleaved1F1B]
    with:
      - {field: stages_per_rank, values: ["1", "1", "2"]}
  - field: microbatches
    values: [4, 8]
skip:
  - when:
      - {field: schedule, equals: [GPipe]}
      - {field: microbatches, not_equals: ["4"]}
    reason: GPipe only at 4
)";

TEST(Experiment, TheThreeFormatsReadAsTheSameExperiment) {
  ExperimentPlan text, json, yaml;
  ASSERT_TRUE(LoadExperiment(WriteFile("grid.textproto", kTextProto), &text).ok());
  ASSERT_TRUE(ExpandPoints(kDefaultMaxPoints, &text).ok());
  const Status status = LoadExperiment(WriteFile("grid.json", kJson), &json);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(ExpandPoints(kDefaultMaxPoints, &json).ok());
  ASSERT_TRUE(LoadExperiment(WriteFile("grid.yaml", kYaml), &yaml).ok());
  ASSERT_TRUE(ExpandPoints(kDefaultMaxPoints, &yaml).ok());
  using google::protobuf::util::MessageDifferencer;
  EXPECT_TRUE(MessageDifferencer::Equals(text.experiment, json.experiment));
  EXPECT_TRUE(MessageDifferencer::Equals(text.experiment, yaml.experiment));
}

TEST(Experiment, ExpandsTheProductFirstAxisSlowestWithZippedFields) {
  ExperimentPlan plan;
  ASSERT_TRUE(LoadExperiment(WriteFile("grid.yaml", kYaml), &plan).ok());
  ASSERT_TRUE(ExpandPoints(kDefaultMaxPoints, &plan).ok());
  EXPECT_EQ(plan.columns,
            (std::vector<std::string>{"schedule", "stages_per_rank", "microbatches"}));
  ASSERT_EQ(plan.points.size(), 6u);  // 3 (schedule, zipped) x 2
  const std::vector<std::vector<std::string>> expected = {{"1F1B", "1", "4"},
                                                          {"1F1B", "1", "8"},
                                                          {"GPipe", "1", "4"},
                                                          {"GPipe", "1", "8"},
                                                          {"Interleaved1F1B", "2", "4"},
                                                          {"Interleaved1F1B", "2", "8"}};
  for (size_t i = 0; i < plan.points.size(); ++i) {
    EXPECT_EQ(plan.points[i].index, static_cast<int64_t>(i));
    EXPECT_EQ(plan.points[i].values, expected[i]);
  }
  EXPECT_EQ(plan.points[5].config.stages_per_rank(), 2);
  EXPECT_EQ(plan.points[5].config.microbatches(), 8);
  EXPECT_EQ(plan.points[5].config.pp(), 4);  // from the base
  // The skip rule: GPipe at 8 only.
  for (const SweepPoint& p : plan.points) {
    EXPECT_EQ(p.skipped, p.index == 3) << p.index;
  }
  EXPECT_EQ(plan.points[3].reason, "GPipe only at 4");
}

TEST(Experiment, ReportsEveryProblemInTheFileVerbatim) {
  const std::string path = WriteFile("bad.yaml", R"(base: {pp: 4}
axes:
  - field: microbatch
    values: [8]
  - field: schedule
    values: [1F1B, GPipe]
    with:
      - {field: stages_per_rank, values: ["1"]}
  - field: pp
    values: [two]
  - field: set.nic.speed
    values: [1Gbps]
  - field: schedule
    values: []
skip:
  - when: [{field: platfrom, equals: [ideal]}]
)");
  ExperimentPlan plan;
  EXPECT_EQ(
      LoadExperiment(path, &plan).message(),
      path +
          ":8:42: axes[1].with[0].values: 1 values zipped with the 2 of schedule; give "
          "exactly one per value of the axis\n" +
          path + ":14:13: axes[4].values: no values; an axis needs at least one\n" + path +
          ":3:12: axes[0].field: unknown field 'microbatch'; valid: schedule, "
          "schedule_file, pp, microbatches, global_batch, stages_per_rank, "
          "microbatch_group_size, stage_to_rank, f, i, w, b, overlap, activation, "
          "activation_w, message_bytes, grad_bytes, costs_per, profile, memory_limit, "
          "memory_reserve, activation_overhead, fail_on_oom, model, seq_len, "
          "microbatch_size, dtype, sequence_parallel, recompute, recompute_modules, "
          "recompute_method, recompute_num_layers, offload_modules, flash_attention, zero, "
          "dp_shard, reshard_after_forward, grad_dtype, bytes_per_param, cp_comm_type, "
          "mtp_layers, cp_a2a_size, tp_comm_overlap, layers_per_stage, "
          "embedding_as_layer, loss_as_layer, efficiency, megatron, platform, nodes, calibration, "
          "placement, "
          "hosts, tp, cp, ep, moe_node_limit, comm_sms, overlap_moe_expert_parallel_comm, "
          "delay_wgrad_compute, dp, grad_bucket, collective_algorithm, "
          "replicas, "
          "p2p_latency, p2p_bandwidth, "
          "p2p_mode, engine, "
          "format, train_tokens, gpu_hour_cost, max_tasks, torchtitan, set.PATH (did you mean "
          "microbatches?)\n" +
          path +
          ":11:12: axes[3].field: unknown cluster field 'nic.speed'; valid: name, "
          "description, gpu.name, gpu.dense_bf16, gpu.dense_fp8, gpu.memory, "
          "gpu.memory_bandwidth, gpu.sms, gpu.matmul_efficiency, gpu.matmul_efficiency_fp8, "
          "gpu.attention_efficiency, "
          "gpu.memory_efficiency, gpu.mxfp8, gpus_per_node, nodes, intra_node.kind, "
          "intra_node.bandwidth, intra_node.latency, nic.attachment, nic.bandwidth, "
          "nic.latency, network.topology, network.nodes_per_leaf, "
          "network.oversubscription, network.uplink_latency, host_link.bandwidth, "
          "host_link.latency\n" +
          path +
          ":13:12: axes[4].field: schedule is swept twice; sweep a field in one axis "
          "(zip fields that vary together with `with`)\n" +
          path +
          ":16:20: skip[0].when[0].field: unknown field 'platfrom'; valid: schedule, "
          "schedule_file, pp, microbatches, global_batch, stages_per_rank, "
          "microbatch_group_size, stage_to_rank, f, i, w, b, overlap, activation, "
          "activation_w, message_bytes, grad_bytes, costs_per, profile, memory_limit, "
          "memory_reserve, activation_overhead, fail_on_oom, model, seq_len, "
          "microbatch_size, dtype, sequence_parallel, recompute, recompute_modules, "
          "recompute_method, recompute_num_layers, offload_modules, flash_attention, zero, "
          "dp_shard, reshard_after_forward, grad_dtype, bytes_per_param, cp_comm_type, "
          "mtp_layers, cp_a2a_size, tp_comm_overlap, layers_per_stage, "
          "embedding_as_layer, loss_as_layer, efficiency, megatron, platform, nodes, calibration, "
          "placement, "
          "hosts, tp, cp, ep, moe_node_limit, comm_sms, overlap_moe_expert_parallel_comm, "
          "delay_wgrad_compute, dp, grad_bucket, collective_algorithm, "
          "replicas, "
          "p2p_latency, p2p_bandwidth, "
          "p2p_mode, engine, "
          "format, train_tokens, gpu_hour_cost, max_tasks, torchtitan, set.PATH (did you mean "
          "platform?)\n" +
          path + ":10:14: axes[2].values[0]: expected an integer, got 'two'");
}

// A small grid: 2 schedules x 3 microbatch counts, on ideal with latency (6 points).
std::string Grid(const std::string& name, const std::string& extra = "") {
  return WriteFile(name, R"(base: {pp: 4, f: 1ms, b: 2ms, platform: ideal, p2p_latency: 10us}
axes:
  - {field: schedule, values: [1F1B, GPipe]}
  - {field: microbatches, values: ["4", "8", "12"]}
)" + extra);
}

// The experiment names its baseline (a value of the first axis, or a point's number); the sweep
// records it beside the results and the report compares every point with it unless --baseline
// names another. A baseline that names no point is an error before anything runs.
TEST(Sweep, TheExperimentsBaselineReachesTheReport) {
  const std::string path = Grid("baseline.yaml", "baseline: GPipe\n");
  const std::string out = Dir() + "baseline.csv";
  ASSERT_EQ(Cli({"sweep", path, "-o", out, "-j", "2"}).code, 0);
  const nlohmann::json about = nlohmann::json::parse(ReadFile(Dir() + "baseline.about.json"));
  EXPECT_EQ(about["baseline"], "GPipe");
  const CliResult report = Cli({"report", out, "-o", Dir() + "baseline.html"});
  ASSERT_EQ(report.code, 0) << report.err;
  const std::string html = ReadFile(Dir() + "baseline.html");
  // The first point of GPipe is point 3 (schedule varies slowest).
  EXPECT_NE(html.find("<dt>baseline</dt><dd>point 3 (schedule=GPipe, microbatches=4)</dd>"),
            std::string::npos);
  EXPECT_NE(html.find("data-metric=\"speedup_vs_baseline\""), std::string::npos);
  const CliResult chosen = Cli({"report", out, "-o", Dir() + "baseline0.html", "--baseline", "0"});
  ASSERT_EQ(chosen.code, 0) << chosen.err;
  EXPECT_NE(ReadFile(Dir() + "baseline0.html")
                .find("<dt>baseline</dt><dd>point 0 (schedule=1F1B, microbatches=4)</dd>"),
            std::string::npos);
  // An about file whose baseline names no point of the results: the report says where it is.
  WriteFile("baseline.about.json", R"({"baseline": "9"})");
  const CliResult stale = Cli({"report", out, "-o", Dir() + "stale.html"});
  EXPECT_EQ(stale.code, 2);
  EXPECT_EQ(stale.err, Dir() +
                           "baseline.about.json: baseline: no point '9'; valid: a point of "
                           "the file (0-5) or a value of its first axis\n");
  const std::string unknown = Grid("unknown-baseline.yaml", "baseline: \"6\"\n");
  const CliResult r = Cli({"sweep", unknown, "-o", Dir() + "unknown-baseline.csv"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, unknown +
                       ":5:11: baseline: no point '6'; valid: a point number (0-5) or a value of "
                       "the first axis, schedule (1F1B, GPipe)\n");
  EXPECT_FALSE(Exists(Dir() + "unknown-baseline.csv"));
}

TEST(Sweep, PointsWhichAreNotValidRunsStopTheSweepBeforeAnythingRuns) {
  const std::string path = Grid("invalid.yaml", "  - {field: stages_per_rank, values: [\"0\"]}\n");
  const std::string out = Dir() + "invalid.csv";
  std::remove(out.c_str());
  const CliResult r = Cli({"sweep", path, "-o", out, "-j", "1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, path +
                       ":5:39: axes[2].values[0]: must be at least 1; got 0 (point 0: "
                       "schedule=1F1B, microbatches=4, stages_per_rank=0; and 5 more)\n" +
                       path +
                       ": nothing ran; fix these points, or set skip_invalid: true to record "
                       "them as skipped\n");
  EXPECT_FALSE(Exists(out));
  // With skip_invalid they become skipped rows with the message.
  const std::string skipping = Grid("skipping.yaml",
                                    "  - {field: stages_per_rank, values: [\"0\"]}\n"
                                    "skip_invalid: true\n");
  const CliResult s = Cli({"sweep", skipping, "-o", out, "-j", "1"});
  EXPECT_EQ(s.code, 0) << s.err;
  const std::string csv = ReadFile(out);
  EXPECT_NE(csv.find("\n0,1F1B,4,0,,,,,,,,,,,,,,,,,skipped," + skipping +
                     ":5:39: axes[2].values[0]: must be at least 1; got 0,0\n"),
            std::string::npos)
      << csv;
}

TEST(Sweep, RowsAreInPointOrderAndTheSameForAnyNumberOfJobs) {
  const std::string path = Grid("order.yaml");
  ASSERT_EQ(Cli({"sweep", path, "-o", Dir() + "j1.csv", "-j", "1"}).code, 0);
  const CliResult r = Cli({"sweep", path, "-o", Dir() + "j2.csv", "-j", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string j1 = ReadFile(Dir() + "j1.csv");
  EXPECT_EQ(WithoutWallTime(j1), WithoutWallTime(ReadFile(Dir() + "j2.csv")));
  EXPECT_EQ(WithoutWallTime(ReadFile(Dir() + "j1.jsonl")),
            WithoutWallTime(ReadFile(Dir() + "j2.jsonl")));
  std::istringstream lines(j1);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line,
            "point,schedule,microbatches,makespan_s,bubble_over_makespan,bubble_over_ideal,"
            "stage_bubble_rate,throughput_microbatches_per_s,samples_per_s,tokens_per_s,mfu,hfu,"
            "peak_memory_bytes,static_memory_bytes,memory_capacity_bytes,oom,time_to_train_s,"
            "gpu_hours,cost,status,error,wall_s");
  for (int point = 0; point < 6; ++point) {
    ASSERT_TRUE(std::getline(lines, line));
    EXPECT_EQ(line.substr(0, line.find(',')), std::to_string(point));
  }
  EXPECT_FALSE(Exists(Dir() + "j2.csv.partial"));
  // GPipe, m = 4 on 4 ranks (point 3): (m + p - 1) F + m B + (p - 1) B + 2 (p - 1) latency =
  // 7 + 8 + 6 ms + 60 us.
  const size_t row = j1.find("\n3,GPipe,4,");
  ASSERT_NE(row, std::string::npos) << j1;
  const double makespan = 0.021 + 6 * 10e-6;
  EXPECT_NEAR(std::stod(j1.substr(row + 11)), makespan, 1e-12);
  // Its other columns, by name: 4 ranks busy 4 x 3 ms each; 4 sequences an iteration; the ideal
  // platform's GPUs hold 80 GiB; no model, sequence length or --train-tokens, so no tokens, MFU,
  // HFU or training figures.
  std::map<std::string, std::string> cell;
  std::vector<std::string> names;
  std::istringstream header(j1.substr(0, j1.find('\n')));
  for (std::string name; std::getline(header, name, ',');) names.push_back(name);
  std::istringstream fields(j1.substr(row + 1, j1.find('\n', row + 1) - row - 1));
  for (size_t c = 0; c < names.size(); ++c) std::getline(fields, cell[names[c]], ',');
  const double busy = 4 * 4 * 3e-3;
  EXPECT_NEAR(std::stod(cell["bubble_over_makespan"]), 1 - busy / (4 * makespan), 1e-12);
  EXPECT_NEAR(std::stod(cell["bubble_over_ideal"]), (4 * makespan - busy) / busy, 1e-12);
  EXPECT_NEAR(std::stod(cell["throughput_microbatches_per_s"]), 4 / makespan, 1e-9);
  EXPECT_NEAR(std::stod(cell["samples_per_s"]), 4 / makespan, 1e-9);
  EXPECT_EQ(cell["memory_capacity_bytes"], "85899345920");
  EXPECT_EQ(cell["oom"], "false");
  for (const char* none : {"tokens_per_s", "mfu", "hfu", "time_to_train_s", "gpu_hours", "cost"}) {
    EXPECT_EQ(cell[none], "") << none;
  }
  EXPECT_EQ(cell["status"], "ok");
}

// With a model, --train-tokens and --gpu-hour-cost every column has a value (HFU with
// recomputation only), each the run's own: tokens/s = samples/s x the sequence length, time to
// train = tokens / tokens/s, GPU-hours = that x 4 GPUs / 3600 s, cost = GPU-hours x 2.
TEST(Sweep, RowsCarryTheRunsWorkloadFigures) {
  const std::string path = WriteFile(
      "workload.yaml",
      R"(base: {schedule: 1F1B, pp: 4, microbatches: 8, model: llama3-8b, platform: h100-node,
       train_tokens: "1000000000", gpu_hour_cost: 2}
axes:
  - {field: recompute, values: [none, full]}
)");
  const std::string out = Dir() + "workload.csv";
  const CliResult r = Cli({"sweep", path, "-o", out, "-j", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string csv = ReadFile(out);
  ResultsTable table;
  ASSERT_TRUE(ReadResultsCsv(csv, out, &table).ok());
  ASSERT_EQ(table.rows.size(), 2u);
  std::istringstream lines(ReadFile(Dir() + "workload.jsonl"));
  for (const ResultRow& row : table.rows) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line));
    const nlohmann::json run = nlohmann::json::parse(line)["result"];
    const double seq_len = run["assumptions"]["seq_len"].get<double>();
    const ResultValues& v = row.values;
    ASSERT_TRUE(v[kTokensColumn] && v[kMfuColumn] && v[kTimeToTrainColumn] && v[kGpuHoursColumn] &&
                v[kCostColumn]);
    EXPECT_NEAR(*v[kTokensColumn], *v[kSamplesColumn] * seq_len, 1e-9 * *v[kTokensColumn]);
    EXPECT_EQ(*v[kMfuColumn], run["mfu"].get<double>());
    EXPECT_NEAR(*v[kTimeToTrainColumn], 1e9 / *v[kTokensColumn], 1e-9 * *v[kTimeToTrainColumn]);
    EXPECT_NEAR(*v[kGpuHoursColumn], *v[kTimeToTrainColumn] * 4 / 3600, 1e-9 * *v[kGpuHoursColumn]);
    EXPECT_NEAR(*v[kCostColumn], 2 * *v[kGpuHoursColumn], 1e-9 * *v[kCostColumn]);
    EXPECT_EQ(v[kHfuColumn].has_value(), row.point == 1) << row.point;  // recompute full
  }
  // Recomputing every forward does more work than the model counts.
  EXPECT_GT(*table.rows[1].values[kHfuColumn], *table.rows[1].values[kMfuColumn]);
}

TEST(Sweep, WritesATimelinePicturePerPointOnRequest) {
  const std::string path = Grid("timelines.yaml");
  const std::string dir = Dir() + "timelines";
  const CliResult r = Cli({"sweep", path, "-o", Dir() + "timelines.csv", "-j", "2", "--timelines",
                           dir, "--timeline-format", "svg"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Points 0-2: 1F1B with m = 4, 8, 12; points 3-5 GPipe: 2pm boxes each.
  const int32_t ms[] = {4, 8, 12, 4, 8, 12};
  for (int point = 0; point < 6; ++point) {
    const std::string file = dir + "/point-000" + std::to_string(point) + ".svg";
    ASSERT_TRUE(Exists(file)) << file;
    const std::string svg = ReadFile(file);
    size_t boxes = 0;
    for (size_t at = svg.find("class=\"box\""); at != std::string::npos;
         at = svg.find("class=\"box\"", at + 1)) {
      ++boxes;
    }
    EXPECT_EQ(boxes, size_t{2 * 4} * ms[point]) << file;
    EXPECT_NE(svg.find(point < 3 ? "1F1B · pp 4" : "GPipe · pp 4"), std::string::npos);
  }
  EXPECT_EQ(Cli({"sweep", path, "-o", Dir() + "t.csv", "--timeline-format", "png"}).err,
            "--timeline-format: unknown format 'png'; valid: html, svg\n");
  EXPECT_EQ(
      Cli({"sweep", path, "-o", Dir() + "t.csv", "--timelines", Dir() + "no/such"}).err,
      "--timelines: cannot create folder '" + Dir() + "no/such': No such file or directory\n");
}

TEST(Sweep, AKilledSweepResumesIntoTheFileAnUninterruptedOneWrites) {
  const std::string path = Grid("resume.yaml");
  const std::string full = Dir() + "full.csv";
  ASSERT_EQ(Cli({"sweep", path, "-o", full, "-j", "2"}).code, 0);
  const std::string out = Dir() + "killed.csv";
  std::remove(out.c_str());
  std::remove((out + ".partial").c_str());
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("PPSIM_SWEEP_KILL_AFTER", "3", 1);
    Cli({"sweep", path, "-o", out, "-j", "2"});
    _exit(0);
  }
  int wait_status = 0;
  ASSERT_EQ(waitpid(pid, &wait_status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(wait_status));
  EXPECT_EQ(WTERMSIG(wait_status), SIGKILL);
  // What it finished is in the journal; no results file was half written.
  EXPECT_FALSE(Exists(out));
  const std::string journal = ReadFile(out + ".partial");
  EXPECT_EQ(std::count(journal.begin(), journal.end(), '\n'), 4);  // header + 3 points
  const CliResult again = Cli({"sweep", path, "-o", out, "-j", "2"});
  EXPECT_EQ(again.code, 2);
  EXPECT_EQ(again.err, out +
                           ".partial: an interrupted sweep's results; add --resume to continue "
                           "it, or delete it to start over\n");
  const CliResult resumed = Cli({"sweep", path, "-o", out, "-j", "2", "--resume"});
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("3 resumed"), std::string::npos) << resumed.out;
  EXPECT_EQ(WithoutWallTime(ReadFile(out)), WithoutWallTime(ReadFile(full)));
  EXPECT_EQ(WithoutWallTime(ReadFile(Dir() + "killed.jsonl")),
            WithoutWallTime(ReadFile(Dir() + "full.jsonl")));
  EXPECT_FALSE(Exists(out + ".partial"));
  // Resuming a finished sweep runs nothing and rewrites the same file.
  const CliResult finished = Cli({"sweep", path, "-o", out, "--resume"});
  EXPECT_NE(finished.out.find("6 resumed"), std::string::npos) << finished.out;
  EXPECT_EQ(WithoutWallTime(ReadFile(out)), WithoutWallTime(ReadFile(full)));
}

// Resume checks every journal row: a torn last line, a malformed row and a row without its JSON
// line are run again; the rest are kept; the files end as an uninterrupted sweep's.
TEST(Sweep, ResumeRunsTornAndMalformedJournalRowsAgain) {
  const std::string path = Grid("torn.yaml");
  const std::string full = Dir() + "torn-full.csv";
  ASSERT_EQ(Cli({"sweep", path, "-o", full, "-j", "2"}).code, 0);
  const std::string csv = ReadFile(full);
  const std::string json = ReadFile(Dir() + "torn-full.jsonl");
  std::vector<std::string> rows;
  for (size_t at = 0; at < csv.size();) {
    const size_t end = csv.find('\n', at);
    rows.push_back(csv.substr(at, end - at));
    at = end + 1;
  }
  ASSERT_EQ(rows.size(), 7u);  // header + 6 points
  std::vector<std::string> lines;
  for (size_t at = 0; at < json.size();) {
    const size_t end = json.find('\n', at);
    lines.push_back(json.substr(at, end - at));
    at = end + 1;
  }
  ASSERT_EQ(lines.size(), 6u);
  // Journal: point 0 whole; point 1 with a status no sweep writes; point 2 without its JSON line;
  // point 3 whole; point 5 torn in the middle of its row.
  std::string bad_row = rows[2];
  const size_t ok_at = bad_row.find(",ok,");
  ASSERT_NE(ok_at, std::string::npos) << bad_row;
  bad_row.replace(ok_at, 4, ",okay,");
  const std::string out = Dir() + "torn.csv";
  WriteFile("torn.csv.partial", rows[0] + "\n" + rows[1] + "\n" + bad_row + "\n" + rows[3] + "\n" +
                                    rows[4] + "\n" + rows[6].substr(0, 9));
  WriteFile("torn.jsonl.partial", lines[0] + "\n" + lines[1] + "\n" + lines[3] + "\n");
  const CliResult resumed = Cli({"sweep", path, "-o", out, "-j", "2", "--resume"});
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("2 resumed"), std::string::npos) << resumed.out;  // points 0 and 3
  EXPECT_NE(resumed.err.find("torn.csv.partial:3: status 'okay' is not valid"), std::string::npos)
      << resumed.err;
  EXPECT_NE(resumed.err.find("torn.csv.partial:6: torn last line"), std::string::npos)
      << resumed.err;
  EXPECT_EQ(WithoutWallTime(ReadFile(out)), WithoutWallTime(csv));
  EXPECT_EQ(WithoutWallTime(ReadFile(Dir() + "torn.jsonl")), WithoutWallTime(json));
}

// A journal write that fails (here: the file-size limit, as a full disk would) stops the sweep at
// once with the file and the reason; what was journaled resumes into the uninterrupted result.
TEST(Sweep, AFailedJournalWriteStopsTheSweepAndWhatWasJournaledResumes) {
  const std::string path = Grid("full.yaml");
  const std::string whole = Dir() + "full-whole.csv";
  ASSERT_EQ(Cli({"sweep", path, "-o", whole, "-j", "1"}).code, 0);
  const std::string json = ReadFile(Dir() + "full-whole.jsonl");
  const std::string out = Dir() + "full.csv";
  std::remove(out.c_str());
  std::remove((out + ".partial").c_str());
  std::remove((Dir() + "full.jsonl.partial").c_str());
  const std::string err_path = Dir() + "full.err";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Room for the first JSON line and a half: the second append fails with EFBIG.
    const rlim_t limit = json.find('\n') * 3 / 2;
    const struct rlimit rl = {limit, limit};
    std::signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &rl);
    const CliResult r = Cli({"sweep", path, "-o", out, "-j", "1"});
    std::ofstream(err_path) << r.err;
    _exit(r.code);
  }
  int wait_status = 0;
  ASSERT_EQ(waitpid(pid, &wait_status, 0), pid);
  ASSERT_TRUE(WIFEXITED(wait_status));
  EXPECT_EQ(WEXITSTATUS(wait_status), 2);
  const std::string err = ReadFile(err_path);
  EXPECT_NE(err.find(Dir() + "full.jsonl.partial: cannot write: File too large; the sweep "
                             "stopped, and --resume continues it\n"),
            std::string::npos)
      << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << err;  // one point, then the stop
  EXPECT_FALSE(Exists(out));
  const CliResult resumed = Cli({"sweep", path, "-o", out, "-j", "1", "--resume"});
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.out.find("1 resumed"), std::string::npos) << resumed.out;
  EXPECT_EQ(WithoutWallTime(ReadFile(out)), WithoutWallTime(ReadFile(whole)));
  EXPECT_EQ(WithoutWallTime(ReadFile(Dir() + "full.jsonl")), WithoutWallTime(json));
}

// A crashed point stays crashed on --resume, and runs again with --retry-failed.
TEST(Sweep, RetryFailedRunsFailedPointsAgain) {
  const std::string path = Grid("retry.yaml");
  const std::string full = Dir() + "retry-full.csv";
  ASSERT_EQ(Cli({"sweep", path, "-o", full, "-j", "2"}).code, 0);
  const std::string out = Dir() + "retry.csv";
  setenv("PPSIM_SWEEP_CRASH_POINT", "4", 1);
  const CliResult crashed = Cli({"sweep", path, "-o", out, "-j", "2"});
  unsetenv("PPSIM_SWEEP_CRASH_POINT");
  EXPECT_EQ(crashed.code, 1);
  const CliResult kept = Cli({"sweep", path, "-o", out, "--resume"});
  EXPECT_EQ(kept.code, 0) << kept.err;
  EXPECT_NE(kept.out.find("6 resumed"), std::string::npos) << kept.out;
  EXPECT_NE(ReadFile(out).find(",crashed,"), std::string::npos);
  const CliResult alone = Cli({"sweep", path, "-o", out, "--retry-failed"});
  EXPECT_EQ(alone.code, 2);
  EXPECT_EQ(alone.err,
            "--retry-failed: runs failed points of an earlier sweep again; add --resume\n");
  const CliResult retried = Cli({"sweep", path, "-o", out, "--resume", "--retry-failed"});
  EXPECT_EQ(retried.code, 0) << retried.err;
  EXPECT_NE(retried.out.find("5 resumed"), std::string::npos) << retried.out;
  EXPECT_EQ(WithoutWallTime(ReadFile(out)), WithoutWallTime(ReadFile(full)));
  EXPECT_EQ(WithoutWallTime(ReadFile(Dir() + "retry.jsonl")),
            WithoutWallTime(ReadFile(Dir() + "retry-full.jsonl")));
}

TEST(Sweep, APointThatCrashesOrTimesOutIsARowAndTheOthersGoOn) {
  const std::string path = Grid("crash.yaml");
  const std::string out = Dir() + "crash.csv";
  setenv("PPSIM_SWEEP_CRASH_POINT", "4", 1);
  const CliResult r = Cli({"sweep", path, "-o", out, "-j", "2"});
  unsetenv("PPSIM_SWEEP_CRASH_POINT");
  EXPECT_EQ(r.code, 1);
  const std::string csv = ReadFile(out);
  EXPECT_NE(csv.find("\n4,GPipe,8,,,,,,,,,,,,,,,,,crashed,the point's process died of signal 11 "
                     "(Segmentation fault),"),
            std::string::npos)
      << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7);
  size_t ok = 0;
  for (size_t at = csv.find(",ok,"); at != std::string::npos; at = csv.find(",ok,", at + 1)) ++ok;
  EXPECT_EQ(ok, 5u);
  const CliResult slow = Cli({"sweep", path, "-o", out, "-j", "2", "--point-timeout", "1us"});
  EXPECT_EQ(slow.code, 1);
  const std::string timed_out = ReadFile(out);
  EXPECT_NE(timed_out.find("\n0,1F1B,4,,,,,,,,,,,,,,,,,timeout,exceeded --point-timeout 1 us,"),
            std::string::npos)
      << timed_out;
}

TEST(Sweep, ShardsMergeIntoTheUnshardedResults) {
  const std::string path = Grid("shards.yaml");
  ASSERT_EQ(Cli({"sweep", path, "-o", Dir() + "all.csv", "-j", "2"}).code, 0);
  ASSERT_EQ(Cli({"sweep", path, "-o", Dir() + "s0.csv", "--shard", "0/2", "-j", "1"}).code, 0);
  ASSERT_EQ(Cli({"sweep", path, "-o", Dir() + "s1.csv", "--shard", "1/2", "-j", "1"}).code, 0);
  const CliResult merged =
      Cli({"merge", Dir() + "s1.csv", Dir() + "s0.csv", "-o", Dir() + "merged.csv"});
  ASSERT_EQ(merged.code, 0) << merged.err;
  EXPECT_EQ(WithoutWallTime(ReadFile(Dir() + "merged.csv")),
            WithoutWallTime(ReadFile(Dir() + "all.csv")));
  EXPECT_EQ(WithoutWallTime(ReadFile(Dir() + "merged.jsonl")),
            WithoutWallTime(ReadFile(Dir() + "all.jsonl")));
  // The about file: the shards' common experiment file and version, and the merge's command.
  EXPECT_EQ(merged.out, "wrote " + Dir() + "merged.csv, " + Dir() + "merged.jsonl and " + Dir() +
                            "merged.about.json\n");
  const nlohmann::json about = nlohmann::json::parse(ReadFile(Dir() + "merged.about.json"));
  EXPECT_EQ(about["experiment_file"], path);
  EXPECT_EQ(about["ppsim_version"], PPSIM_VERSION);
  EXPECT_EQ(about["command"],
            "ppsim merge " + Dir() + "s1.csv " + Dir() + "s0.csv -o " + Dir() + "merged.csv");
  // Shards that disagree leave the field empty; an about file that does not read stops the merge.
  WriteFile("s0.about.json", R"({"ppsim_version": "0.0.9", "experiment_file": "other.yaml"})");
  ASSERT_EQ(Cli({"merge", Dir() + "s1.csv", Dir() + "s0.csv", "-o", Dir() + "merged.csv"}).code, 0);
  const nlohmann::json mixed = nlohmann::json::parse(ReadFile(Dir() + "merged.about.json"));
  EXPECT_EQ(mixed["experiment_file"], "");
  EXPECT_EQ(mixed["ppsim_version"], "");
  EXPECT_FALSE(mixed.contains("baseline"));
  // A baseline both shards name is the merged results' baseline.
  WriteFile("s0.about.json", R"({"experiment_file": "e.yaml", "baseline": "GPipe"})");
  WriteFile("s1.about.json", R"({"experiment_file": "e.yaml", "baseline": "GPipe"})");
  ASSERT_EQ(Cli({"merge", Dir() + "s1.csv", Dir() + "s0.csv", "-o", Dir() + "merged.csv"}).code, 0);
  EXPECT_EQ(nlohmann::json::parse(ReadFile(Dir() + "merged.about.json"))["baseline"], "GPipe");
  WriteFile("s0.about.json", "[1]");
  const CliResult bad = Cli({"merge", Dir() + "s1.csv", Dir() + "s0.csv", "-o", Dir() + "m2.csv"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err, Dir() +
                         "s0.about.json: not a JSON object of strings; an about file is "
                         "{\"ppsim_version\": ..., \"command\": ..., \"experiment\": ..., "
                         "\"experiment_file\": ...}\n");
  EXPECT_FALSE(Exists(Dir() + "m2.csv"));
  std::remove((Dir() + "s0.about.json").c_str());  // a shard without one says nothing
  const CliResult missing = Cli({"merge", Dir() + "s0.csv", "-o", Dir() + "half.csv"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "ppsim merge: points 1, 3 missing; give every shard's output\n");
  const CliResult twice =
      Cli({"merge", Dir() + "s0.csv", Dir() + "s0.csv", "-o", Dir() + "twice.csv"});
  EXPECT_EQ(twice.err, Dir() + "s0.csv:2: point 0 is also in " + Dir() +
                           "s0.csv:2; give each shard's output once\n");
}

TEST(Sweep, FlagsAreCheckedWithOneLineMessages) {
  const std::string path = Grid("flags.yaml");
  auto err = [](std::vector<std::string> args) { return Cli(args).err; };
  EXPECT_EQ(err({"sweep", path}), "-o: required; give the results CSV, e.g. -o results.csv\n");
  EXPECT_EQ(err({"sweep", path, "-o", "x.csv", "--shard", "2/2"}),
            "--shard: invalid shard '2/2'; give I/N with 0 <= I < N, e.g. --shard 0/4\n");
  EXPECT_EQ(err({"sweep", path, "-o", "x.csv", "-j", "0"}), "-j: must be at least 1; got 0\n");
  EXPECT_EQ(err({"sweep", path, "-o", "x.csv", "--fast"}),
            "--fast: unknown option; see 'ppsim sweep --help' for the valid options\n");
  EXPECT_EQ(err({"sweep", Dir() + "none.yaml", "-o", "x.csv"})
                .rfind(Dir() + "none.yaml: cannot "
                               "read",
                       0),
            0u);
}

TEST(RunFile, RunsTheBaseRunWithMessagesAtTheFile) {
  const std::string path = WriteFile("base.yaml", R"(base:
  schedule: GPipe
  pp: 2
  microbatches: 1
  f: 1ms
  b: 2ms
  platform: ideal
  format: csv
)");
  const CliResult r = Cli({"run", path});
  ASSERT_EQ(r.code, 0) << r.err;
  // The same run from flags prints the same.
  EXPECT_EQ(r.out, Cli({"run", "--schedule", "GPipe", "--pp", "2", "--microbatches", "1", "--f",
                        "1ms", "--b", "2ms", "--platform", "ideal", "--format", "csv"})
                       .out);
  const std::string bad = WriteFile("badbase.yaml",
                                    "base: {schedule: GPipe, pp: 2, "
                                    "microbatches: 1, f: -1ms, b: 2ms}\n");
  EXPECT_EQ(Cli({"run", bad}).err,
            bad + ":1:52: base.f: negative duration '-1ms'; durations must be >= 0\n");
  const std::string missing = WriteFile("nopp.yaml", "base: {schedule: GPipe, f: 1ms}\n");
  EXPECT_EQ(Cli({"run", missing}).err,
            missing + ": base.pp: required; give the number of pipeline ranks, e.g. pp 4\n");
}

TEST(RunFile, ReadsUtf16AndUtf8WithAByteOrderMarkAsUtf8) {
  const std::string text =
      "base: {schedule: GPipe, pp: 2, microbatches: 1, f: 1ms, b: 2ms, platform: ideal}\n";
  const CliResult plain = Cli({"run", WriteFile("plain.yaml", text)});
  ASSERT_EQ(plain.code, 0) << plain.err;
  std::string utf16 = "\xFF\xFE";
  for (char c : text) utf16 += std::string{c, '\0'};
  for (const auto& [name, bytes] :
       {std::pair{"utf16.yaml", utf16}, std::pair{"bom.yaml", "\xEF\xBB\xBF" + text}}) {
    const CliResult r = Cli({"run", WriteFile(name, bytes)});
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_EQ(r.out, plain.out) << name;
  }
}

TEST(RunFile, RunsOnePointAndTakesOverrides) {
  const std::string path = WriteFile("points.yaml", R"(base:
  schedule: 1F1B
  pp: 2
  f: 1ms
  b: 2ms
  platform: ideal
  format: csv
axes:
  - {field: microbatches, values: ["2", "4"]}
  - {field: schedule, values: [1F1B, GPipe]}
skip:
  - when: [{field: schedule, equals: [GPipe]}, {field: microbatches, equals: ["4"]}]
    reason: not needed
)");
  auto flags = [](const std::string& schedule, const std::string& microbatches,
                  const std::string& pp) {
    return Cli({"run", "--schedule", schedule, "--pp", pp, "--microbatches", microbatches, "--f",
                "1ms", "--b", "2ms", "--platform", "ideal", "--format", "csv"})
        .out;
  };
  // Point 1: microbatches 2 (the first axis varies slowest), GPipe.
  CliResult r = Cli({"run", path, "--point", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, flags("GPipe", "2", "2"));
  EXPECT_EQ(r.err, "");
  // Options override the point's fields and the base's.
  EXPECT_EQ(Cli({"run", path, "--point", "2", "--microbatches", "8", "--pp", "4"}).out,
            flags("1F1B", "8", "4"));
  EXPECT_EQ(Cli({"run", path, "--pp", "4", "--microbatches", "3"}).out, flags("1F1B", "3", "4"));
  // A point the sweep skips still runs, with a note.
  r = Cli({"run", path, "--point", "3"});
  EXPECT_EQ(r.out, flags("GPipe", "4", "2"));
  EXPECT_EQ(r.err, "note: " + path +
                       " point 3 (microbatches=4, schedule=GPipe) is skipped in sweeps: not "
                       "needed\n");
  // Messages name a flag where it was given, the file where it was written.
  EXPECT_EQ(Cli({"run", path, "--point", "0", "--pp", "0"}).err,
            "--pp: must be at least 1; got 0\n");
  EXPECT_EQ(Cli({"run", path, "--point", "0", "--f", "-1ms"}).err,
            "--f: negative duration '-1ms'; durations must be >= 0\n");
  EXPECT_EQ(Cli({"run", path, "--point", "4"}).err,
            "--point: invalid point '4'; " + path + " has 4 points, 0 to 3\n");
  EXPECT_EQ(Cli({"run", "--point", "1"}).err,
            "--point: runs one point of an experiment; give the file first: ppsim run FILE "
            "--point N\n");
}

// Every example in experiments/examples runs (small enough for CI).
TEST(Examples, EveryExampleExperimentSweepsWithoutFailures) {
  const std::string dir = std::string(PPSIM_SOURCE_DIR) + "/experiments/examples/";
  struct Example {
    const char* file;
    size_t points;
    size_t skipped;
  };
  for (const Example& e :
       {Example{"quickstart.textproto", 2, 0}, Example{"schedules-h100-node.yaml", 8, 0},
        Example{"microbatch-sweep.json", 10, 1}, Example{"cluster-study.yaml", 4, 0}}) {
    SCOPED_TRACE(e.file);
    const std::string out = Dir() + std::string(e.file) + ".csv";
    const CliResult r = Cli({"sweep", dir + e.file, "-o", out, "-j", "2"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(
        r.out.find(std::to_string(e.points) + " points (" + std::to_string(e.points - e.skipped) +
                   " ok, " + std::to_string(e.skipped) + " skipped, 0 failed)"),
        std::string::npos)
        << r.out;
  }
  // The quickstart's base run is the default job.
  const CliResult base = Cli({"run", dir + "quickstart.textproto"});
  const CliResult job = Cli({"run"});
  EXPECT_EQ(job.out.substr(job.out.find("\n\n") + 2), base.out);
}

}  // namespace
}  // namespace ppsim

namespace ppsim {
namespace {

TEST(Experiment, YamlAnchorsAliasesAndBlockScalarsRun) {
  // One base of costs shared by two runs through an anchor; a multi-line description.
  const std::string path = WriteFile("anchors.yaml", R"(name: anchors
description: |
  1F1B against GPipe
  with the costs written once.
base: &base
  schedule: 1F1B
  pp: 4
  microbatches: 8
  f: 1
  b: 2
  platform: ideal
axes:
  - field: schedule
    values: &both [1F1B, GPipe]
skip:
  - when: [{field: schedule, equals: *both}, {field: pp, equals: ["5"]}]
    reason: never
)");
  ExperimentPlan plan;
  const Status status = LoadExperiment(path, &plan);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(ExpandPoints(kDefaultMaxPoints, &plan).ok());
  EXPECT_EQ(plan.experiment.description(), "1F1B against GPipe\nwith the costs written once.\n");
  EXPECT_EQ(plan.experiment.skip(0).when(0).equals_size(), 2);
  const std::string out = Dir() + "anchors.csv";
  std::remove((out + ".partial").c_str());
  const CliResult r = Cli({"sweep", path, "-o", out, "-j", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  // (m + p - 1)(F + B) = 33 s for both.
  const std::string csv = ReadFile(out);
  EXPECT_NE(csv.find("\n0,1F1B,33,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\n1,GPipe,33,"), std::string::npos) << csv;
  EXPECT_EQ(Cli({"run", path}).code, 0);
}

}  // namespace
}  // namespace ppsim
