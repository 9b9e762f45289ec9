#include "models/transformer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "models/op_costs.h"

// Expected values are closed forms written out from the matmul shapes and the cited formulas
// (Narayanan et al. 2021; Korthikanti et al. 2022; Qi et al. 2024, Table 1; ZeRO's 16 bytes per
// parameter) and published parameter counts, never outputs of the code under test.

namespace ppsim {
namespace {

const TransformerSpec& Preset(std::string_view name) {
  const TransformerSpec* spec = FindTransformerPreset(name);
  EXPECT_NE(spec, nullptr) << name;
  return *spec;
}

// A small GPT-style model for the formulas.
TransformerSpec Tiny() {
  TransformerSpec spec;
  spec.name = "tiny";
  spec.layers = 6;
  spec.hidden = 1024;
  spec.ffn_hidden = 4096;
  spec.heads = 16;
  spec.kv_heads = 16;
  spec.vocab = 1000;
  spec.seq_len = 512;
  return spec;
}

TrainingSetup Training(int64_t s, int64_t b) {
  TrainingSetup setup;
  setup.seq_len = s;
  setup.microbatch_size = b;
  return setup;
}

double RelativeError(double value, double published) {
  return std::abs(value - published) / published;
}

TEST(TransformerPresets, Gpt3ParametersFollowNarayanansFormula) {
  // P = 12Lh^2 + 13Lh + (V + s)h (Narayanan et al. 2021, Sec. 5.1) plus the final LayerNorm 2h.
  const TransformerSpec& gpt3 = Preset("gpt3-175b");
  const int64_t L = 96, h = 12288, V = 50257, s = 2048;
  EXPECT_EQ(gpt3.TotalParameters(), 12 * L * h * h + 13 * L * h + (V + s) * h + 2 * h);
  EXPECT_LT(RelativeError(static_cast<double>(gpt3.TotalParameters()), 174.6e9), 0.005);
  EXPECT_EQ(gpt3.LayerParameters(), 12 * h * h + 13 * h);
  EXPECT_EQ(gpt3.EmbeddingParameters(), (V + s) * h);
  EXPECT_EQ(gpt3.HeadParameters(), 0);  // tied
}

TEST(TransformerPresets, ZeroBubblePaperModelsAreGpt3Shaped) {
  // Qi et al. 2024, Table 3; vocabulary 50257 tied, f = 4h, positions for s = 1024.
  struct Row {
    const char* name;
    int64_t layers, hidden, heads;
    double label;
  };
  for (const Row& row :
       {Row{"gpt3-1.5b", 22, 2304, 24, 1.5e9}, Row{"gpt3-6.2b", 30, 4096, 32, 6.2e9},
        Row{"gpt3-14.6b", 46, 5120, 40, 14.6e9}, Row{"gpt3-28.3b", 62, 6144, 48, 28.3e9}}) {
    const TransformerSpec& spec = Preset(row.name);
    const int64_t L = row.layers, h = row.hidden;
    EXPECT_EQ(spec.heads, row.heads);
    EXPECT_EQ(spec.seq_len, 1024);
    EXPECT_EQ(spec.TotalParameters(), 12 * L * h * h + 13 * L * h + (50257 + 1024) * h + 2 * h);
    // The paper's labels are rounded from a count it does not give; they are within 1.5%.
    EXPECT_LT(RelativeError(static_cast<double>(spec.TotalParameters()), row.label), 0.015)
        << row.name;
  }
}

TEST(TransformerPresets, Llama3ParametersMatchTheModelCards) {
  // Per layer: Q and O h^2 each, K and V h x 1024 each (8 KV heads of 128), gate, up and down h x
  // f, two RMSNorm weights; untied embedding and head V x h; final RMSNorm h.
  struct Row {
    const char* name;
    int64_t layers, hidden, ffn;
    double published;
  };
  for (const Row& row :
       {Row{"llama3-8b", 32, 4096, 14336, 8.03e9}, Row{"llama3-8b-128k", 32, 4096, 14336, 8.03e9},
        Row{"llama3-70b", 80, 8192, 28672, 70.6e9},
        Row{"llama3-405b", 126, 16384, 53248, 405.9e9}}) {
    const TransformerSpec& spec = Preset(row.name);
    const int64_t L = row.layers, h = row.hidden, f = row.ffn, V = 128256, kv = 1024;
    EXPECT_EQ(spec.kv_heads, 8);
    EXPECT_EQ(spec.LayerParameters(), 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h) << row.name;
    EXPECT_EQ(spec.EmbeddingParameters(), V * h);
    EXPECT_EQ(spec.HeadParameters(), V * h);
    EXPECT_EQ(spec.TotalParameters(), L * spec.LayerParameters() + 2 * V * h + h);
    EXPECT_LT(RelativeError(static_cast<double>(spec.TotalParameters()), row.published), 0.005)
        << row.name;
  }
  EXPECT_EQ(Preset("llama3-8b").seq_len, 8192);
  EXPECT_EQ(Preset("llama3-8b-128k").seq_len, 131072);
}

TEST(TransformerPresets, FindsNamesCaseInsensitively) {
  EXPECT_EQ(FindTransformerPreset("GPT3-175B"), &Preset("gpt3-175b"));
  EXPECT_EQ(FindTransformerPreset("llama3-7b"), nullptr);
  EXPECT_EQ(TransformerPresetNames(),
            "gpt3-1.5b, gpt3-6.2b, gpt3-14.6b, gpt3-28.3b, gpt3-175b, llama3-8b, llama3-8b-128k, "
            "llama3-70b, llama3-405b, mixtral-8x7b, mixtral-8x22b, dbrx, deepseek-v3");
}

TEST(TransformerLayerCosts, GptLayerFlopsAre24bsh2Plus4bs2h) {
  struct Case {
    const char* model;
    double b, s;
  };
  for (const Case& c : {Case{"gpt3-175b", 1, 2048}, Case{"gpt3-1.5b", 6, 1024},
                        Case{"gpt3-6.2b", 3, 1024}, Case{"gpt3-28.3b", 2, 4096}}) {
    const TransformerSpec& spec = Preset(c.model);
    const double h = static_cast<double>(spec.hidden), b = c.b, s = c.s;
    const LayerCosts costs =
        TransformerLayerCosts(spec, Training(static_cast<int64_t>(s), static_cast<int64_t>(b)));
    // Qi et al. Table 1: F sbh(24h + 4s), B sbh(24h + 8s), W 24sbh^2.
    EXPECT_DOUBLE_EQ(costs.forward_flops, 24 * b * s * h * h + 4 * b * s * s * h) << c.model;
    EXPECT_DOUBLE_EQ(costs.backward_input_flops, 24 * b * s * h * h + 8 * b * s * s * h);
    EXPECT_DOUBLE_EQ(costs.backward_weight_flops, 24 * b * s * h * h);
  }
}

TEST(TransformerLayerCosts, SwigluAndGqaFlopsFromTheMatmulShapes) {
  const TransformerSpec& llama = Preset("llama3-8b");
  const double b = 2, s = 8192, h = 4096, f = 14336, kv = 1024;
  const double q = 2 * b * s * h * h, k = 2 * b * s * h * kv, v = 2 * b * s * h * kv;
  const double o = 2 * b * s * h * h;
  const double gate = 2 * b * s * h * f, up = 2 * b * s * h * f, down = 2 * b * s * f * h;
  const double scores = 2 * b * s * s * h, context = 2 * b * s * s * h;
  const double weights = q + k + v + o + gate + up + down;
  const LayerCosts costs = TransformerLayerCosts(llama, Training(8192, 2));
  EXPECT_DOUBLE_EQ(costs.forward_flops, weights + scores + context);
  EXPECT_DOUBLE_EQ(costs.backward_input_flops, weights + 2 * (scores + context));
  EXPECT_DOUBLE_EQ(costs.backward_weight_flops, weights);
}

TEST(TransformerLayerCosts, RecomputeAddsToTheBackwardForInputs) {
  const TransformerSpec& spec = Preset("gpt3-175b");
  const double b = 1, s = 2048, h = 12288;
  TrainingSetup setup = Training(2048, 1);
  setup.recompute = Recompute::kSelective;
  LayerCosts costs = TransformerLayerCosts(spec, setup);
  EXPECT_DOUBLE_EQ(costs.forward_flops, 24 * b * s * h * h + 4 * b * s * s * h);
  EXPECT_DOUBLE_EQ(costs.backward_input_flops, 24 * b * s * h * h + 12 * b * s * s * h);
  EXPECT_DOUBLE_EQ(costs.backward_weight_flops, 24 * b * s * h * h);
  setup.recompute = Recompute::kFull;
  costs = TransformerLayerCosts(spec, setup);
  EXPECT_DOUBLE_EQ(costs.backward_input_flops, 48 * b * s * h * h + 12 * b * s * s * h);
  // Narayanan et al.: with full recompute a layer costs 96bsh^2(1 + s/(6h)) in all.
  EXPECT_DOUBLE_EQ(costs.forward_flops + costs.backward_input_flops + costs.backward_weight_flops,
                   96 * b * s * h * h * (1 + s / (6 * h)));
}

TEST(TransformerLayerCosts, TensorParallelismDividesFlops) {
  const TransformerSpec& spec = Preset("gpt3-175b");
  const double b = 1, s = 2048, h = 12288;
  TrainingSetup setup = Training(2048, 1);
  setup.layout.tp = 8;
  const LayerCosts costs = TransformerLayerCosts(spec, setup);
  EXPECT_DOUBLE_EQ(costs.forward_flops, (24 * b * s * h * h + 4 * b * s * s * h) / 8);
  EXPECT_DOUBLE_EQ(costs.backward_weight_flops, 24 * b * s * h * h / 8);
}

TEST(TransformerLayerCosts, ContextParallelismSplitsTheTokens) {
  // Each of c GPUs has s/c of the queries: 1/c of every matmul and of the attention scores, 1/c of
  // the activations; ring attention passes its K and V blocks (2 x (s/c)b h_kv/t 16-bit values)
  // c - 1 times in F, and K, V and their gradients in the backward.
  const TransformerSpec& llama = Preset("llama3-8b");
  const int64_t s = 8192, b = 1, h = 4096, kv = 1024, t = 2, c = 4;
  TrainingSetup setup = Training(s, b);
  setup.layout.tp = t;
  const LayerCosts whole = TransformerLayerCosts(llama, setup);
  setup.layout.cp = c;
  const LayerCosts split = TransformerLayerCosts(llama, setup);
  EXPECT_DOUBLE_EQ(split.forward_flops, whole.forward_flops / c);
  EXPECT_DOUBLE_EQ(split.backward_weight_flops, whole.backward_weight_flops / c);
  EXPECT_EQ(split.activation_bytes * c, whole.activation_bytes);
  const StageModel stage = BuildStageModels(llama, setup, {32})[0];
  const int64_t block = 2 * (s / c) * b * (kv / t) * 2;
  EXPECT_EQ(stage.cp_forward_bytes, 32 * (c - 1) * block);
  EXPECT_EQ(stage.cp_backward_bytes, 2 * stage.cp_forward_bytes);
  // The rank's boundary tensor stays whole: the platform splits it over the tp x cp GPUs.
  EXPECT_EQ(stage.message_bytes, s * b * h * 2);
}

TEST(TransformerLayerCosts, ContextParallelCommunicationTypes) {
  // llama3-8b, s 8192, b 1, t 2, c 4: sb = 2048 tokens per GPU, q / t = 2048, k / t = v / t = 512.
  const TransformerSpec& llama = Preset("llama3-8b");
  TrainingSetup setup = Training(8192, 1);
  setup.layout.tp = 2;
  setup.layout.cp = 4;
  // allgather: K and V (2 x 2048 x 512 x 2 bytes = 4 MiB) gathered, each GPU sending c - 1 = 3
  // blocks; gathered again and their gradients reduce-scattered in the backward: as p2p's.
  setup.cp_comm_type = CpCommType::kAllGather;
  StageModel stage = BuildStageModels(llama, setup, {32})[0];
  EXPECT_EQ(stage.cp_forward_bytes, 32 * 3 * 4'194'304LL);
  EXPECT_EQ(stage.cp_backward_bytes, 2 * stage.cp_forward_bytes);
  // a2a: Q 2048 x 2048 x 2 bytes = 8 MiB, K and V 2 MiB each, O 8 MiB: 20 MiB, 3/4 of it leaves
  // the GPU (15,728,640 bytes per layer), the same for the gradients; recomputing adds a forward.
  setup.cp_comm_type = CpCommType::kA2a;
  stage = BuildStageModels(llama, setup, {32})[0];
  EXPECT_EQ(stage.cp_forward_bytes, 32 * 15'728'640LL);
  EXPECT_EQ(stage.cp_backward_bytes, stage.cp_forward_bytes);
  setup.recompute = Recompute::kFull;
  stage = BuildStageModels(llama, setup, {32})[0];
  EXPECT_EQ(stage.cp_backward_bytes, 2 * stage.cp_forward_bytes);
  EXPECT_TRUE(CheckTrainingSetup(llama, setup, FlagLocator()).ok());
  // 8 KV heads over t 2: 4 per GPU; c 8 does not divide them.
  setup.layout.cp = 8;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--cp-comm-type: a2a scatters each GPU's heads over --cp 8: 8 must divide the 16 "
            "heads and the 4 KV heads per tensor-parallel GPU of llama3-8b");
  CpCommType type;
  EXPECT_TRUE(ParseCpCommType("--cp-comm-type", "a2a+p2p", &type).ok());
  EXPECT_EQ(type, CpCommType::kA2aP2p);
  EXPECT_EQ(ParseCpCommType("--cp-comm-type", "ring", &type).message(),
            "--cp-comm-type: unknown value 'ring'; valid: p2p, a2a, allgather, a2a+p2p");
}

TEST(TransformerLayerCosts, HierarchicalContextParallelism) {
  // a2a+p2p on llama3-8b, s 8192, b 1, t 2, c 4 (sb = 2048 tokens per GPU) with A 2, B 2: the
  // inner all-to-all moves (A - 1) / A = 1/2 of Q, K, V and O (8 + 2 + 2 + 8 MiB = 20 MiB):
  // 10,485,760 bytes per layer each way; the outer ring passes B - 1 = 1 block of K and V of
  // heads / A for A sb tokens: 2 x 4096 x 256 x 2 bytes = 4 MiB, as large as the GPU's own K, V.
  const TransformerSpec& llama = Preset("llama3-8b");
  TrainingSetup setup = Training(8192, 1);
  setup.layout.tp = 2;
  setup.layout.cp = 4;
  setup.cp_comm_type = CpCommType::kA2aP2p;
  setup.cp_a2a_size = 2;
  EXPECT_TRUE(CheckTrainingSetup(llama, setup, FlagLocator()).ok());
  StageModel stage = BuildStageModels(llama, setup, {32})[0];
  EXPECT_EQ(stage.cp_a2a_forward_bytes, 32 * 10'485'760LL);
  EXPECT_EQ(stage.cp_a2a_backward_bytes, 32 * 10'485'760LL);
  EXPECT_EQ(stage.cp_forward_bytes, 32 * 4'194'304LL);
  EXPECT_EQ(stage.cp_backward_bytes, 2 * 32 * 4'194'304LL);
  // Recomputing the attention (selective's core_attn) runs both forward exchanges again.
  setup.recompute = Recompute::kSelective;
  stage = BuildStageModels(llama, setup, {32})[0];
  EXPECT_EQ(stage.cp_a2a_backward_bytes, 2 * 32 * 10'485'760LL);
  EXPECT_EQ(stage.cp_backward_bytes, 3 * 32 * 4'194'304LL);
  setup.recompute = Recompute::kNone;
  // A 4, B 1: no ring; the all-to-all is a2a's (3/4 of 20 MiB).
  setup.cp_a2a_size = 4;
  stage = BuildStageModels(llama, setup, {32})[0];
  EXPECT_EQ(stage.cp_a2a_forward_bytes, 32 * 15'728'640LL);
  EXPECT_EQ(stage.cp_forward_bytes, 0);
  // Costs: the engines' inner group and bytes per stage.
  setup.cp_a2a_size = 2;
  const std::vector<StageModel> stages = BuildStageModels(llama, setup, {32});
  GpuModel gpu;
  gpu.matmul_flops_per_s = 4e12;
  const StageCosts costs =
      ModelStageCosts(stages, StagePassSeconds(llama, setup, stages, gpu, 0.5), setup);
  EXPECT_EQ(costs.cp_a2a_size, 2);
  EXPECT_FALSE(costs.cp_serial);
  EXPECT_EQ(costs.cp_a2a_forward_bytes, std::vector<int64_t>{32 * 10'485'760LL});
  // Exit-2 checks: A must divide cp and the KV heads per GPU; only with a2a+p2p.
  setup.cp_a2a_size = 3;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--cp-a2a-size: 3 does not divide --cp 4; a2a+p2p needs the inner all-to-all group's "
            "size A, a divisor of cp (the outer ring has cp / A GPUs)");
  setup.cp_a2a_size = 0;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--cp-a2a-size: missing or < 1; a2a+p2p needs the inner all-to-all group's size A, a "
            "divisor of cp (the outer ring has cp / A GPUs)");
  setup.layout.cp = 8;
  setup.cp_a2a_size = 8;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--cp-comm-type: a2a+p2p scatters each GPU's heads over --cp-a2a-size 8: 8 must divide "
            "the 16 heads and the 4 KV heads per tensor-parallel GPU of llama3-8b");
  setup.cp_comm_type = CpCommType::kP2p;
  setup.cp_a2a_size = 2;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--cp-a2a-size: applies with --cp-comm-type a2a+p2p only");
}

