// ZeRO-2 and ZeRO-3 (FSDP2 as torchtitan runs it, HSDP): per-GPU static bytes from closed forms.
//
// Llama 3 8B on one stage (tp 1, cp 1), the recipe's 6 + 12 bytes per parameter (16-bit weights
// w = 2, fp32 gradients g = 4; fp32 main parameters and Adam's moments S = 12). From the
// published shapes (h 4096, 8 KV heads of 128, f 14336, V 128256, 32 layers, untied):
//   layer  P_L = 2 h^2 + 2 h 1024 + 3 h f + 2 h = 218,112,000
//   embedding V h = 525,336,576; final norm h + head V h = 525,340,672 (the largest FSDP unit U)
//   P = 32 P_L + 2 V h + h = 8,030,261,248 (the model card's 8.03B)
// FSDP units: the embedding, 32 layers, the norm with the head (torchtitan's apply_fsdp) = 34.
#include <gtest/gtest.h>

#include "base/flag_locator.h"
#include "models/transformer.h"

namespace ppsim {
namespace {

constexpr int64_t kP = 8030261248;
constexpr int64_t kUnit = 525340672;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

TrainingSetup ShardSetup(int32_t zero, int32_t dp) {
  TrainingSetup setup;
  setup.seq_len = 8192;
  setup.microbatch_size = 1;
  setup.layout.dp = dp;
  setup.zero_stage = zero;
  return setup;
}

StageModel OneStage(const TrainingSetup& setup) {
  const TransformerSpec* llama = FindTransformerPreset("llama3-8b");
  EXPECT_NE(llama, nullptr);
  EXPECT_TRUE(CheckTrainingSetup(*llama, setup, FlagLocator()).ok());
  EXPECT_EQ(llama->TotalParameters(), kP);
  return BuildStageModels(*llama, setup, {32})[0];
}

// ZeRO-2 over dp 8: weights 2P on every GPU; fp32 gradients 4P/8 plus the bucket in flight
// (without --grad-bucket the stage is one bucket: all 4P); optimizer 12P/8; reduce-scattered: 4P.
TEST(Sharding, Zero2ShardsGradientsAndOptimizerState) {
  TrainingSetup setup = ShardSetup(2, 8);
  StageModel stage = OneStage(setup);
  EXPECT_EQ(stage.weight_bytes, 16060522496);           // 2P
  EXPECT_EQ(stage.gradient_bytes, 32121044992);         // 4P: one bucket
  EXPECT_EQ(stage.optimizer_state_bytes, 12045391872);  // 12P / 8
  EXPECT_EQ(stage.gradient_sync_bytes, 4 * kP);
  EXPECT_EQ(stage.fsdp_units, 0);
  setup.grad_bucket_bytes = int64_t{1} << 30;
  stage = OneStage(setup);
  EXPECT_EQ(stage.gradient_bytes, 5088872448);  // 4P / 8 + 1 GiB
  EXPECT_EQ(stage.static_bytes, 16060522496 + 5088872448 + 12045391872);
  EXPECT_EQ(stage.optimizer_step_bytes, 30 * CeilDiv(kP, 8));
}

// ZeRO-3 over S = dp = 8 with pp 1 (torchtitan's default policy: reshard after forward on):
// everything sharded, 2P/8 + 4P/8 + 12P/8, plus two units' 16-bit parameters gathered (4U) and
// one unit's fp32 gradients before its reduce-scatter (4U).
TEST(Sharding, Zero3ReshardOnHoldsTwoUnits) {
  const TrainingSetup setup = ShardSetup(3, 8);
  EXPECT_TRUE(setup.ReshardAfterForward());
  const StageModel stage = OneStage(setup);
  EXPECT_EQ(stage.weight_bytes, CeilDiv(2 * kP, 8) + 4 * kUnit);  // 4,108,928,000
  EXPECT_EQ(stage.weight_bytes, 4108928000);
  EXPECT_EQ(stage.gradient_bytes, 6116493312);  // 4P/8 + 4U
  EXPECT_EQ(stage.optimizer_state_bytes, 12045391872);
  EXPECT_EQ(stage.static_bytes, 4108928000 + 6116493312 + 12045391872);
  EXPECT_EQ(stage.fsdp_units, 34);
  EXPECT_EQ(stage.fsdp_gather_bytes, 2 * kP);
  EXPECT_EQ(stage.gradient_sync_bytes, 4 * kP);
  EXPECT_EQ(stage.optimizer_step_bytes, 28 * CeilDiv(kP, 8));
}

// Reshard off (torchtitan's default with a pipeline, or "never"): the stage's 16-bit parameters
// stay gathered (2P) and its unsharded fp32 gradients accumulate (4P).
TEST(Sharding, Zero3ReshardOffHoldsTheStage) {
  TrainingSetup setup = ShardSetup(3, 8);
  setup.reshard_after_forward = TrainingSetup::Reshard::kOff;
  StageModel stage = OneStage(setup);
  EXPECT_EQ(stage.weight_bytes, 18068087808);    // 2P/8 + 2P
  EXPECT_EQ(stage.gradient_bytes, 36136175616);  // 4P/8 + 4P
  setup.reshard_after_forward = TrainingSetup::Reshard::kDefault;
  setup.layout.pp = 4;  // the default policy turns it off with a pipeline
  EXPECT_FALSE(setup.ReshardAfterForward());
}

// HSDP: dp 8 = 4 replicas x S = 2 shards: the state over 2 GPUs only.
TEST(Sharding, HsdpShardsOverTheShardGroup) {
  TrainingSetup setup = ShardSetup(3, 8);
  setup.dp_shard = 2;
  const StageModel stage = OneStage(setup);
  EXPECT_EQ(stage.weight_bytes, 10131623936);           // 2P/2 + 4U
  EXPECT_EQ(stage.gradient_bytes, 18161885184);         // 4P/2 + 4U
  EXPECT_EQ(stage.optimizer_state_bytes, 48181567488);  // 12P/2
}

TEST(Sharding, BadValuesAreRefused) {
  const TransformerSpec& llama = *FindTransformerPreset("llama3-8b");
  TrainingSetup setup = ShardSetup(4, 8);
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--zero: 4 is not a ZeRO stage; valid: 0, 1, 2, 3");
  setup = ShardSetup(3, 8);
  setup.dp_shard = 3;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--dp-shard: 3 does not divide --dp 8; give a divisor of it (HSDP: shard over S, "
            "replicate over dp / S)");
  setup = ShardSetup(1, 8);
  setup.dp_shard = 4;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--dp-shard: shards parameters with --zero 3 only; give --zero 3");
  setup = ShardSetup(2, 8);
  setup.reshard_after_forward = TrainingSetup::Reshard::kOn;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--reshard-after-forward: applies with --zero 3 only");
  const TransformerSpec& mixtral = *FindTransformerPreset("mixtral-8x7b");
  setup = ShardSetup(3, 8);
  setup.layout.ep = 8;
  EXPECT_EQ(CheckTrainingSetup(mixtral, setup, FlagLocator()).message(),
            "--zero: 3 with the routed experts of mixtral-8x7b and --ep 8, --tp 1 is not modelled "
            "(their expert-data-parallel sharding); valid with experts: 0, 1, or 2 and 3 with ep 1 "
            "and tp 1");
}

// FSDP of a MoE model without expert parallelism (torchtitan's deepseek_v3_671b.toml: ep 1,
// tp 1): every GPU holds every expert, so the experts shard with the dense parameters, and a MoE
// block with its experts is one unit. Mixtral 8x7B (h 4096, 8 KV heads of 128, 8 experts of
// f 14336, V 32000, 32 layers, untied): a layer's attention 2 h^2 + 2 h 1024 = 41,943,040, router
// 8 h = 32,768, experts 8 x 3 h f = 1,409,286,144, norms 2 h: U = 1,451,270,144; P = 32 U + 2 V h +
// h = 46,702,792,704 (the published 46.7B).
TEST(Sharding, Zero3ShardsTheExpertsWithoutExpertParallelism) {
  const TransformerSpec& mixtral = *FindTransformerPreset("mixtral-8x7b");
  const int64_t p = 46702792704, unit = 1451270144;
  EXPECT_EQ(mixtral.TotalParameters(), p);
  const TrainingSetup setup = ShardSetup(3, 8);
  ASSERT_TRUE(CheckTrainingSetup(mixtral, setup, FlagLocator()).ok());
  const StageModel stage = BuildStageModels(mixtral, setup, {32})[0];
  EXPECT_EQ(stage.weight_bytes, CeilDiv(2 * p, 8) + 4 * unit);  // 2P/8 + two units gathered
  EXPECT_EQ(stage.weight_bytes, 17480778752);
  EXPECT_EQ(stage.gradient_bytes, 29156476928);         // 4P/8 + 4U
  EXPECT_EQ(stage.optimizer_state_bytes, 70054189056);  // 12P/8
  EXPECT_EQ(stage.expert_gradient_bytes, 0);            // reduced with the dense ones
  EXPECT_EQ(stage.gradient_sync_bytes, 4 * p);
  EXPECT_EQ(stage.fsdp_gather_bytes, 2 * p);
}

}  // namespace
}  // namespace ppsim
