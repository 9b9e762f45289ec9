// --megatron through the request: the arguments' fields, the world size's dp, the request's own
// fields overriding them, and messages naming the argument a field came from.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "base/flag_locator.h"
#include "experiments/request.h"

namespace ppsim {
namespace {

std::string Args(const std::string& name) {
  return "@" + std::string(PPSIM_SOURCE_DIR) + "/tests/data/megatron/" + name;
}

Status Resolve(const proto::RunConfig& config, RunRequest* request) {
  return ResolveRun(config, std::make_shared<FlagLocator>(), {}, request);
}

TEST(MegatronRequest, Gpt3_175bOn16NodesIsTp8Pp16Dp1) {
  proto::RunConfig config;
  config.set_megatron(Args("gpt3_175b.args"));
  config.set_platform("dgx-h100");
  config.set_nodes(16);
  RunRequest request;
  ASSERT_TRUE(Resolve(config, &request).ok()) << Resolve(config, &request).message();
  ASSERT_EQ(request.runs.size(), 1u);
  const RunSpec& run = request.runs[0];
  EXPECT_EQ(run.schedule_name, "1F1B");
  EXPECT_EQ(run.training.layout.tp, 8);
  EXPECT_EQ(run.training.layout.pp, 16);
  EXPECT_EQ(run.training.layout.dp, 1);  // 16 nodes x 8 GPUs / (8 x 16)
  EXPECT_EQ(run.global_batch, 1536);
  EXPECT_EQ(run.training.microbatch_size, 1);
  EXPECT_EQ(run.training.seq_len, 2048);
  EXPECT_EQ(run.training.dtype, Dtype::kFp16);
  EXPECT_EQ(run.p2p_mode, P2pMode::kMegatron);
  EXPECT_FALSE(run.training.sequence_parallel);
  ASSERT_NE(run.model_spec, nullptr);
  EXPECT_EQ(run.model_spec->vocab, 51200);
  // The @FILE is an input no output may overwrite.
  EXPECT_EQ(request.sources.back(), Args("gpt3_175b.args").substr(1));
  PreparedRun prepared;
  ASSERT_TRUE(PrepareRun(run, &prepared, /*compile=*/false).ok());
  EXPECT_EQ(prepared.schedule.num_microbatches, 1536);  // 1536 / (dp 1 x mbs 1)
  EXPECT_EQ(prepared.layers_per_stage, std::vector<int32_t>(16, 6));
}

// --tp beside the arguments is the TP Megatron derives from: GPT-3's 50,257 tokens padded to a
// multiple of 128 x 4 = 512: 99 x 512 = 50,688 (with the arguments' TP 8, 50 x 1024 = 51,200).
TEST(MegatronRequest, TheRequestsTpPadsTheVocabulary) {
  proto::RunConfig config;
  config.set_megatron(Args("gpt3_175b.args"));
  config.set_platform("dgx-h100");
  config.set_nodes(16);
  config.set_tp(4);
  RunRequest request;
  ASSERT_TRUE(Resolve(config, &request).ok()) << Resolve(config, &request).message();
  const RunSpec& run = request.runs[0];
  EXPECT_EQ(run.training.layout.tp, 4);
  EXPECT_EQ(run.training.layout.dp, 2);  // 128 GPUs / (4 x 16)
  EXPECT_EQ(run.model_spec->vocab, 50688);
  EXPECT_NE(std::find(run.import_notes.begin(), run.import_notes.end(),
                      "megatron: vocabulary 50257 padded to 50688 (a multiple of 512), as "
                      "Megatron pads it"),
            run.import_notes.end());
}

TEST(MegatronRequest, FlagsBesideItWinAndDpFollows) {
  proto::RunConfig config;
  config.set_megatron(Args("llama3_8b_h100_fp8.args"));
  config.set_platform("h100-node");
  RunRequest request;
  // As written (TP 1): Megatron turns --sequence-parallel off, and says so.
  ASSERT_TRUE(Resolve(config, &request).ok());
  EXPECT_FALSE(request.runs[0].training.sequence_parallel);
  const std::vector<std::string>& notes = request.runs[0].import_notes;
  EXPECT_NE(
      std::find(notes.begin(), notes.end(),
                "megatron: --sequence-parallel: off at tensor-parallel size 1, as Megatron turns "
                "it off"),
      notes.end());
  config.set_tp(2);
  config.set_dtype("bf16");
  ASSERT_TRUE(Resolve(config, &request).ok()) << Resolve(config, &request).message();
  const RunSpec& run = request.runs[0];
  EXPECT_EQ(run.training.layout.tp, 2);
  EXPECT_EQ(run.training.layout.dp, 4);         // 8 GPUs / (tp 2 x pp 1)
  EXPECT_TRUE(run.training.sequence_parallel);  // the script's, on at --tp 2
  EXPECT_EQ(run.training.dtype, Dtype::kBf16);
  EXPECT_EQ(run.training.zero_stage, 1);  // --use-distributed-optimizer
  EXPECT_FALSE(run.training.fp32_grads);  // --grad-reduce-in-bf16
  // --overlap-grad-reduce: max(40M, 1M x 4) parameters of 2 bytes (bf16 gradients).
  EXPECT_EQ(run.grad_bucket_bytes, 80'000'000);
}

TEST(MegatronRequest, MessagesNameTheArgument) {
  proto::RunConfig config;
  config.set_megatron(Args("gpt3_175b.args"));
  RunRequest request;
  EXPECT_EQ(Resolve(config, &request).message(),
            "--megatron: the 8 GPUs of h100-node are not a multiple of tp x pp x cp = 128 (one "
            "pipeline); give --nodes or --dp");
  config.set_megatron(
      "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 64 --vocab-size 64 "
      "--bf16 --micro-batch-size 0");
  EXPECT_EQ(Resolve(config, &request).message(),
            "--megatron: --micro-batch-size: must be at least 1; got 0");
  // Context parallelism across nodes: tp 8 x cp 2 spans two nodes of h100-node (one node: it
  // needs --nodes 2).
  config.set_megatron(
      "--num-layers 4 --hidden-size 64 --num-attention-heads 8 --seq-length 64 --vocab-size 64 "
      "--bf16 --tensor-model-parallel-size 8 --context-parallel-size 2");
  EXPECT_EQ(Resolve(config, &request).message(),
            "--megatron: the 8 GPUs of h100-node are not a multiple of tp x pp x cp = 16 (one "
            "pipeline); give --nodes or --dp");
  // A degree the arguments set, checked by ppsim's own rule: named by its argument.
  config.set_megatron(
      "--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 64 --vocab-size 64 "
      "--bf16 --tensor-model-parallel-size 4 --context-parallel-size 100000");
  EXPECT_EQ(
      Resolve(config, &request)
          .message()
          .rfind(
              "--megatron: --context-parallel-size (ppsim's --cp): 100000 x --tp 4 = 400000 GPUs "
              "per rank; at most ",
              0),
      0u)
      << Resolve(config, &request).message();
}

}  // namespace
}  // namespace ppsim