TEST(TransformerLayerCosts, GptActivationsFollowKorthikanti) {
  const TransformerSpec& spec = Preset("gpt3-175b");
  const int64_t s = 2048, b = 2, h = 12288, a = 96, t = 8;
  TrainingSetup setup = Training(s, b);
  setup.flash_attention = false;
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_bytes, s * b * (34 * h + 5 * a * s));
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_w_bytes, 32 * s * b * h);
  setup.flash_attention = true;
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_bytes, 34 * s * b * h);
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_w_bytes, 32 * s * b * h);

  // Tensor parallelism without sequence parallelism: sbh(10 + 24/t + 5as/(ht)).
  setup.layout.tp = t;
  setup.flash_attention = false;
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_bytes,
            10 * s * b * h + 24 * s * b * h / t + 5 * a * s * s * b / t);
  // M_W: the replicated QKV and MLP inputs and projection/MLP output gradients, 8sbh, + 24sbh/t.
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_w_bytes,
            8 * s * b * h + 24 * s * b * h / t);
  setup.flash_attention = true;
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_bytes,
            10 * s * b * h + 24 * s * b * h / t);

  // With sequence parallelism everything is divided by t.
  setup.sequence_parallel = true;
  setup.flash_attention = false;
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_bytes, s * b * (34 * h + 5 * a * s) / t);
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_w_bytes, 32 * s * b * h / t);
  setup.flash_attention = true;
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_bytes, 34 * s * b * h / t);
}

