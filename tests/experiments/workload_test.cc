// Workload inputs and totals (README, Workload): equal work across schedules, the global batch,
// samples and tokens per second, HFU, the time and cost of a training run.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/runs.h"

namespace ppsim {
namespace {

void ExpectInvalid(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, message + "\n");
  EXPECT_EQ(r.out, "");
}

double TotalBusy(const RunResult& r) {
  double busy = 0;
  for (const RankMetrics& k : r.metrics.ranks) busy += k.busy_s;
  return busy;
}

TEST(Workload, TheSameFlagsGiveEveryScheduleTheSameWork) {
  // F = I = W = 1 ms for one rank's share of the model: every schedule runs each of the 8
  // microbatches through the whole model once, so the 4 ranks are busy 8 x 4 x 3 ms in all,
  // however the share is cut into virtual stages (2 per rank for interleaved and V schedules,
  // DualPipe's two copies each a whole share with half the microbatches).
  for (const char* schedule :
       {"1F1B", "Interleaved1F1B", "ZB-V", "V-Half", "V-Min", "DualPipe", "DualPipeV"}) {
    proto::RunConfig config = IdealRun(schedule, 4, 8, "1ms", "", EngineKind::kCriticalPath);
    config.set_i("1ms");
    config.set_w("1ms");
    const RunResult r = RunOk(config);
    EXPECT_NEAR(TotalBusy(r), 8 * 4 * 3e-3, 1e-15) << schedule;
    EXPECT_EQ(r.sequences_per_iteration, 8) << schedule;
  }
}

TEST(Workload, GlobalBatchSetsTheMicrobatches) {
  proto::RunConfig config = IdealRun("1F1B", 4, 8, "1ms", "2ms", EngineKind::kCriticalPath);
  config.clear_microbatches();
  config.set_global_batch("64");
  config.set_dp(2);
  config.set_microbatch_size(2);
  config.set_grad_bytes("1MiB");
  config.set_seq_len(4096);
  const RunResult r = RunOk(config);
  EXPECT_EQ(r.num_microbatches, 16);  // 64 / (2 replicas x 2 sequences)
  EXPECT_EQ(r.sequences_per_iteration, 64);
  EXPECT_EQ(r.gpus, 8);
  EXPECT_EQ(r.tokens_per_s, 64.0 * 4096 / r.metrics.makespan_s);
  EXPECT_EQ(r.samples_per_s, 64.0 / r.metrics.makespan_s);
  // The same in tokens: 256 Ki tokens = 64 sequences of 4096.
  config.set_global_batch("256Kitok");
  EXPECT_EQ(RunOk(config).num_microbatches, 16);
}

TEST(Workload, GlobalBatchErrorsSayWhatWouldFit) {
  const std::vector<std::string> run = {"run", "--schedule", "1F1B", "--pp", "4", "--f", "1ms",
                                        "--b", "2ms", "--platform", "ideal"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = run;
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args);
  };
  ExpectInvalid(with({"--global-batch", "63", "--microbatch-size", "2"}),
                "--global-batch: 63 sequences are not a multiple of --dp 1 x --microbatch-size 2 "
                "= 2");
  ExpectInvalid(with({"--global-batch", "64", "--microbatches", "8"}),
                "--global-batch: 64 sequences over --dp 1 x --microbatch-size 1 make 64 "
                "microbatches, but --microbatches says 8");
  ExpectInvalid(with({"--global-batch", "4Mtok"}),
                "--global-batch: 4000000 tokens need a sequence length to count sequences; give "
                "--seq-len or --model");
  ExpectInvalid(with({"--global-batch", "4Mtok", "--seq-len", "4096"}),
                "--global-batch: 4000000 tokens are not a whole number of 4096-token sequences");
  ExpectInvalid(with({"--global-batch", "lots"}),
                "--global-batch: invalid count 'lots'; expected a whole number, optionally with a "
                "prefix K, M, B or G, T, P (powers of 1000) or Ki, Mi, Gi, Ti, Pi (powers of "
                "1024) and then tok, tokens, seq, sequences, e.g. 2Mitok");
  ExpectInvalid(with({"--microbatches", "8", "--train-tokens", "1T"}),
                "--train-tokens: needs the tokens of an iteration; give --model or --seq-len");
  ExpectInvalid(with({"--microbatches", "8", "--gpu-hour-cost", "2"}),
                "--gpu-hour-cost: prices the GPU-hours of a training run; give --train-tokens too");
}

