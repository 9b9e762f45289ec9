// Multi-token prediction modules (models/multi_token_prediction.cc): what one module adds to the
// pipeline's last stage, written out by hand for llama3-8b (h 4096, 8 KV heads of 128: k = v =
// 1024, SwiGLU f 14336, vocabulary 128256, untied, RMSNorm) at s 1024, b 1, t 1, pp 2.
#include <gtest/gtest.h>

#include "models/transformer.h"

namespace ppsim {
namespace {

constexpr int64_t kLayer = 218'112'000;  // 4096 (4096 + 2 x 1024) + 4096^2 + 3 x 4096 x 14336 + 2h
constexpr int64_t kSb = 1024;
constexpr int64_t kH = 4096;
constexpr int64_t kVocab = 128'256;

TrainingSetup MtpSetup() {
  TrainingSetup setup;
  setup.seq_len = kSb;
  setup.microbatch_size = 1;
  return setup;
}

TEST(MultiTokenPrediction, ParametersOfOneModule) {
  TransformerSpec spec = *FindTransformerPreset("llama3-8b");
  EXPECT_EQ(spec.LayerParameters(), kLayer);
  EXPECT_EQ(spec.MtpParameters(), 0);
  spec.mtp_layers = 1;
  // The layer, the projection 2h x h and three RMSNorms of h: 251,678,720.
  EXPECT_EQ(spec.MtpParameters(), kLayer + 2 * kH * kH + 3 * kH);
  EXPECT_EQ(spec.MtpParameters(), 251'678'720);
}

TEST(MultiTokenPrediction, OneModuleOnTheLastStage) {
  const TransformerSpec base = *FindTransformerPreset("llama3-8b");
  TransformerSpec mtp = base;
  mtp.mtp_layers = 1;
  const TrainingSetup setup = MtpSetup();
  const std::vector<StageModel> without = BuildStageModels(base, setup, {16, 16});
  const std::vector<StageModel> with = BuildStageModels(mtp, setup, {16, 16});
  // The first stage does not change.
  EXPECT_EQ(with[0].parameters, without[0].parameters);
  EXPECT_EQ(with[0].forward_flops, without[0].forward_flops);
  // The last: one more layer, costed as the others (a 16th of the 16 layers' FLOPs and bytes),
  // the projection (2 sb 2h h = 68,719,476,736 FLOPs each way), the shared head again
  // (2 sb h V = 1,075,889,307,648), and the embedding on this stage (V h = 525,336,576).
  const StageModel& a = without[1];
  const StageModel& b = with[1];
  EXPECT_EQ(b.layers, 17);
  const LayerCosts layer = TransformerLayerCosts(base, setup);
  const double extra = 68'719'476'736.0 + 1'075'889'307'648.0;
  EXPECT_DOUBLE_EQ(b.forward_flops, a.forward_flops + layer.forward_flops + extra);
  EXPECT_DOUBLE_EQ(b.backward_input_flops,
                   a.backward_input_flops + layer.backward_input_flops + extra);
  EXPECT_DOUBLE_EQ(b.backward_weight_flops,
                   a.backward_weight_flops + layer.backward_weight_flops + extra);
  EXPECT_EQ(b.parameters, a.parameters + 251'678'720 + 525'336'576);
  // Kept for the backward: 12 sb h + 4 sb V = 575,668,224 bytes besides the layer's; W's
  // 6 sb h + 2 sb V = 287,834,112.
  EXPECT_EQ(b.activation_bytes, a.activation_bytes + layer.activation_bytes + 575'668'224);
  EXPECT_EQ(b.activation_w_bytes, a.activation_w_bytes + layer.activation_w_bytes + 287'834'112);
}

TEST(MultiTokenPrediction, DeepSeekV3HasOneMoeModule) {
  // deepseek-v3's config.json: num_nextn_predict_layers 1; its module's layer is a MoE layer (it
  // follows the 61 layers, past first_k_dense_replace 3).
  const TransformerSpec& spec = *FindTransformerPreset("deepseek-v3");
  EXPECT_EQ(spec.mtp_layers, 1);
  EXPECT_EQ(spec.MtpParameters(), spec.MoeLayerParameters() + 2 * 7168LL * 7168 + 3 * 7168);
  TrainingSetup setup = MtpSetup();
  setup.seq_len = 4096;
  const std::vector<StageModel> stages = BuildStageModels(spec, setup, {31, 30});
  EXPECT_EQ(stages[1].layers, 31);
  EXPECT_EQ(stages[1].moe_layers, 31);
  EXPECT_EQ(stages[0].moe_layers, 28);
}

}  // namespace
}  // namespace ppsim