TEST(TransformerLayerCosts, RecomputeShrinksActivations) {
  const TransformerSpec& spec = Preset("gpt3-175b");
  const int64_t s = 2048, b = 1, h = 12288, t = 4;
  TrainingSetup setup = Training(s, b);
  setup.flash_attention = false;
  setup.recompute = Recompute::kSelective;  // Korthikanti Table 2: the 5as/h term goes.
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_bytes, 34 * s * b * h);
  setup.layout.tp = t;
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_bytes,
            10 * s * b * h + 24 * s * b * h / t);
  setup.sequence_parallel = true;
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_bytes, 34 * s * b * h / t);
  setup.recompute = Recompute::kFull;  // the layer input, sharded along the sequence
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_bytes, 2 * s * b * h / t);
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_w_bytes, 2 * s * b * h / t);
  setup.sequence_parallel = false;
  setup.layout.tp = 1;
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_bytes, 2 * s * b * h);
  EXPECT_EQ(TransformerLayerCosts(spec, setup).activation_w_bytes, 2 * s * b * h);
}

TEST(TransformerLayerCosts, LlamaActivationsFromTheSameBreakdown) {
  // No dropout: norm inputs and outputs 8sbh; Q 2sbh, K and V 2sb*1024 each, attention output
  // 2sbh, gate, up and their product 2sbf each; softmax output 2as^2b without flash attention.
  const TransformerSpec& llama = Preset("llama3-8b");
  const int64_t s = 8192, b = 1, h = 4096, kv = 1024, f = 14336, a = 32;
  TrainingSetup setup = Training(s, b);
  const int64_t flash = 8 * s * b * h + s * b * (2 * h + 4 * kv + 2 * h + 6 * f);
  EXPECT_EQ(TransformerLayerCosts(llama, setup).activation_bytes, flash);
  // W: QKV output gradient 2sb(h + 2kv), the projection's input 2sbh, gate and up output
  // gradients 4sbf, down's input 2sbf, plus the replicated 8sbh.
  EXPECT_EQ(TransformerLayerCosts(llama, setup).activation_w_bytes,
            8 * s * b * h + s * b * (2 * (h + 2 * kv) + 2 * h + 4 * f + 2 * f));
  setup.flash_attention = false;
  EXPECT_EQ(TransformerLayerCosts(llama, setup).activation_bytes, flash + 2 * a * s * s * b);
}

