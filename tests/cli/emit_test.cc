// `--emit megatron|torchtitan`: what is emitted imports back into the same run. Each case runs
// `ppsim run ... --emit F --emit-file FILE --format json`, then the import command the output
// gives (`ppsim run --megatron @FILE ...` or `ppsim run --torchtitan FILE ...`), and compares the
// two JSON outputs whole, but for the words naming where each run came from: the model's name and
// its file's notes, the import's notes and, when the order went through torch's schedule CSV, the
// schedule's label.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/shell_words.h"
#include "tests/support/cli.h"

namespace ppsim {
namespace {

struct RoundTrip {
  nlohmann::json original;  // the first run's JSON, with its "launch"
  nlohmann::json imported;  // the import's JSON
  std::string emitted;      // the emitted file's text
};

// This test's own file name in the temporary folder (ctest runs the tests side by side).
std::string OwnName(const std::string& suffix) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(test->test_suite_name()) + "." + test->name() + suffix;
}

RoundTrip EmitAndImport(const std::string& framework, std::vector<std::string> args) {
  RoundTrip trip;
  const std::string file =
      ::testing::TempDir() + OwnName(framework == "megatron" ? ".args" : ".toml");
  args.insert(args.begin(), "run");
  args.insert(args.end(), {"--emit", framework, "--emit-file", file, "--format", "json"});
  const CliResult first = Cli(args);
  EXPECT_EQ(first.code, 0) << first.err;
  if (first.code != 0) return trip;
  trip.original = nlohmann::json::parse(first.out);
  trip.emitted = ReadFile(file);
  std::vector<std::string> words;
  EXPECT_TRUE(
      SplitShellWords(trip.original["launch"]["import_command"].get<std::string>(), &words).ok());
  EXPECT_EQ(words[0], "ppsim");
  words.erase(words.begin());  // "run" stays the command
  words.push_back("--format");
  words.push_back("json");
  const CliResult second = Cli(words);
  EXPECT_EQ(second.code, 0) << second.err;
  if (second.code == 0) trip.imported = nlohmann::json::parse(second.out);
  return trip;
}

// The round trip is exact: the same JSON but for the names of the run's sources.
void ExpectSameRun(const std::string& framework, const std::vector<std::string>& args) {
  SCOPED_TRACE(framework);
  RoundTrip trip = EmitAndImport(framework, args);
  if (trip.imported.is_null()) return;
  nlohmann::json a = trip.original, b = trip.imported;
  const bool csv = a["launch"].contains("schedule_csv");
  a.erase("launch");
  // The import was used: Megatron's model is named by its arguments; torchtitan's (a preset)
  // comes with notes on the dtype assumed.
  if (framework == "megatron") {
    EXPECT_NE(b["model"], a["model"]);
  } else {
    EXPECT_TRUE(b["assumptions"].contains("import_notes"));
  }
  for (nlohmann::json* j : {&a, &b}) {
    j->erase("model");
    (*j)["assumptions"].erase("import_notes");
    (*j)["assumptions"].erase("model_notes");  // what the model's file said (a config.json)
    if (csv) j->erase("schedule");
  }
  EXPECT_EQ(a, b) << "emitted:\n" << trip.emitted;
}

// Llama 3 8B on one H100 node: tp 2 x pp 4 (8 GPUs), 8 sequences a step.
std::vector<std::string> Llama(const std::string& schedule, std::vector<std::string> more = {}) {
  std::vector<std::string> args = {"--model",
                                   "llama3-8b",
                                   "--platform",
                                   "h100-node",
                                   "--tp",
                                   "2",
                                   "--pp",
                                   "4",
                                   "--global-batch",
                                   "8",
                                   "--schedule",
                                   schedule,
                                   "--sequence-parallel"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(EmitMegatron, EveryScheduleImportsBackToTheSameRun) {
  // Megatron-LM's own schedules, with its p2p calls and with ppsim's eager transfers.
  ExpectSameRun("megatron", Llama("1F1B"));
  ExpectSameRun("megatron", Llama("1F1B", {"--p2p-mode", "megatron", "--dtype", "fp8",
                                           "--recompute", "full", "--zero", "1"}));
  ExpectSameRun("megatron", Llama("1F1B", {"--zero", "3", "--recompute", "full"}));
  ExpectSameRun("megatron", Llama("1F1B", {"--zero", "2"}));
  ExpectSameRun("megatron", Llama("1F1B", {"--p2p-mode", "megatron-no-overlap", "--recompute",
                                           "selective", "--grad-dtype", "bf16"}));
  ExpectSameRun("megatron", Llama("Megatron-Interleaved",
                                  {"--stages-per-rank", "2", "--p2p-mode", "megatron"}));
  ExpectSameRun("megatron", Llama("Megatron-Interleaved",
                                  {"--stages-per-rank", "2", "--microbatch-group-size", "8"}));
  ExpectSameRun("megatron",
                Llama("Megatron-Interleaved", {"--stages-per-rank", "2", "--microbatch-group-size",
                                               "8", "--p2p-mode", "megatron"}));
  // Splits: Megatron's layout string, and its embedding and loss accounting.
  ExpectSameRun("megatron", Llama("1F1B", {"--layers-per-stage", "7,9,9,7"}));
  ExpectSameRun("megatron", Llama("1F1B", {"--embedding-as-layer", "--loss-as-layer",
                                           "--flash-attention", "off"}));
  // Data parallelism from the world size, and the gradient buckets of --overlap-grad-reduce.
  ExpectSameRun("megatron", Llama("1F1B", {"--nodes", "2", "--dp", "2", "--grad-bucket", "160MB",
                                           "--engine", "critical-path"}));
  // No pipeline: Megatron's loop without pipelining; GPipe's memory stays a ppsim flag.
  ExpectSameRun("megatron", {"--model", "llama3-8b", "--tp", "8", "--pp", "1", "--schedule",
                             "GPipe", "--microbatches", "4", "--sequence-parallel"});
  // Schedules Megatron-LM does not run stay ppsim flags beside its arguments.
  ExpectSameRun("megatron", Llama("ZB-H1"));
  ExpectSameRun("megatron", Llama("DualPipe"));
  ExpectSameRun("megatron", Llama("ZBVZeroBubble"));
}

TEST(EmitMegatron, ExpertsAndLatentAttentionImportBack) {
  ExpectSameRun("megatron", {"--model", "mixtral-8x7b", "--nodes", "4", "--tp", "2", "--pp", "4",
                             "--dp", "4", "--ep", "4", "--sequence-parallel", "--schedule", "1F1B",
                             "--global-batch", "32", "--engine", "critical-path"});
  ExpectSameRun("megatron", {"--model", "deepseek-v3", "--nodes", "32", "--tp", "1", "--pp", "16",
                             "--dp", "16", "--ep", "16", "--schedule", "1F1B", "--global-batch",
                             "256", "--engine", "critical-path"});
  // Megatron's recomputation modules, and partial full recomputation (block, uniform).
  ExpectSameRun("megatron", {"--model", "deepseek-v3", "--nodes", "32", "--tp", "1", "--pp", "16",
                             "--dp", "16", "--ep", "16", "--schedule", "1F1B", "--global-batch",
                             "256", "--engine", "critical-path", "--dtype", "fp8",
                             "--recompute-modules", "mla_up_proj,mlp,moe_act,layernorm"});
  ExpectSameRun("megatron", Llama("1F1B", {"--recompute", "full", "--recompute-method", "block",
                                           "--recompute-num-layers", "3"}));
  ExpectSameRun("megatron", Llama("1F1B", {"--recompute-method", "uniform",
                                           "--recompute-num-layers", "2"}));
  // Fine-grained activation offloading (the switch and Megatron's space-separated list).
  ExpectSameRun("megatron", Llama("1F1B", {"--offload-modules", "attn_norm,core_attn,attn_proj"}));
  // Qwen3's per-head query and key norms (--qk-layernorm), from its Hugging Face config.
  ExpectSameRun("megatron",
                {"--model", std::string(PPSIM_SOURCE_DIR) + "/tests/data/hf/qwen3-4b.json", "--tp",
                 "2", "--pp", "2", "--schedule", "1F1B", "--global-batch", "8",
                 "--sequence-parallel", "--engine", "critical-path"});
}

TEST(EmitMegatron, EpAllToAllOverlapImportsBack) {
  // Megatron-LM's combined 1F1B: the two flags are written and read back to the same run (the
  // import runs the pipeline transfers as --p2p-mode eager, which the emitted command keeps).
  const std::vector<std::string> args = {
      "--model", "mixtral-8x7b", "--nodes", "4", "--tp", "2", "--pp", "4", "--dp", "4", "--ep", "4",
      "--sequence-parallel", "--schedule", "Megatron-Interleaved", "--stages-per-rank", "2",
      "--global-batch", "32", "--engine", "critical-path", "--overlap-moe-expert-parallel-comm",
      "--delay-wgrad-compute"};
  ExpectSameRun("megatron", args);
  const RoundTrip trip = EmitAndImport("megatron", args);
  EXPECT_NE(trip.emitted.find("--overlap-moe-expert-parallel-comm"), std::string::npos);
  EXPECT_NE(trip.emitted.find("--delay-wgrad-compute"), std::string::npos);
}

TEST(EmitMegatron, ContextParallelismAcrossNodesImportsBack) {
  // TP 4 x CP 4 spans two nodes of h100-node; each communication type goes through
  // --cp-comm-type (p2p, the default, is not written). a2a needs CP to divide the 2 KV heads of a
  // TP 4 shard of llama3-8b: CP 2.
  for (const auto& [type, cp, nodes] :
       {std::tuple{"p2p", "4", "4"}, {"allgather", "4", "4"}, {"a2a", "2", "2"}}) {
    SCOPED_TRACE(type);
    ExpectSameRun("megatron", {"--model",
                               "llama3-8b",
                               "--platform",
                               "h100-node",
                               "--nodes",
                               nodes,
                               "--tp",
                               "4",
                               "--cp",
                               cp,
                               "--pp",
                               "2",
                               "--seq-len",
                               "16384",
                               "--sequence-parallel",
                               "--schedule",
                               "1F1B",
                               "--global-batch",
                               "4",
                               "--cp-comm-type",
                               type,
                               "--engine",
                               "critical-path"});
  }
}

TEST(EmitMegatron, HierarchicalContextParallelismImportsBack) {
  // a2a+p2p with A 2: written as --cp-comm-type a2a+p2p --hierarchical-context-parallel-sizes 2 2.
  ExpectSameRun("megatron",
                {"--model", "llama3-8b", "--platform", "h100-node", "--nodes", "4", "--tp", "4",
                 "--cp", "4", "--pp", "2", "--seq-len", "16384", "--sequence-parallel",
                 "--schedule", "1F1B", "--global-batch", "4", "--cp-comm-type", "a2a+p2p",
                 "--cp-a2a-size", "2", "--engine", "critical-path"});
  RoundTrip trip = EmitAndImport(
      "megatron", {"--model", "llama3-8b", "--platform", "h100-node", "--nodes", "4", "--tp", "4",
                   "--cp", "4", "--pp", "2", "--seq-len", "16384", "--schedule", "1F1B",
                   "--global-batch", "4", "--cp-comm-type", "a2a+p2p", "--cp-a2a-size", "2",
                   "--engine", "critical-path"});
  EXPECT_NE(trip.emitted.find("--cp-comm-type a2a+p2p \\\n"), std::string::npos) << trip.emitted;
  EXPECT_NE(trip.emitted.find("--hierarchical-context-parallel-sizes 2 2 \\\n"), std::string::npos)
      << trip.emitted;
}

TEST(EmitMegatron, TheArgumentsAreMegatronsSpelling) {
  RoundTrip trip = EmitAndImport(
      "megatron", {"--model", "llama3-70b", "--nodes", "4", "--tp", "8", "--pp", "4", "--schedule",
                   "Megatron-Interleaved", "--stages-per-rank", "5", "--global-batch", "16",
                   "--sequence-parallel", "--zero", "1", "--engine", "critical-path"});
  // Llama 3 70B (its config.json): 80 layers, hidden 8192, FFN 28672, 64 heads, 8 KV heads,
  // vocabulary 128256 = 8 x 16032 = 8 x 32 x 501: with TP 8 a multiple of 32 x 8 pads nothing
  // (64 x 8 would pad it to 128512).
  for (const char* line :
       {"--num-layers 80 \\\n", "--hidden-size 8192 \\\n", "--ffn-hidden-size 28672 \\\n",
        "--num-attention-heads 64 \\\n", "--group-query-attention \\\n",
        "--num-query-groups 8 \\\n", "--swiglu \\\n", "--normalization RMSNorm \\\n",
        "--untie-embeddings-and-output-weights \\\n", "--vocab-size 128256 \\\n",
        "--make-vocab-size-divisible-by 32 \\\n", "--tensor-model-parallel-size 8 \\\n",
        "--pipeline-model-parallel-size 4 \\\n", "--sequence-parallel \\\n",
        "--use-distributed-optimizer \\\n", "--num-virtual-stages-per-pipeline-rank 5 \\\n",
        "--micro-batch-size 1 \\\n", "--global-batch-size 16 \\\n"}) {
    EXPECT_NE(trip.emitted.find(line), std::string::npos) << line << "\n" << trip.emitted;
  }
  // 32 GPUs of the platform's 32: Megatron derives dp 1 itself, so no --dp beside.
  EXPECT_EQ(trip.original["launch"]["gpus"], 32);
  EXPECT_EQ(trip.original["launch"]["import_command"].get<std::string>().find("--dp"),
            std::string::npos);
}

TEST(EmitMegatron, AVocabularyMegatronMustPadIsSaid) {
  // GPT-3's 50257 tokens do not divide by TP 2: Megatron pads them to 50258.
  const CliResult r =
      Cli({"run", "--model", "gpt3-1.5b", "--tp", "2", "--pp", "2", "--dp", "2", "--schedule",
           "1F1B", "--global-batch", "8", "--emit", "megatron", "--engine", "critical-path"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("note: the vocabulary of 50257 does not divide by tensor-parallel size 2: "
                       "Megatron-LM pads it to 50258 (ppsim simulated it unpadded)\n"),
            std::string::npos)
      << r.out;
}

TEST(EmitTorchtitan, EveryScheduleImportsBackToTheSameRun) {
  // torch's schedules by name.
  for (const char* schedule : {"GPipe", "1F1B", "Interleaved1F1B", "LoopedBFS",
                               "InterleavedZeroBubble", "ZBVZeroBubble", "DualPipeV"}) {
    SCOPED_TRACE(schedule);
    ExpectSameRun("torchtitan", Llama(schedule));
  }
  ExpectSameRun("torchtitan", Llama("Interleaved1F1B", {"--stages-per-rank", "4"}));
  // Any other order: torch's schedule CSV beside the job file, looped or V placement.
  for (const char* schedule :
       {"Megatron-Interleaved", "ZB-H1", "ZB-H2", "ZB-2p", "ZB-auto", "V-Half", "V-Min"}) {
    SCOPED_TRACE(schedule);
    ExpectSameRun("torchtitan", Llama(schedule));
  }
  // DualPipe's two directions: a ppsim flag.
  ExpectSameRun("torchtitan", Llama("DualPipe"));
  // Precision, checkpointing and async TP as torchtitan's keys.
  ExpectSameRun("torchtitan",
                Llama("1F1B", {"--dtype", "fp8", "--recompute", "selective", "--tp-comm-overlap",
                               "--bytes-per-param", "4,4", "--grad-dtype", "bf16"}));
  ExpectSameRun("torchtitan", Llama("1F1B", {"--recompute", "full", "--bytes-per-param", "8,8"}));
  // FSDP: --zero 3 as data_parallel_shard_degree, HSDP as replicate x shard, the reshard policy.
  ExpectSameRun("torchtitan", {"--model", "llama3-8b", "--tp", "2", "--pp", "1", "--dp", "4",
                               "--schedule", "1F1B", "--sequence-parallel", "--zero", "3",
                               "--microbatches", "1", "--engine", "critical-path"});
  ExpectSameRun("torchtitan", {"--model", "llama3-8b", "--platform", "h100-node", "--tp", "2",
                               "--pp", "1", "--dp", "4", "--dp-shard", "2", "--zero", "3",
                               "--microbatches", "1", "--schedule", "1F1B", "--sequence-parallel"});
  ExpectSameRun("torchtitan",
                {"--model", "llama3-8b", "--platform", "h100-node", "--tp", "2", "--pp", "2",
                 "--dp", "2", "--global-batch", "8", "--zero", "3", "--reshard-after-forward", "on",
                 "--schedule", "Interleaved1F1B", "--sequence-parallel"});
  // Sharded over one GPU (S = 1): no FSDP in torchtitan; the flags stay ppsim's.
  ExpectSameRun("torchtitan", Llama("1F1B", {"--zero", "3", "--reshard-after-forward", "off"}));
  // No pipeline: the local batch and accumulation steps.
  ExpectSameRun("torchtitan", {"--model", "llama3-8b", "--tp", "2", "--pp", "1", "--dp", "4",
                               "--schedule", "1F1B", "--microbatches", "2", "--sequence-parallel",
                               "--engine", "critical-path"});
}

TEST(EmitTorchtitan, ACustomOrderGoesBesideAsTorchsCsv) {
  RoundTrip trip = EmitAndImport("torchtitan", Llama("V-Half"));
  EXPECT_NE(trip.emitted.find("pipeline_parallel_schedule = \"ZBVZeroBubble\"\n"),
            std::string::npos)
      << trip.emitted;
  EXPECT_NE(trip.emitted.find("pipeline_parallel_schedule_csv = \"" + OwnName(".csv") + "\"\n"),
            std::string::npos);
  // The CSV is `ppsim schedule --format torch-csv` of the same order.
  const CliResult schedule = Cli({"schedule", "--schedule", "V-Half", "--pp", "4", "--microbatches",
                                  "8", "--format", "torch-csv"});
  ASSERT_EQ(schedule.code, 0) << schedule.err;
  EXPECT_EQ(ReadFile(::testing::TempDir() + OwnName(".csv")), schedule.out);
}

// A sweep has no single launch: emit and emit_file belong to one run, and are not swept.
TEST(Emit, ASweepRefusesIt) {
  const std::string file = WriteFile(OwnName(".yaml"),
                                     "base:\n  schedule: 1F1B\n  pp: 2\n  microbatches: 4\n"
                                     "  model: llama3-8b\n  emit: megatron\n"
                                     "axes:\n  - field: microbatches\n    values: [4, 8]\n");
  CliResult r = Cli({"sweep", file, "-o", ::testing::TempDir() + OwnName(".csv")});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, file +
                       ": base: trace, chrome_trace, timeline, emit, emit_file and fail_on_oom "
                       "belong to one run ('ppsim run FILE'); a sweep writes timelines with "
                       "--timelines\n");
  const std::string axis = WriteFile(OwnName("-axis.yaml"),
                                     "base:\n  schedule: 1F1B\n  pp: 2\n  microbatches: 4\n"
                                     "  model: llama3-8b\n"
                                     "axes:\n  - field: emit\n    values: [megatron]\n");
  r = Cli({"sweep", axis, "-o", ::testing::TempDir() + OwnName("-axis.csv")});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("axes[0].field: unknown field 'emit'"), std::string::npos) << r.err;
}

TEST(Emit, BadRequestsAreRefused) {
  const std::vector<std::string> costs = {
      "run", "--schedule", "1F1B", "--pp", "4",          "--microbatches", "8",
      "--f", "1",          "--b",  "2",    "--platform", "ideal"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = costs;
    args.insert(args.end(), more.begin(), more.end());
    return Cli(args);
  };
  CliResult r = with({"--emit", "foo"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "--emit: unknown framework 'foo'; valid: megatron, torchtitan\n");
  r = with({"--emit-file", "x.args"});
  EXPECT_EQ(r.err,
            "--emit-file: writes the launch that --emit reports; add --emit megatron or "
            "torchtitan\n");
  r = with({"--emit", "megatron"});
  EXPECT_EQ(r.err,
            "--emit: a framework's launch describes a model; give --model (a run of costs "
            "alone has none)\n");
  r = Cli({"run", "--model", "gpt3-1.5b", "--schedule", "1F1B", "--pp", "2", "--microbatches", "8",
           "--emit", "torchtitan"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "--emit: torchtitan has no model flavor of gpt3-1.5b's shape; it has llama3 "
            "8B, llama3 70B, llama3 405B, deepseek_v3 671B (as ppsim maps them to "
            "presets)\n");
  r = Cli({"run", "--model", "llama3-8b", "--schedule", "1F1B", "--pp", "2", "--microbatches", "8",
           "--emit", "torchtitan", "--emit-file", "a.csv"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "--emit-file: a .csv name is the schedule CSV's, written beside the launch; "
            "name the arguments or job file (e.g. job.toml)\n");
  r = Cli({"run", "--model", "llama3-8b", "--pp", "2", "--microbatches", "8", "--schedule",
           "1F1B,GPipe", "--emit", "megatron", "--emit-file", "a.args"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err,
            "--emit-file: writes one run's launch; give one schedule, or leave "
            "--emit-file out to print each run's\n");
}

}  // namespace
}  // namespace ppsim

namespace ppsim {
namespace {

// `ppsim search --emit F`: every reported candidate carries its launch; the best one, written to
// the file its import command names and imported back, simulates to the search's own time.
void ExpectSearchPickImportsBack(const std::string& framework) {
  SCOPED_TRACE(framework);
  const CliResult r = Cli({"search",
                           "--model",
                           "llama3-8b",
                           "--platform",
                           "h100-node",
                           "--nodes",
                           "1",
                           "--global-batch",
                           "16",
                           "--tp",
                           "2",
                           "--pp",
                           "4",
                           "--microbatch-size",
                           "1",
                           "--recompute",
                           "none",
                           "--schedules",
                           "1F1B,ZB-H1,Interleaved1F1B",
                           "--top",
                           "3",
                           "--format",
                           "json",
                           "--emit",
                           framework,
                           "-j",
                           "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json search = nlohmann::json::parse(r.out);
  ASSERT_EQ(search["candidates"].size(), 3u);
  for (const nlohmann::json& c : search["candidates"]) {
    EXPECT_EQ(c["launch"]["framework"], framework);
  }
  const nlohmann::json& best = search["candidates"][0];
  const nlohmann::json& launch = best["launch"];
  std::vector<std::string> words;
  ASSERT_TRUE(SplitShellWords(launch["import_command"].get<std::string>(), &words).ok());
  // The test's own folder (ctest runs tests side by side).
  const std::string folder = OwnName("-" + framework + "/");
  const std::string dir = ::testing::TempDir() + folder;
  std::filesystem::create_directories(dir);
  for (std::string& w : words) {
    if (w.starts_with("@candidate-")) w = "@" + dir + w.substr(1);
    if (w.starts_with("candidate-")) w = dir + w;
  }
  std::string file;
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == "--megatron") file = words[i + 1].substr(1);
    if (words[i] == "--torchtitan") file = words[i + 1];
  }
  ASSERT_TRUE(file.starts_with(dir)) << launch["import_command"];
  WriteFile(folder + file.substr(dir.size()), launch["text"].get<std::string>());
  if (launch.contains("schedule_csv")) {
    WriteFile(folder + launch["schedule_csv_name"].get<std::string>(),
              launch["schedule_csv"].get<std::string>());
  }
  words.erase(words.begin());
  words.push_back("--format");
  words.push_back("json");
  const CliResult run = Cli(words);
  ASSERT_EQ(run.code, 0) << run.err;
  const nlohmann::json imported = nlohmann::json::parse(run.out);
  EXPECT_EQ(imported["iteration_time_s"], best["iteration_s"]);
  EXPECT_EQ(imported["peak_memory_bytes"], best["peak_memory_bytes"]);
}

TEST(EmitSearch, TheBestCandidateImportsBackToItsOwnTime) {
  ExpectSearchPickImportsBack("megatron");
  ExpectSearchPickImportsBack("torchtitan");
}

}  // namespace
}  // namespace ppsim
