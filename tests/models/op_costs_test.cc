#include "models/op_costs.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

// Expected values are closed forms written out by hand: the GEMM FLOPs of Narayanan et al. 2021
// (24bsh^2 per GPT layer), flash attention's causal FLOPs, the roofline with tile and wave
// quantization of NVIDIA's Matrix Multiplication Background guide (Sec. 3), and the element-wise
// byte counts listed in models/op_costs.h.

namespace ppsim {
namespace {

TransformerSpec Gpt(int64_t h, int32_t heads) {
  TransformerSpec spec;
  spec.name = "gpt";
  spec.layers = 4;
  spec.hidden = h;
  spec.ffn_hidden = 4 * h;
  spec.heads = heads;
  spec.kv_heads = heads;
  spec.vocab = 1000;
  spec.seq_len = 512;
  return spec;
}

TrainingSetup Training(int64_t s, int64_t b, int32_t tp = 1) {
  TrainingSetup setup;
  setup.seq_len = s;
  setup.microbatch_size = b;
  setup.layout.tp = tp;
  return setup;
}

struct Sums {
  std::map<OpPass, double> matmul_flops, attention_flops, memory_bytes;
};

Sums SumOps(const std::vector<ModelOp>& ops) {
  Sums sums;
  for (const ModelOp& op : ops) {
    switch (op.kind) {
      case KernelKind::kMatmul:
        sums.matmul_flops[op.pass] += op.flops;
        break;
      case KernelKind::kAttention:
        sums.attention_flops[op.pass] += op.flops;
        break;
      case KernelKind::kMemory:
        sums.memory_bytes[op.pass] += op.bytes;
        break;
    }
  }
  return sums;
}

TEST(OpCosts, GptLayerGemmsAre24bsh2PerPass) {
  const double b = 2, s = 512, h = 1024, a = 16;
  const Sums sums = SumOps(LayerOps(Gpt(1024, 16), Training(512, 2)));
  for (OpPass pass : {OpPass::kForward, OpPass::kBackwardInput, OpPass::kBackwardWeight}) {
    EXPECT_DOUBLE_EQ(sums.matmul_flops.at(pass), 24 * b * s * h * h) << OpPassName(pass);
  }
  // Flash attention, causal: s(s+1)/2 of the s^2 query-key pairs, 4d FLOPs each (QK^T and PV),
  // per head; the backward has five s x s x d GEMMs where the forward has two.
  const double forward = 4 * b * a * (h / a) * s * (s + 1) / 2;
  EXPECT_DOUBLE_EQ(sums.attention_flops.at(OpPass::kForward), forward);
  EXPECT_DOUBLE_EQ(sums.attention_flops.at(OpPass::kBackwardInput), 2.5 * forward);
  EXPECT_EQ(sums.attention_flops.count(OpPass::kBackwardWeight), 0u);
}

TEST(OpCosts, GptLayerElementWiseBytes) {
  const double T = 2 * 512, h = 1024, f = 4096;
  const Sums sums = SumOps(LayerOps(Gpt(1024, 16), Training(512, 2)));
  // F: norms 4 + 4, bias-dropout-adds 7 + 7 per T x h; GeLU 4 per T x f.
  EXPECT_DOUBLE_EQ(sums.memory_bytes.at(OpPass::kForward), 22 * T * h + 4 * T * f);
  // I: norms 6 + 6, residual gradient adds 6 + 6 and dropout backwards 5 + 5; GeLU 6 per T x f.
  EXPECT_DOUBLE_EQ(sums.memory_bytes.at(OpPass::kBackwardInput), 34 * T * h + 6 * T * f);
  // W: the bias gradients read QKV's 3h, the MLP's f, and the two h-wide outputs' gradients.
  EXPECT_DOUBLE_EQ(sums.memory_bytes.at(OpPass::kBackwardWeight), 2 * T * (3 * h + f + 2 * h));
}

TEST(OpCosts, RecomputeRepeatsTheForwardInTheBackwardForInputs) {
  const TransformerSpec spec = Gpt(1024, 16);
  TrainingSetup setup = Training(512, 2);
  const Sums none = SumOps(LayerOps(spec, setup));
  setup.recompute = Recompute::kFull;
  const Sums full = SumOps(LayerOps(spec, setup));
  EXPECT_DOUBLE_EQ(
      full.matmul_flops.at(OpPass::kBackwardInput),
      none.matmul_flops.at(OpPass::kBackwardInput) + none.matmul_flops.at(OpPass::kForward));
  EXPECT_DOUBLE_EQ(
      full.memory_bytes.at(OpPass::kBackwardInput),
      none.memory_bytes.at(OpPass::kBackwardInput) + none.memory_bytes.at(OpPass::kForward));
  EXPECT_DOUBLE_EQ(full.attention_flops.at(OpPass::kBackwardInput),
                   3.5 * none.attention_flops.at(OpPass::kForward));
  setup.recompute = Recompute::kSelective;
  const Sums selective = SumOps(LayerOps(spec, setup));
  EXPECT_DOUBLE_EQ(selective.matmul_flops.at(OpPass::kBackwardInput),
                   none.matmul_flops.at(OpPass::kBackwardInput));
  EXPECT_DOUBLE_EQ(selective.attention_flops.at(OpPass::kBackwardInput),
                   3.5 * none.attention_flops.at(OpPass::kForward));
}

TEST(OpCosts, UnfusedAttentionComputesEveryScore) {
  const double b = 2, s = 512, h = 1024, a = 16;
  TrainingSetup setup = Training(512, 2);
  setup.flash_attention = false;
  const Sums sums = SumOps(LayerOps(Gpt(1024, 16), setup));
  // QK^T and the context, 2bs^2h each, all s^2 scores; the backward has twice as many.
  EXPECT_DOUBLE_EQ(sums.matmul_flops.at(OpPass::kForward), 24 * b * s * h * h + 4 * b * s * s * h);
  EXPECT_DOUBLE_EQ(sums.matmul_flops.at(OpPass::kBackwardInput),
                   24 * b * s * h * h + 8 * b * s * s * h);
  // Softmax 4 and dropout 5 bytes per score on top of the flash layer's element-wise bytes.
  const double T = b * s, f = 4 * h, scores = b * a * s * s;
  EXPECT_DOUBLE_EQ(sums.memory_bytes.at(OpPass::kForward), 22 * T * h + 4 * T * f + 9 * scores);
}

// Transformer Engine's FP8 recipe (models/op_costs.h): cast-transposes of 4 bytes per element for
// the GEMM inputs no fused kernel writes in FP8 (the projection's and the MLP down GEMM's in a GPT
// layer) and for every linear GEMM's output gradient in the backward; W is unchanged.
TEST(OpCosts, Fp8AddsTransformerEngineCastsOfInputsAndOutputGradients) {
  const double T = 2 * 512, h = 1024, f = 4096;
  TrainingSetup setup = Training(512, 2);
  const Sums bf16 = SumOps(LayerOps(Gpt(1024, 16), setup));
  setup.dtype = Dtype::kFp8;
  const Sums fp8 = SumOps(LayerOps(Gpt(1024, 16), setup));
  EXPECT_DOUBLE_EQ(fp8.memory_bytes.at(OpPass::kForward),
                   bf16.memory_bytes.at(OpPass::kForward) + 4 * T * h + 4 * T * f);
  // Output gradients: mlp down's h, mlp up's f, proj's h, qkv's 3h.
  EXPECT_DOUBLE_EQ(fp8.memory_bytes.at(OpPass::kBackwardInput),
                   bf16.memory_bytes.at(OpPass::kBackwardInput) + 4 * T * (h + f + h + 3 * h));
  EXPECT_DOUBLE_EQ(fp8.memory_bytes.at(OpPass::kBackwardWeight),
                   bf16.memory_bytes.at(OpPass::kBackwardWeight));
  for (OpPass pass : {OpPass::kForward, OpPass::kBackwardInput, OpPass::kBackwardWeight}) {
    EXPECT_DOUBLE_EQ(fp8.matmul_flops.at(pass), bf16.matmul_flops.at(pass));
  }
  for (const ModelOp& op : LayerOps(Gpt(1024, 16), setup)) EXPECT_FALSE(op.sixteen_bit) << op.name;
}

// The LM head (Megatron's ColumnParallelLinear) and the unfused attention's GEMMs stay 16-bit:
// 2-byte operands, timed at the 16-bit peak.
TEST(OpCosts, Fp8KeepsTheHeadAndUnfusedAttentionGemmsSixteenBit) {
  TrainingSetup setup = Training(512, 2);
  setup.dtype = Dtype::kFp8;
  setup.flash_attention = false;
  const double T = 2 * 512, h = 1024, vocab = 1000;
  int head_gemms = 0;
  for (const ModelOp& op : HeadOps(Gpt(1024, 16), setup)) {
    if (op.kind != KernelKind::kMatmul) continue;
    ++head_gemms;
    EXPECT_TRUE(op.sixteen_bit) << op.name;
    // F reads X (T x h) and W (h x V) in 2 bytes and writes 2-byte logits.
    if (op.pass == OpPass::kForward) {
      EXPECT_DOUBLE_EQ(op.bytes, 2 * (T * h + h * vocab) + 2 * T * vocab);
    }
  }
  EXPECT_EQ(head_gemms, 3);
  int attention_gemms = 0;
  for (const ModelOp& op : LayerOps(Gpt(1024, 16), setup)) {
    if (op.kind != KernelKind::kMatmul) continue;
    const bool attention = op.name.rfind("attention", 0) == 0;
    attention_gemms += attention;
    EXPECT_EQ(op.sixteen_bit, attention) << op.name;
  }
  EXPECT_EQ(attention_gemms, 6);  // scores and context; 4 in the backward
  // In a 16-bit run nothing is marked (every GEMM is at the run's own peak).
  setup.dtype = Dtype::kBf16;
  for (const ModelOp& op : HeadOps(Gpt(1024, 16), setup)) EXPECT_FALSE(op.sixteen_bit) << op.name;
}

// TE's userbuffers overlap the row-parallel forwards (proj, mlp down: 'pipeline') and the
// column-parallel dgrads and wgrads (qkv, mlp up: 'bulk') with 16 SMs; only with tp > 1.
TEST(OpCosts, TpOverlappedGemmsAreThePipelineAndBulkOverlaps) {
  std::multiset<std::string> tagged;
  for (const ModelOp& op : LayerOps(Gpt(1024, 16), Training(512, 2, 2))) {
    if (op.tp_overlapped) tagged.insert(std::string(OpPassName(op.pass)) + " " + op.name);
  }
  EXPECT_EQ(tagged, (std::multiset<std::string>{"F proj", "F mlp down", "I qkv", "I mlp up",
                                                "W qkv", "W mlp up"}));
  for (const ModelOp& op : LayerOps(Gpt(1024, 16), Training(512, 2, 1))) {
    EXPECT_FALSE(op.tp_overlapped) << op.name;
  }
}

TEST(OpCosts, SixteenBitAndTpOverlappedGemmRates) {
  GpuModel gpu;
  gpu.matmul_flops_per_s = 4e12;  // the FP8 peak
  gpu.matmul_efficiency = 0.5;
  gpu.attention_flops_per_s = 2e12;  // the 16-bit peak
  gpu.matmul_16bit_efficiency = 0.75;
  gpu.tp_overlapped_sm_share = 0.8;
  ModelOp op;
  op.kind = KernelKind::kMatmul;
  op.flops = 6e12;
  EXPECT_DOUBLE_EQ(TimeOp(op, gpu).seconds, 6e12 / (4e12 * 0.5));
  op.sixteen_bit = true;
  EXPECT_DOUBLE_EQ(TimeOp(op, gpu).seconds, 6e12 / (2e12 * 0.75));
  op.tp_overlapped = true;
  EXPECT_DOUBLE_EQ(TimeOp(op, gpu).seconds, 6e12 / (2e12 * 0.75 * 0.8));
}

TEST(OpCosts, TensorParallelismDividesTheShardedWork) {
  const double T = 2 * 512, h = 1024, f = 4096, t = 4;
  TrainingSetup setup = Training(512, 2, 4);
  Sums sums = SumOps(LayerOps(Gpt(1024, 16), setup));
  EXPECT_DOUBLE_EQ(sums.matmul_flops.at(OpPass::kForward), 24 * T * h * h / t);
  // Norms and residuals stay whole without sequence parallelism; GeLU is split.
  EXPECT_DOUBLE_EQ(sums.memory_bytes.at(OpPass::kForward), 22 * T * h + 4 * T * f / t);
  setup.sequence_parallel = true;
  sums = SumOps(LayerOps(Gpt(1024, 16), setup));
  EXPECT_DOUBLE_EQ(sums.memory_bytes.at(OpPass::kForward), (22 * T * h + 4 * T * f) / t);
}

TEST(OpCosts, GemmTimeIsTheRooflineWithWaveQuantization) {
  GpuModel gpu;
  gpu.matmul_flops_per_s = 1e12;
  gpu.matmul_efficiency = 0.5;
  gpu.memory_bytes_per_s = 1e15;  // not the bound
  gpu.memory_efficiency = 1;
  gpu.sms = 2;
  ModelOp op;
  op.kind = KernelKind::kMatmul;
  op.m = 300;
  op.n = 128;
  op.k = 64;
  op.flops = 2.0 * 300 * 128 * 64;
  // 256 x 128 tiles: 2 x 1 = 2 tiles, one wave of 2 SMs (the 128 x 256 tiling needs 3 tiles, two
  // waves); the wave computes 2 full tiles: 2 x 256 x 128 x 2k FLOPs at 0.5 TFLOP/s.
  const double computed = 2.0 * 256 * 128 * 2 * 64;
  OpTime time = TimeOp(op, gpu);
  EXPECT_DOUBLE_EQ(time.seconds, computed / 0.5e12);
  EXPECT_DOUBLE_EQ(time.quantization, op.flops / computed);
  EXPECT_FALSE(time.memory_bound);
  // Three tiles on 2 SMs: two waves.
  op.m = 600;
  op.flops = 2.0 * 600 * 128 * 64;
  EXPECT_DOUBLE_EQ(TimeOp(op, gpu).seconds, 2 * computed / 0.5e12);
  // Without an SM count the FLOPs themselves.
  gpu.sms = 0;
  EXPECT_DOUBLE_EQ(TimeOp(op, gpu).seconds, op.flops / 0.5e12);
  // Memory bound: 1 GB at 2 TB/s x 0.5.
  op.bytes = 1e9;
  gpu.memory_bytes_per_s = 2e12;
  gpu.memory_efficiency = 0.5;
  time = TimeOp(op, gpu);
  EXPECT_DOUBLE_EQ(time.seconds, 1e-3);
  EXPECT_TRUE(time.memory_bound);
}

TEST(OpCosts, ElementWiseAndAttentionTimes) {
  GpuModel gpu;
  gpu.attention_flops_per_s = 2e12;
  gpu.attention_efficiency = 0.25;
  gpu.memory_bytes_per_s = 4e12;
  gpu.memory_efficiency = 0.5;
  ModelOp memory;
  memory.kind = KernelKind::kMemory;
  memory.bytes = 6e9;
  EXPECT_DOUBLE_EQ(TimeOp(memory, gpu).seconds, 6e9 / 2e12);
  ModelOp attention;
  attention.kind = KernelKind::kAttention;
  attention.flops = 1e12;
  attention.bytes = 1e6;
  EXPECT_DOUBLE_EQ(TimeOp(attention, gpu).seconds, 1e12 / 0.5e12);
}

TEST(OpCosts, StageSecondsSumTheLayersEmbeddingAndHead) {
  const TransformerSpec spec = Gpt(1024, 16);
  const TrainingSetup setup = Training(512, 2);
  GpuModel gpu;
  gpu.matmul_flops_per_s = 1e14;
  gpu.attention_flops_per_s = 1e14;
  gpu.memory_bytes_per_s = 1e12;
  StageModel first, middle;
  first.layers = 2;
  first.embedding = true;
  middle.layers = 3;
  const std::vector<PassSeconds> seconds =
      StagePassSeconds(spec, setup, {first, middle}, gpu, /*efficiency=*/0);
  auto total = [&](const std::vector<ModelOp>& ops, OpPass pass) {
    double sum = 0;
    for (const ModelOp& op : ops) {
      if (op.pass == pass) sum += TimeOp(op, gpu).seconds;
    }
    return sum;
  };
  const std::vector<ModelOp> layer = LayerOps(spec, setup);
  const std::vector<ModelOp> embedding = EmbeddingOps(spec, setup);
  EXPECT_DOUBLE_EQ(seconds[1].forward_s, 3 * total(layer, OpPass::kForward));
  EXPECT_DOUBLE_EQ(seconds[0].backward_weight_s, 2 * total(layer, OpPass::kBackwardWeight) +
                                                     total(embedding, OpPass::kBackwardWeight));
  // The embedding's only backward is its weight gradient.
  EXPECT_DOUBLE_EQ(seconds[0].backward_input_s, 2 * total(layer, OpPass::kBackwardInput));
}

}  // namespace
}  // namespace ppsim