TEST(TransformerStageModels, EmbeddingFirstHeadLast) {
  const TransformerSpec& spec = Preset("gpt3-175b");
  const int64_t s = 2048, b = 1, h = 12288, V = 50257;
  const TrainingSetup setup = Training(s, b);
  const LayerCosts layer = TransformerLayerCosts(spec, setup);
  const std::vector<StageModel> stages = BuildStageModels(spec, setup, {24, 24, 24, 24});
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_TRUE(stages[0].embedding);
  EXPECT_FALSE(stages[0].lm_head);
  EXPECT_TRUE(stages[3].lm_head);
  EXPECT_FALSE(stages[1].embedding || stages[1].lm_head);

  const int64_t layer_params = 12 * h * h + 13 * h;
  EXPECT_EQ(stages[0].parameters, 24 * layer_params + (V + s) * h);
  EXPECT_EQ(stages[1].parameters, 24 * layer_params);
  // Tied: the last stage keeps its own copy of the word embedding for the head (Megatron).
  EXPECT_EQ(stages[3].parameters, 24 * layer_params + 2 * h + V * h);

  // The lookup has no FLOPs; the head is 2bshV forward, and again for inputs and for weights.
  const double head = 2.0 * b * s * h * V;
  EXPECT_DOUBLE_EQ(stages[0].forward_flops, 24 * layer.forward_flops);
  EXPECT_DOUBLE_EQ(stages[3].forward_flops, 24 * layer.forward_flops + head);
  EXPECT_DOUBLE_EQ(stages[3].backward_input_flops, 24 * layer.backward_input_flops + head);
  EXPECT_DOUBLE_EQ(stages[3].backward_weight_flops, 24 * layer.backward_weight_flops + head);

  // Embedding dropout mask sbh; final norm and head inputs 4sbh and fp32 logits 4sbV
  // (Korthikanti Sec. 4.3); W keeps the head's input 2sbh and the logits' gradient 2sbV.
  EXPECT_EQ(stages[0].activation_bytes, 24 * 34 * s * b * h + s * b * h);
  EXPECT_EQ(stages[1].activation_bytes, 24 * 34 * s * b * h);
  EXPECT_EQ(stages[3].activation_bytes, 24 * 34 * s * b * h + 4 * s * b * h + 4 * s * b * V);
  EXPECT_EQ(stages[0].activation_w_bytes, 24 * 32 * s * b * h);
  EXPECT_EQ(stages[3].activation_w_bytes, 24 * 32 * s * b * h + 2 * s * b * h + 2 * s * b * V);
  for (const StageModel& stage : stages) EXPECT_EQ(stage.message_bytes, s * b * h * 2);
}

