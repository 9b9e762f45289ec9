// Megatron's recomputation by module and method, and activation bytes per precision
// (models/transformer.h, "Recomputation by module"): bytes per layer against closed forms worked
// out by hand from the shapes, and the time added against the recomputed ops' own costs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/flag_locator.h"
#include "models/op_costs.h"
#include "models/transformer.h"

namespace ppsim {
namespace {

// A small Llama-style layer: h 1024, 16 heads of 64, 8 KV heads, SwiGLU f 3584; 8 layers.
TransformerSpec Small() {
  TransformerSpec spec;
  spec.name = "small";
  spec.layers = 8;
  spec.hidden = 1024;
  spec.ffn_hidden = 3584;
  spec.heads = 16;
  spec.kv_heads = 8;
  spec.vocab = 32000;
  spec.swiglu = true;
  spec.rmsnorm = true;
  spec.seq_len = 2048;
  return spec;
}

// s 2048, b 1, t 2 with sequence parallelism: sb = 2048 tokens; per GPU h/t 512, Q and context
// 512, K and V 256 each, f/t 1792.
TrainingSetup SmallSetup() {
  TrainingSetup setup;
  setup.seq_len = 2048;
  setup.microbatch_size = 1;
  setup.layout.tp = 2;
  setup.sequence_parallel = true;
  return setup;
}

constexpr int64_t kSb = 2048, kHt = 512, kQt = 512, kKvt = 256, kFt = 1792;

int64_t Stored(const TransformerSpec& spec, const TrainingSetup& setup,
               LayerKind kind = LayerKind::kDense) {
  EXPECT_TRUE(CheckTrainingSetup(spec, setup, FlagLocator()).ok());
  return TransformerLayerCosts(spec, setup, kind).activation_bytes;
}

TEST(RecomputeModules, SmallLayerBytesPerModule) {
  const TransformerSpec spec = Small();
  TrainingSetup setup = SmallSetup();
  // Everything: norm inputs 4sbh/t and outputs 4sbh/t, Q, K, V 2(q + 2kv)sb, context 2q sb, the
  // MLP's gate and up outputs 4f sb and their product 2f sb.
  const int64_t norm_in = 4 * kSb * kHt, norm_out = 4 * kSb * kHt;
  const int64_t qkv = kSb * 2 * (kQt + 2 * kKvt), context = 2 * kSb * kQt;
  const int64_t mlp = 6 * kSb * kFt;
  const int64_t all = norm_in + norm_out + qkv + context + mlp;
  EXPECT_EQ(all, 36700160);  // 8sbh/t + sb(2q + 4kv + 2q + 6f)/... = 2048 x 17920
  EXPECT_EQ(Stored(spec, setup), all);
  // core_attn with flash attention keeps the same (no scores are stored).
  setup.recompute = Recompute::kSelective;
  EXPECT_EQ(Stored(spec, setup), all);
  setup.recompute_modules = kRecomputeLayernorm;
  EXPECT_EQ(Stored(spec, setup), all - norm_out);
  setup.recompute_modules = kRecomputeMlp;
  EXPECT_EQ(Stored(spec, setup), all - mlp);
  setup.recompute_modules = kRecomputeCoreAttn | kRecomputeLayernorm | kRecomputeMlp;
  EXPECT_EQ(Stored(spec, setup), norm_in + qkv + context);  // 14680064 - 4194304 + ...
  EXPECT_EQ(Stored(spec, setup), 10485760);
  // Without flash attention core_attn drops the softmax output, 2 bytes x (a/t) s^2 b.
  setup.flash_attention = false;
  setup.recompute = Recompute::kNone;
  setup.recompute_modules = 0;
  EXPECT_EQ(Stored(spec, setup), all + 2 * 8 * 2048 * kSb);
  setup.recompute = Recompute::kSelective;
  setup.recompute_modules = kRecomputeCoreAttn;
  EXPECT_EQ(Stored(spec, setup), all);
}

TEST(RecomputeModules, Fp8AndMxfp8KeepTheLinearInputsIn8Bits) {
  const TransformerSpec spec = Small();
  TrainingSetup setup = SmallSetup();
  // 16-bit: norm inputs 4sbh/t, Q K V, the gate and up outputs 4f sb. TE's FP8 linear inputs:
  // the two norm outputs (QKV's and fc1's, LayerNormLinear) 2sbh/t values, the context q sb, fc2's
  // input (the SwiGLU product) f sb.
  const int64_t sixteen = 4 * kSb * kHt + kSb * 2 * (kQt + 2 * kKvt) + 4 * kSb * kFt;
  const int64_t fp8_values = 2 * kSb * kHt + kSb * kQt + kSb * kFt;
  EXPECT_EQ(sixteen, 23068672);
  EXPECT_EQ(fp8_values, 6815744);
  setup.dtype = Dtype::kBf16;
  EXPECT_EQ(Stored(spec, setup), sixteen + 2 * fp8_values);
  setup.dtype = Dtype::kFp8;
  EXPECT_EQ(Stored(spec, setup), sixteen + fp8_values);  // 29884416
  // MXFP8: 33/32 bytes per value (each tensor's count is a multiple of 32).
  setup.dtype = Dtype::kMxfp8;
  EXPECT_EQ(Stored(spec, setup), sixteen + fp8_values * 33 / 32);  // 30097408
  EXPECT_EQ(Stored(spec, setup), 30097408);
  // The layer's input kept by full recompute is 16-bit whatever the precision.
  setup.recompute = Recompute::kFull;
  EXPECT_EQ(Stored(spec, setup), 2 * kSb * kHt);
}

TEST(RecomputeModules, Llama3_8bLayer) {
  const TransformerSpec* spec = FindTransformerPreset("llama3-8b");
  ASSERT_NE(spec, nullptr);
  TrainingSetup setup;
  setup.seq_len = 8192;
  // Per token (t 1): norms 8h = 32768, Q K V 2(4096 + 2 x 1024) = 12288, context 8192, MLP 6f =
  // 86016: 139264 x 8192 tokens.
  EXPECT_EQ(Stored(*spec, setup), int64_t{139264} * 8192);
  setup.recompute = Recompute::kSelective;
  setup.recompute_modules = kRecomputeMlp;
  EXPECT_EQ(Stored(*spec, setup), int64_t{139264 - 86016} * 8192);
  setup.recompute_modules = kRecomputeMlp | kRecomputeLayernorm;
  EXPECT_EQ(Stored(*spec, setup), int64_t{139264 - 86016 - 4 * 4096} * 8192);
}

TEST(RecomputeModules, DeepSeekV3MoeLayer) {
  const TransformerSpec* spec = FindTransformerPreset("deepseek-v3");
  ASSERT_NE(spec, nullptr);
  TrainingSetup setup;
  setup.seq_len = 4096;
  setup.layout.ep = 1;
  // Per token of a MoE layer (t 1), h 7168, a 128 heads of 128 + 64 (K, Q) and 128 (V):
  //   norm inputs 4h 28672, norm outputs 4h 28672,
  //   latents q_a out and its norm 2 x 1536 x 2, kv_a out 2(512 + 64), its norm 2 x 512: 8320,
  //   Q, K 2 x 128 x 192 each, V 2 x 128 x 128: 131072; context 32768,
  //   MoE: router 5E 1280, permuted 2kh 114688, fc1 outputs 4kf_e 65536, product 2kf_e 32768,
  //   unpermute input 2kh 114688, shared expert 6 f_s 12288: 341248.
  const int64_t tokens = 4096;
  const int64_t norms = 28672 + 28672, latents = 8320, qkv = 131072, context = 32768;
  const int64_t moe = 341248;
  const int64_t all = norms + latents + qkv + context + moe;
  EXPECT_EQ(Stored(*spec, setup, LayerKind::kMoe), all * tokens);
  setup.recompute = Recompute::kSelective;
  auto with = [&](uint32_t modules) {
    setup.recompute_modules = modules;
    return Stored(*spec, setup, LayerKind::kMoe);
  };
  EXPECT_EQ(with(kRecomputeMlaUpProj), (all - qkv) * tokens);
  EXPECT_EQ(with(kRecomputeMoeAct), (all - 32768) * tokens);
  EXPECT_EQ(with(kRecomputeSharedExperts), (all - 12288) * tokens);
  EXPECT_EQ(with(kRecomputeLayernorm), (all - 28672) * tokens);
  EXPECT_EQ(with(kRecomputeMoe), (all - moe) * tokens);
  // moe covers moe_act and shared_experts.
  EXPECT_EQ(with(kRecomputeMoe | kRecomputeMoeAct | kRecomputeSharedExperts), (all - moe) * tokens);
  EXPECT_EQ(with(kRecomputeMlaUpProj | kRecomputeMoeAct | kRecomputeLayernorm),
            (all - qkv - 32768 - 28672) * tokens);
  // A dense layer of DeepSeek-V3 (the first 3): mlp drops its 6f = 6 x 18432 per token.
  setup.recompute_modules = kRecomputeCoreAttn;
  const int64_t dense = Stored(*spec, setup, LayerKind::kDense);
  setup.recompute_modules = kRecomputeMlp;
  EXPECT_EQ(dense - Stored(*spec, setup, LayerKind::kDense), 6 * 18432 * tokens);
}

// The ops a layer runs again in I, as LayerOps lists them.
std::vector<ModelOp> Recomputed(const TransformerSpec& spec, const TrainingSetup& setup,
                                LayerKind kind) {
  std::vector<ModelOp> ops;
  for (const ModelOp& op : LayerOps(spec, setup, kind)) {
    if (op.recompute) ops.push_back(op);
  }
  return ops;
}

GpuModel H100() {
  GpuModel gpu;
  gpu.matmul_flops_per_s = 989e12;
  gpu.attention_flops_per_s = 989e12;
  gpu.sms = 132;
  gpu.matmul_efficiency = 0.75;
  gpu.matmul_16bit_efficiency = 0.75;
  gpu.attention_efficiency = 0.6;
  gpu.memory_bytes_per_s = 3.35e12;
  gpu.memory_efficiency = 0.85;
  return gpu;
}

TEST(RecomputeModules, TimeAddedIsTheRecomputedForwardOps) {
  const TransformerSpec spec = Small();
  TrainingSetup setup = SmallSetup();
  const GpuModel gpu = H100();
  // The ops recomputed with mlp and layernorm: norm 1, norm 2, then the MLP's up GEMM (T x 2f/t x
  // h), the SwiGLU (read gate and up, write the product: 6 T f/t bytes) and the down GEMM
  // (T x h x f/t), the forward's own shapes, timed here from their shapes.
  setup.recompute = Recompute::kSelective;
  setup.recompute_modules = kRecomputeLayernorm | kRecomputeMlp;
  const std::vector<ModelOp> ops = Recomputed(spec, setup, LayerKind::kDense);
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(ops[0].name, "recompute norm 1");
  EXPECT_EQ(ops[1].name, "recompute norm 2");
  EXPECT_EQ(ops[2].name, "recompute mlp up");
  EXPECT_EQ(ops[3].name, "recompute activation");
  EXPECT_EQ(ops[4].name, "recompute mlp down");
  const double T = kSb, T_r = kSb / 2.0;
  EXPECT_DOUBLE_EQ(ops[0].bytes, 4 * T_r * 1024);
  EXPECT_DOUBLE_EQ(ops[3].bytes, 6 * T * kFt);
  EXPECT_EQ(ops[2].m, kSb);
  EXPECT_EQ(ops[2].n, 2 * kFt);
  EXPECT_EQ(ops[2].k, 1024);
  EXPECT_DOUBLE_EQ(ops[2].flops, 2 * T * 2 * kFt * 1024);
  EXPECT_EQ(ops[4].n, 1024);
  EXPECT_EQ(ops[4].k, kFt);
  for (const ModelOp& op : ops) EXPECT_EQ(op.pass, OpPass::kBackwardInput);
  // I's model FLOPs gain the MLP's forward, 6 T h f/t.
  TrainingSetup none = SmallSetup();
  EXPECT_DOUBLE_EQ(TransformerLayerCosts(spec, setup).backward_input_flops -
                       TransformerLayerCosts(spec, none).backward_input_flops,
                   6 * T * 1024 * kFt);
  // The seconds: norms at HBM speed, the GEMMs by the roofline (TimeOp of the same shapes).
  const double hbm = 3.35e12 * 0.85;
  EXPECT_DOUBLE_EQ(TimeOp(ops[0], gpu).seconds, 4 * T_r * 1024 / hbm);
  EXPECT_DOUBLE_EQ(TimeOp(ops[3], gpu).seconds, 6 * T * kFt / hbm);
}

TEST(RecomputeModules, MlaAndMoeModulesRecomputeTheirOps) {
  const TransformerSpec* spec = FindTransformerPreset("deepseek-v3");
  ASSERT_NE(spec, nullptr);
  TrainingSetup setup;
  setup.seq_len = 4096;
  setup.recompute = Recompute::kSelective;
  setup.recompute_modules = kRecomputeMlaUpProj | kRecomputeMoeAct;
  const std::vector<ModelOp> ops = Recomputed(*spec, setup, LayerKind::kMoe);
  ASSERT_EQ(ops.size(), 4u);
  // q_b: T x a(n + r) x q_lora = 4096 x 24576 x 1536; kv_b: T x a(n + v) x kv_lora = 4096 x
  // 32768 x 512; rotary 4 T a r + 4 T r bytes; the experts' SwiGLU 6 T k f_e bytes.
  EXPECT_EQ(ops[0].name, "recompute q up");
  EXPECT_DOUBLE_EQ(ops[0].flops, 2.0 * 4096 * 24576 * 1536);
  EXPECT_EQ(ops[1].name, "recompute kv up");
  EXPECT_DOUBLE_EQ(ops[1].flops, 2.0 * 4096 * 32768 * 512);
  EXPECT_EQ(ops[2].name, "recompute rotary");
  EXPECT_DOUBLE_EQ(ops[2].bytes, 4.0 * 4096 * 128 * 64 + 4.0 * 4096 * 64);
  EXPECT_EQ(ops[3].name, "recompute expert activation");
  EXPECT_DOUBLE_EQ(ops[3].bytes, 6.0 * 4096 * 8 * 2048);
  TrainingSetup none = setup;
  none.recompute = Recompute::kNone;
  none.recompute_modules = 0;
  EXPECT_DOUBLE_EQ(TransformerLayerCosts(*spec, setup, LayerKind::kMoe).backward_input_flops -
                       TransformerLayerCosts(*spec, none, LayerKind::kMoe).backward_input_flops,
                   2.0 * 4096 * (24576.0 * 1536 + 32768.0 * 512));
}

TEST(RecomputeMethod, BlockAndUniformPerStage) {
  const TransformerSpec spec = Small();
  TrainingSetup setup = SmallSetup();
  const int64_t input = 2 * kSb * kHt;  // a layer's input, 16-bit, sequence-parallel shard
  const int64_t all = 36700160;         // a layer keeping everything (above)
  setup.recompute = Recompute::kFull;
  // Two stages of 4 layers (the first: a SwiGLU embedding keeps nothing). Block 1: one layer
  // recomputed, three keep everything.
  setup.recompute_method = RecomputeMethod::kBlock;
  setup.recompute_num_layers = 1;
  ASSERT_TRUE(CheckTrainingSetup(spec, setup, FlagLocator()).ok());
  std::vector<StageModel> stages = BuildStageModels(spec, setup, {4, 4});
  EXPECT_EQ(stages[0].activation_bytes, input + 3 * all);
  EXPECT_EQ(stages[0].recomputed_layers, 1);
  // Uniform 3: groups {3, 1}, each keeping its input.
  setup.recompute_method = RecomputeMethod::kUniform;
  setup.recompute_num_layers = 3;
  stages = BuildStageModels(spec, setup, {4, 4});
  EXPECT_EQ(stages[0].activation_bytes, 2 * input);
  EXPECT_EQ(stages[0].recomputed_layers, 4);
  // Default full: one input per layer.
  setup.recompute_method = RecomputeMethod::kAll;
  setup.recompute_num_layers = 0;
  stages = BuildStageModels(spec, setup, {4, 4});
  EXPECT_EQ(stages[0].activation_bytes, 4 * input);

  // Time: block 1's I is one fully recomputed layer's I and three plain layers' I, each the sum
  // of its ops' seconds in I.
  const GpuModel gpu = H100();
  auto input_seconds = [&](const TrainingSetup& s) {
    double sum = 0;
    for (const ModelOp& op : LayerOps(spec, s)) {
      if (op.pass == OpPass::kBackwardInput) sum += TimeOp(op, gpu).seconds;
    }
    return sum;
  };
  TrainingSetup full = SmallSetup();
  full.recompute = Recompute::kFull;
  TrainingSetup plain = SmallSetup();
  setup.recompute_method = RecomputeMethod::kBlock;
  setup.recompute_num_layers = 1;
  stages = BuildStageModels(spec, setup, {4, 4});
  const std::vector<PassSeconds> seconds = StagePassSeconds(spec, setup, stages, gpu, 0);
  std::vector<StageModel> plain_stages = BuildStageModels(spec, plain, {4, 4});
  const double head = StagePassSeconds(spec, plain, plain_stages, gpu, 0)[1].backward_input_s -
                      4 * input_seconds(plain);
  EXPECT_NEAR(seconds[1].backward_input_s, input_seconds(full) + 3 * input_seconds(plain) + head,
              1e-12);
  EXPECT_GT(input_seconds(full), input_seconds(plain));
}

TEST(RecomputeModules, NamesAndInvalidCombinations) {
  uint32_t modules = 0;
  ASSERT_TRUE(
      ParseRecomputeModules("--recompute-modules", "core_attn,moe_act layernorm", &modules).ok());
  EXPECT_EQ(modules, kRecomputeCoreAttn | kRecomputeMoeAct | kRecomputeLayernorm);
  EXPECT_EQ(RecomputeModulesName(modules), "core_attn,moe_act,layernorm");
  EXPECT_EQ(ParseRecomputeModules("--recompute-modules", "attn", &modules).message(),
            "--recompute-modules: unknown module 'attn'; valid: core_attn, mlp, moe, moe_act, "
            "layernorm, mla_up_proj, shared_experts");
  EXPECT_FALSE(ParseRecomputeModules("--recompute-modules", "mlp,mlp", &modules).ok());
  EXPECT_FALSE(ParseRecomputeModules("--recompute-modules", "", &modules).ok());

  const TransformerSpec spec = Small();
  TrainingSetup setup = SmallSetup();
  setup.recompute = Recompute::kSelective;
  setup.recompute_modules = kRecomputeMlaUpProj;
  EXPECT_EQ(CheckTrainingSetup(spec, setup, FlagLocator()).message(),
            "--recompute-modules: mla_up_proj needs multi-head latent attention; small has none "
            "(valid: core_attn, mlp, layernorm)");
  setup.recompute_modules = kRecomputeMoe;
  EXPECT_EQ(CheckTrainingSetup(spec, setup, FlagLocator()).message(),
            "--recompute-modules: moe needs a model with experts; small is dense (valid: "
            "core_attn, mlp, layernorm)");
  setup.recompute = Recompute::kFull;
  setup.recompute_modules = kRecomputeMlp;
  EXPECT_EQ(CheckTrainingSetup(spec, setup, FlagLocator()).message(),
            "--recompute-modules: applies to selective recomputation (--recompute selective), not "
            "full; full recomputes whole layers");
  setup.recompute_modules = 0;
  setup.recompute_method = RecomputeMethod::kBlock;
  EXPECT_EQ(CheckTrainingSetup(spec, setup, FlagLocator()).message(),
            "--recompute-num-layers: must be at least 1 with --recompute-method; got 0");
  setup.recompute = Recompute::kSelective;
  setup.recompute_num_layers = 2;
  EXPECT_EQ(CheckTrainingSetup(spec, setup, FlagLocator()).message(),
            "--recompute-method: applies to --recompute full only, as Megatron asserts");
}

}  // namespace
}  // namespace ppsim