TEST(Workload, TrainingTimeGpuHoursAndCost) {
  proto::RunConfig config = IdealRun("1F1B", 4, 8, "1ms", "2ms", EngineKind::kCriticalPath);
  config.set_seq_len(1000);
  config.set_train_tokens("1.5T");
  config.set_gpu_hour_cost(2.5);
  const RunResult r = RunOk(config);
  // 8 sequences of 1000 tokens per iteration on 4 GPUs.
  EXPECT_EQ(r.tokens_per_s, 8000 / r.metrics.makespan_s);
  EXPECT_EQ(r.time_to_train_s, 1.5e12 / r.tokens_per_s);
  EXPECT_DOUBLE_EQ(r.gpu_hours, 1.5e12 / 8000 * r.metrics.makespan_s / 3600 * 4);
  EXPECT_DOUBLE_EQ(r.cost, r.gpu_hours * 2.5);
}

TEST(Workload, HardwareFlopsAddTheRecomputedForward) {
  // GPT-3 1.5B (22 layers, h 2304, s 1024), microbatch 1, 4 microbatches: full recomputation runs
  // every layer's forward, 24bsh^2 + 4bs^2h FLOPs, once more per microbatch.
  proto::RunConfig config = IdealRun("1F1B", 2, 4, "", "", EngineKind::kCriticalPath);
  config.clear_f();
  config.set_model("gpt3-1.5b");
  config.set_recompute("full");
  const RunResult r = RunOk(config);
  const double b = 1, s = 1024, h = 2304;
  const double layer_forward = 24 * b * s * h * h + 4 * b * s * s * h;
  EXPECT_NEAR(r.hardware_flops - r.model_flops, 22 * 4 * layer_forward, 1e-9 * r.model_flops);
  EXPECT_DOUBLE_EQ(r.hfu / r.mfu, r.hardware_flops / r.model_flops);
  config.clear_recompute();
  EXPECT_EQ(RunOk(config).hardware_flops, 0);  // no recomputation: no HFU
}

TEST(Workload, ASchedulesFileSplitsSharesAsItsNamedSchedule) {
  // Printed and read back, DualPipe and ZB-V keep their pipelines and stage maps, so costs per
  // rank share (uneven: share 2 is slow) land on the same stages and the runs are the same.
  for (const std::vector<std::string>& choice :
       {std::vector<std::string>{"--schedule", "DualPipe", "--pp", "4", "--microbatches", "8"},
        std::vector<std::string>{"--schedule", "ZB-V", "--pp", "4", "--microbatches", "8"}}) {
    std::vector<std::string> print = {"schedule"};
    print.insert(print.end(), choice.begin(), choice.end());
    print.insert(print.end(), {"--format", "torch-csv"});
    const CliResult csv = Cli(print);
    ASSERT_EQ(csv.code, 0) << csv.err;
    const std::string path = WriteFile(choice[1] + "-shares.csv", csv.out);
    const std::vector<std::string> costs = {"--f", "1ms,1ms,2ms,1ms", "--i", "1ms", "--w",
                                            "0.5ms", "--platform", "ideal", "--format", "csv"};
    ExpectFileRunsAsNamed(choice, path, costs);
  }
}

TEST(Workload, GlobalBatchWithAScheduleFile) {
  const std::string path = WriteFile("gb.txt", "rank 0: 0F0 0F1 1F0 1F1 1B0 1B1 0B0 0B1\n");
  const std::vector<std::string> run = {"run", "--schedule-file", path, "--f", "1ms", "--b",
                                        "2ms", "--platform", "ideal", "--format", "json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = run;
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args);
  };
  EXPECT_EQ(with({"--global-batch", "4", "--microbatch-size", "2"}).code, 0);
  ExpectInvalid(with({"--global-batch", "6", "--microbatch-size", "2"}),
                "--global-batch: makes 3 microbatches (of --microbatch-size 2 on --dp 1), but " +
                    path + " has 2");
}

}  // namespace
}  // namespace ppsim