TEST(TransformerStageModels, OneStageHoldsTheWholeModelOnce) {
  const TransformerSpec& spec = Preset("gpt3-1.5b");
  const std::vector<StageModel> stages = BuildStageModels(spec, Training(1024, 1), {22});
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_TRUE(stages[0].embedding && stages[0].lm_head);
  EXPECT_EQ(stages[0].parameters, spec.TotalParameters());
}

TEST(TransformerStageModels, UntiedHeadAndTensorParallelShares) {
  const TransformerSpec& llama = Preset("llama3-8b");
  const int64_t h = 4096, V = 128256, t = 2, s = 4096, b = 1;
  TrainingSetup setup = Training(s, b);
  setup.layout.tp = t;
  const std::vector<StageModel> stages = BuildStageModels(llama, setup, {16, 16});
  const int64_t layer = 2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h;
  EXPECT_EQ(stages[0].parameters, (16 * layer + V * h) / t);
  EXPECT_EQ(stages[1].parameters, (16 * layer + V * h + h) / t);
  // Llama has no embedding dropout; the head's vocabulary is split over t.
  EXPECT_EQ(stages[0].activation_bytes, 16 * TransformerLayerCosts(llama, setup).activation_bytes);
  EXPECT_EQ(stages[1].activation_bytes, 16 * TransformerLayerCosts(llama, setup).activation_bytes +
                                            4 * s * b * h + 4 * s * b * V / t);
  EXPECT_DOUBLE_EQ(stages[1].forward_flops, 16 * TransformerLayerCosts(llama, setup).forward_flops +
                                                2.0 * b * s * h * V / t);
}

// Megatron-LM's distributed-optimizer guide (docs/source/api-guide/dist_optimizer.md), bytes per
// parameter: 16-bit parameters with fp32 gradients 18, or 6 + 12/d with the distributed optimizer;
// with 16-bit gradients 20, or 4 + 16/d.
TEST(TransformerStageModels, StaticMemoryFollowsMegatronsBytesPerParameter) {
  const TransformerSpec& llama = Preset("llama3-8b");
  TrainingSetup setup = Training(8192, 1);
  const int64_t p = llama.TotalParameters();
  std::vector<StageModel> stages = BuildStageModels(llama, setup, {32});
  EXPECT_EQ(stages[0].static_bytes, 18 * p);
  EXPECT_EQ(stages[0].gradient_bytes, 4 * p);  // the fp32 gradients the all-reduce moves
  setup.layout.dp = 8;
  stages = BuildStageModels(llama, setup, {32});
  EXPECT_EQ(stages[0].static_bytes, 18 * p);  // dp alone changes nothing
  setup.zero_stage = 1;
  stages = BuildStageModels(llama, setup, {32});
  EXPECT_EQ(stages[0].static_bytes, 6 * p + 12 * p / 8);
  setup.layout.tp = 2;
  stages = BuildStageModels(llama, setup, {32});
  EXPECT_EQ(stages[0].parameters, p / 2);
  EXPECT_EQ(stages[0].static_bytes, 6 * (p / 2) + 12 * (p / 2) / 8);
  setup.layout.tp = 1;
  setup.fp32_grads = false;
  stages = BuildStageModels(llama, setup, {32});
  EXPECT_EQ(stages[0].static_bytes, 4 * p + 16 * p / 8);
  EXPECT_EQ(stages[0].gradient_bytes, 2 * p);
  setup.zero_stage = 0;
  stages = BuildStageModels(llama, setup, {32});
  EXPECT_EQ(stages[0].static_bytes, 20 * p);
  setup.replicated_bytes_per_param = 16;  // values given: 16 on every GPU, nothing sharded
  setup.sharded_bytes_per_param = 0;
  stages = BuildStageModels(llama, setup, {32});
  EXPECT_EQ(stages[0].static_bytes, 16 * p);
}

// The static bytes by part, from the same guide: 2 bytes of 16-bit weights and 4 of fp32
// gradients on every GPU, 12 of fp32 main parameters and Adam's moments sharded with ZeRO-1 (here
// over dp 4: 3 per parameter); with 16-bit gradients 2 + 2 on every GPU, 16 sharded (the fp32 main
// gradient is the optimizer's); values given: R - 4 of weights, S of optimizer state.
TEST(TransformerStageModels, StaticMemorySplitsIntoWeightsGradientsAndOptimizerState) {
  const TransformerSpec& llama = Preset("llama3-8b");
  TrainingSetup setup = Training(8192, 1);
  const int64_t p = llama.TotalParameters();
  setup.layout.dp = 4;
  setup.zero_stage = 1;
  std::vector<StageModel> stages = BuildStageModels(llama, setup, {32});
  EXPECT_EQ(stages[0].weight_bytes, 2 * p);
  EXPECT_EQ(stages[0].gradient_bytes, 4 * p);
  EXPECT_EQ(stages[0].optimizer_state_bytes, (12 * p + 3) / 4);  // rounded up
  EXPECT_EQ(stages[0].static_bytes, 2 * p + 4 * p + (12 * p + 3) / 4);
  setup.fp32_grads = false;
  stages = BuildStageModels(llama, setup, {32});
  EXPECT_EQ(stages[0].weight_bytes, 2 * p);
  EXPECT_EQ(stages[0].gradient_bytes, 2 * p);
  EXPECT_EQ(stages[0].optimizer_state_bytes, 4 * p);
  setup.fp32_grads = true;
  setup.zero_stage = 0;
  setup.replicated_bytes_per_param = 16;
  setup.sharded_bytes_per_param = 2;
  stages = BuildStageModels(llama, setup, {32});
  EXPECT_EQ(stages[0].weight_bytes, 12 * p);
  EXPECT_EQ(stages[0].gradient_bytes, 4 * p);
  EXPECT_EQ(stages[0].optimizer_state_bytes, 2 * p);
  // The replicated bytes hold the gradients: fewer than theirs is refused.
  setup.replicated_bytes_per_param = 3;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--bytes-per-param: 3 bytes per parameter on every GPU cannot hold the 4-byte fp32 "
            "gradients; give R of at least 4 (R = weights + gradients)");
  setup.fp32_grads = false;
  EXPECT_TRUE(CheckTrainingSetup(llama, setup, FlagLocator()).ok());
}

TEST(TransformerStageModels, MessageBytesAreTheRanksWholeBoundaryTensor) {
  const TransformerSpec& spec = Preset("llama3-70b");
  const int64_t s = 8192, b = 2, h = 8192;
  TrainingSetup setup = Training(s, b);
  EXPECT_EQ(BuildStageModels(spec, setup, {80})[0].message_bytes, s * b * h * 2);
  setup.dtype = Dtype::kFp8;
  EXPECT_EQ(BuildStageModels(spec, setup, {80})[0].message_bytes, s * b * h);
  setup.dtype = Dtype::kFp16;
  setup.layout.tp = 8;
  setup.sequence_parallel = true;
  // The rank's whole tensor: the platform splits it over the 8 GPUs of the group.
  EXPECT_EQ(BuildStageModels(spec, setup, {80})[0].message_bytes, s * b * h * 2);
}

TEST(TransformerStageCosts, EfficiencyDividesFlopsByThePeakTimesIt) {
  StageModel a;
  a.forward_flops = 4e12;
  a.backward_input_flops = 6e12;
  a.backward_weight_flops = 2e12;
  a.activation_bytes = 100;
  a.activation_w_bytes = 40;
  a.message_bytes = 7;
  a.static_bytes = 1000;
  StageModel b = a;
  b.forward_flops = 8e12;
  GpuModel gpu;
  gpu.matmul_flops_per_s = 4e12;
  const StageCosts costs = ModelStageCosts(
      {a, b}, StagePassSeconds(Preset("gpt3-1.5b"), Training(1024, 1), {a, b}, gpu, 0.5),
      Training(1024, 1));
  EXPECT_EQ(costs.forward_s, (std::vector<double>{2, 4}));
  EXPECT_EQ(costs.backward_input_s, (std::vector<double>{3, 3}));
  EXPECT_EQ(costs.backward_weight_s, (std::vector<double>{1, 1}));
  EXPECT_EQ(costs.backward_s, (std::vector<double>{4, 4}));
  EXPECT_TRUE(costs.overlap_s.empty());
  EXPECT_EQ(costs.activation_bytes, (std::vector<int64_t>{100, 100}));
  EXPECT_EQ(costs.activation_w_bytes, (std::vector<int64_t>{40, 40}));
  EXPECT_EQ(costs.message_bytes, (std::vector<int64_t>{7, 7}));
  EXPECT_EQ(costs.static_bytes, (std::vector<int64_t>{1000, 1000}));
  EXPECT_TRUE(costs.moe.empty());
}

TEST(SplitLayers, EvenSplitGivesTheFirstStagesTheRemainder) {
  std::vector<int32_t> layers;
  ASSERT_TRUE(SplitLayers(Preset("llama3-8b"), 4, {}, FlagLocator(), &layers).ok());
  EXPECT_EQ(layers, (std::vector<int32_t>{8, 8, 8, 8}));
  ASSERT_TRUE(SplitLayers(Preset("gpt3-1.5b"), 8, {}, FlagLocator(), &layers).ok());
  EXPECT_EQ(layers, (std::vector<int32_t>{3, 3, 3, 3, 3, 3, 2, 2}));
}

TEST(SplitLayers, EmbeddingAndLossTakeALayerSlot) {
  // The zero-bubble paper's 22 layers on 8 stages: first and last stage one layer fewer.
  const TransformerSpec& spec = Preset("gpt3-1.5b");
  std::vector<int32_t> layers;
  LayerSplit split;
  split.embedding_as_layer = true;
  split.loss_as_layer = true;
  ASSERT_TRUE(SplitLayers(spec, 8, split, FlagLocator(), &layers).ok());
  EXPECT_EQ(layers, (std::vector<int32_t>{2, 3, 3, 3, 3, 3, 3, 2}));
  split.loss_as_layer = false;  // 23 slots: 3 x 7 + 2, then the embedding's slot off stage 0
  ASSERT_TRUE(SplitLayers(spec, 8, split, FlagLocator(), &layers).ok());
  EXPECT_EQ(layers, (std::vector<int32_t>{2, 3, 3, 3, 3, 3, 3, 2}));
  split.embedding_as_layer = false;
  split.loss_as_layer = true;
  ASSERT_TRUE(SplitLayers(spec, 8, split, FlagLocator(), &layers).ok());
  EXPECT_EQ(layers, (std::vector<int32_t>{3, 3, 3, 3, 3, 3, 3, 1}));
}

TEST(SplitLayers, ExplicitListIsCheckedVerbatim) {
  const TransformerSpec& spec = Preset("llama3-8b");
  std::vector<int32_t> layers;
  LayerSplit split;
  split.layers_per_stage = {7, 9, 9, 7};
  ASSERT_TRUE(SplitLayers(spec, 4, split, FlagLocator(), &layers).ok());
  EXPECT_EQ(layers, (std::vector<int32_t>{7, 9, 9, 7}));
  split.layers_per_stage = {10, 11, 11};
  EXPECT_EQ(SplitLayers(spec, 4, split, FlagLocator(), &layers).message(),
            "--layers-per-stage: 3 entries for 4 stages; give one per stage");
  split.layers_per_stage = {8, 8, 7, 7};
  EXPECT_EQ(SplitLayers(spec, 4, split, FlagLocator(), &layers).message(),
            "--layers-per-stage: the entries sum to 30; the model has 32 layers");
  split.layers_per_stage = {17, 8, -1, 8};
  EXPECT_EQ(SplitLayers(spec, 4, split, FlagLocator(), &layers).message(),
            "--layers-per-stage: stage 2 has -1 layers; must be at least 0");
  split.layers_per_stage = {8, 8, 8, 8};
  split.embedding_as_layer = true;
  EXPECT_EQ(SplitLayers(spec, 4, split, FlagLocator(), &layers).message(),
            "--layers-per-stage: an explicit split cannot be combined with counting the "
            "embedding or the loss as a layer");
}

TEST(SplitLayers, RejectsMoreStagesThanLayers) {
  std::vector<int32_t> layers;
  EXPECT_EQ(SplitLayers(Tiny(), 8, {}, FlagLocator(), &layers).message(),
            "--pp: 8 stages for the 6 layers of tiny; each stage needs at least one");
  LayerSplit split;
  split.embedding_as_layer = true;
  split.loss_as_layer = true;
  EXPECT_EQ(SplitLayers(Tiny(), 9, split, FlagLocator(), &layers).message(),
            "--pp: 9 stages for the 6 layers of tiny plus the embedding and the loss; each stage "
            "needs at least one");
  // 8 slots on 8 stages: the first and last stage hold only the embedding and the loss.
  ASSERT_TRUE(SplitLayers(Tiny(), 8, split, FlagLocator(), &layers).ok());
  EXPECT_EQ(layers, (std::vector<int32_t>{0, 1, 1, 1, 1, 1, 1, 0}));
}

TEST(TransformerSetup, MessagesNameTheFlag) {
  const TransformerSpec& llama = Preset("llama3-8b");
  TrainingSetup setup = Training(8192, 1);
  EXPECT_TRUE(CheckTrainingSetup(llama, setup, FlagLocator()).ok());
  setup.layout.tp = 3;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--tp: 3 does not divide the 32 heads of llama3-8b");
  setup.layout.tp = 16;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--tp: 16 does not divide the 8 KV heads of llama3-8b");
  setup.layout.tp = 0;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--tp: must be at least 1; got 0");
  setup.layout.tp = 8;
  EXPECT_TRUE(CheckTrainingSetup(llama, setup, FlagLocator()).ok());
  setup.seq_len = 0;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--seq-len: must be at least 1; got 0");
  setup.seq_len = 8192;
  setup.microbatch_size = -2;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--microbatch-size: must be at least 1; got -2");
  setup.microbatch_size = 1;
  setup.layout.dp = 0;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--dp: must be at least 1; got 0");
  setup.layout.dp = 4;
  setup.zero_stage = 4;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--zero: 4 is not a ZeRO stage; valid: 0, 1, 2, 3");
  setup.zero_stage = 0;
  setup.layout.cp = 3;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--cp: 3 GPUs hold 2 x 3 chunks of each sequence; 6 does not divide the sequence "
            "length 8192");
  setup.layout.cp = 2;
  setup.flash_attention = false;
  EXPECT_EQ(CheckTrainingSetup(llama, setup, FlagLocator()).message(),
            "--cp: context parallelism runs ring attention on flash attention (Transformer "
            "Engine); drop --flash-attention off");

  TransformerSpec odd = Tiny();
  odd.ffn_hidden = 1000;
  TrainingSetup tp16 = Training(512, 1);
  tp16.layout.tp = 16;
  EXPECT_EQ(CheckTrainingSetup(odd, tp16, FlagLocator()).message(),
            "--tp: 16 does not divide the 1000 FFN channels of tiny");
}

TEST(TransformerDtype, NamesAndErrors) {
  Dtype dtype = Dtype::kBf16;
  ASSERT_TRUE(ParseDtype("--dtype", "FP8", &dtype).ok());
  EXPECT_EQ(dtype, Dtype::kFp8);
  EXPECT_EQ(DtypeName(dtype), "fp8");
  EXPECT_EQ(DtypeBytes(Dtype::kFp8), 1);
  EXPECT_EQ(DtypeBytes(Dtype::kBf16), 2);
  EXPECT_EQ(DtypeBytes(Dtype::kFp16), 2);
  EXPECT_EQ(ParseDtype("--dtype", "fp32", &dtype).message(),
            "--dtype: unknown value 'fp32'; valid: bf16, fp16, fp8, mxfp8");
  Recompute recompute = Recompute::kNone;
  ASSERT_TRUE(ParseRecompute("--recompute", "selective", &recompute).ok());
  EXPECT_EQ(recompute, Recompute::kSelective);
  EXPECT_EQ(RecomputeName(Recompute::kFull), "full");
  EXPECT_EQ(ParseRecompute("--recompute", "some", &recompute).message(),
            "--recompute: unknown value 'some'; valid: none, selective, full");
}

TEST(TransformerFromProto, RefusesMissingMlpNormAndTiedEmbeddings) {
  // No default is assumed for them: a Llama-70B-shaped file without mlp once counted 51.8B
  // parameters (GELU) instead of 70.55B. Every missing one is named, in the proto's order of
  // checks, where the file is (an absent field has no line).
  proto::TransformerModel model;
  model.set_layers(80);
  model.set_hidden(8192);
  model.set_ffn_hidden(28672);
  model.set_heads(64);
  model.set_kv_heads(8);
  model.set_vocab(128256);
  model.set_seq_len(8192);
  ConfigLocations locations;
  locations.set_source("m.yaml");
  TransformerSpec spec;
  EXPECT_EQ(TransformerFromProto(model, locations, &spec).message(),
            "m.yaml: tied_embeddings: missing; give true (the LM head is the input embedding, "
            "as GPT and Megatron's default) or false (a separate head, as Llama)\n"
            "m.yaml: mlp: missing; give GELU (GPT's layer: biases, learned positions, dropout) "
            "or SWIGLU (Llama's: gate, up and down, no biases, rotary positions)\n"
            "m.yaml: norm: missing; give LAYERNORM (a weight and a bias, GPT) or RMSNORM (a "
            "weight, Llama)");
  // false is an answer: presence, not truth, is required.
  model.set_tied_embeddings(false);
  model.set_mlp(proto::TransformerModel::SWIGLU);
  locations.Set("mlp", 9, 6);
  model.set_norm(static_cast<proto::TransformerModel::Norm>(7));
  EXPECT_EQ(TransformerFromProto(model, locations, &spec).message(),
            "m.yaml: norm: unknown value 7; valid: LAYERNORM, RMSNORM");
  model.set_norm(proto::TransformerModel::RMSNORM);
  ASSERT_TRUE(TransformerFromProto(model, locations, &spec).ok());
  // Llama 3 70B: 80(8192(8192 + 2 x 1024) + 8192^2 + 3 x 8192 x 28672 + 2 x 8192) + 2 x 128256
  // x 8192 + 8192 = 70,553,706,496 (by hand: 80 x 856,178,688 + 2,101,346,304 + 8,192).
  EXPECT_EQ(spec.TotalParameters(), 70553706496);
}

TEST(TransformerFromProto, NormAndHeadDimChangeTheCounts) {
  proto::TransformerModel model;
  model.set_layers(2);
  model.set_hidden(1024);
  model.set_heads(16);
  model.set_vocab(1000);
  model.set_seq_len(128);
  model.set_mlp(proto::TransformerModel::SWIGLU);
  model.set_norm(proto::TransformerModel::LAYERNORM);
  model.set_tied_embeddings(true);
  ConfigLocations locations;
  TransformerSpec spec;
  ASSERT_TRUE(TransformerFromProto(model, locations, &spec).ok());
  // LayerNorm: weight and bias, 2h per norm: two per layer and the final one.
  const int64_t h = 1024, f = 4096;
  EXPECT_EQ(spec.TotalParameters(), 2 * (4 * h * h + 3 * h * f + 4 * h) + 1000 * h + 2 * h);
  // head_dim 128: a d = 2048 wide queries and context, 16 KV heads of 128.
  model.set_head_dim(128);
  model.set_norm(proto::TransformerModel::RMSNORM);
  model.set_qkv_bias(true);
  model.set_qk_norm(true);
  ASSERT_TRUE(TransformerFromProto(model, locations, &spec).ok());
  const int64_t attention = h * 2048 * 3 + 2048 * h + 3 * 2048 + 2 * 128;
  EXPECT_EQ(spec.LayerParameters(), attention + 3 * h * f + 2 * h);
  EXPECT_EQ(AttentionWidthsOf(spec).query, 2048);
  EXPECT_EQ(AttentionWidthsOf(spec).key, 2048);
  // FLOPs per microbatch of b = 1, s = 128: QKV 2bsh(3 x 2048), output 2bs 2048 h, MLP 6bshf,
  // core 4bs^2 x 2048.
  TrainingSetup setup;
  setup.seq_len = 128;
  const double s = 128;
  EXPECT_DOUBLE_EQ(TransformerLayerCosts(spec, setup).forward_flops,
                   2 * s * h * 3 * 2048 + 2 * s * 2048 * h + 6 * s * h * f + 4 * s * s * 2048);
  model.set_mlp(proto::TransformerModel::GELU);
  EXPECT_EQ(TransformerFromProto(model, locations, &spec).message(),
            ": qkv_bias: GELU layers have biases on every linear layer already; drop it or give "
            "mlp SWIGLU");
}

TEST(TransformerFromProto, AppliesDefaults) {
  proto::TransformerModel model;
  model.set_layers(4);
  model.set_hidden(1024);
  model.set_heads(16);
  model.set_vocab(32000);
  model.set_seq_len(2048);
  model.set_mlp(proto::TransformerModel::GELU);
  model.set_norm(proto::TransformerModel::LAYERNORM);
  model.set_tied_embeddings(false);
  ConfigLocations locations;
  locations.set_source("m.yaml");
  TransformerSpec spec;
  ASSERT_TRUE(TransformerFromProto(model, locations, &spec).ok());
  EXPECT_EQ(spec.name, "m.yaml");
  EXPECT_EQ(spec.ffn_hidden, 4096);
  EXPECT_EQ(spec.kv_heads, 16);
  EXPECT_EQ(spec.head_dim, 64);
  EXPECT_FALSE(spec.swiglu);
  EXPECT_FALSE(spec.rmsnorm);
  EXPECT_FALSE(spec.tied_embeddings);
  EXPECT_EQ(spec.seq_len, 2048);

  model.set_name("mine");
  model.set_mlp(proto::TransformerModel::SWIGLU);
  model.set_kv_heads(4);
  model.set_ffn_hidden(2816);
  model.set_tied_embeddings(true);
  ASSERT_TRUE(TransformerFromProto(model, locations, &spec).ok());
  EXPECT_EQ(spec.name, "mine");
  EXPECT_TRUE(spec.swiglu);
  EXPECT_EQ(spec.kv_heads, 4);
  EXPECT_EQ(spec.ffn_hidden, 2816);
  EXPECT_TRUE(spec.tied_embeddings);
}

TEST(TransformerFromProto, ReportsEveryErrorWithItsLocation) {
  proto::TransformerModel model;
  model.set_layers(32);
  model.set_hidden(4096);
  model.set_heads(48);
  model.set_kv_heads(5);
  model.set_vocab(32000);
  model.set_seq_len(4096);
  model.set_mlp(proto::TransformerModel::GELU);
  model.set_norm(proto::TransformerModel::LAYERNORM);
  model.set_tied_embeddings(true);
  ConfigLocations locations;
  locations.set_source("m.yaml");
  locations.Set("layers", 1, 9);
  locations.Set("hidden", 2, 9);  // no position for heads: the message names the file only
  locations.Set("kv_heads", 5, 11);
  TransformerSpec spec;
  EXPECT_EQ(TransformerFromProto(model, locations, &spec).message(),
            "m.yaml: heads: 48 does not divide hidden 4096\n"
            "m.yaml:5:11: kv_heads: 5 does not divide heads 48");
  locations.Set("heads", 3, 9);
  model.set_kv_heads(0);
  EXPECT_EQ(TransformerFromProto(model, locations, &spec).message(),
            "m.yaml:3:9: heads: 48 does not divide hidden 4096");
  model.set_heads(32);
  model.set_layers(0);
  model.set_vocab(-1);
  EXPECT_EQ(TransformerFromProto(model, locations, &spec).message(),
            "m.yaml:1:9: layers: must be at least 1; got 0\n"
            "m.yaml: vocab: must be at least 1; got -1");
}

}  // namespace
}  // namespace ppsim
