// Mixture-of-experts and multi-head latent attention in the analytic model.
//
// Expected values are closed forms written out from the Hugging Face configs cited in
// models/transformer.cc and from the formulas in models/transformer.h and models/op_costs.h;
// published parameter counts (model cards) are checked within 1% under the stated convention.

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/flag_locator.h"
#include "experiments/locators.h"
#include "models/op_costs.h"
#include "models/transformer.h"

namespace ppsim {
namespace {

const TransformerSpec& Preset(std::string_view name) {
  const TransformerSpec* spec = FindTransformerPreset(name);
  EXPECT_NE(spec, nullptr) << name;
  return *spec;
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

// ---------------------------------------------------------------------------------------------
// Parameter counts.

TEST(MoePresets, Mixtral8x7bMatchesItsCardWithTheEmbedding) {
  // config.json: 32 layers, h 4096, 32 heads, 8 KV heads of 128, experts' f 14336, vocab 32000,
  // 8 experts, top-2, untied, RMSNorm/SwiGLU; the router is 8 x h without bias.
  const TransformerSpec& m = Preset("mixtral-8x7b");
  const int64_t L = 32, h = 4096, kv = 8 * 128, f = 14336, V = 32000, E = 8, k = 2;
  const int64_t attention = 2 * h * h + 2 * h * kv;  // Q and O h x h, K and V h x 1024
  const int64_t norms = 2 * h;
  const int64_t expert = 3 * h * f;  // gate, up, down
  const int64_t router = E * h;
  EXPECT_EQ(m.ExpertParameters(), expert);
  EXPECT_EQ(m.RouterParameters(), router);
  EXPECT_EQ(m.MoeLayerParameters(), attention + norms + router + E * expert);
  EXPECT_EQ(m.MoeLayers(), 32);
  EXPECT_EQ(m.DenseLayers(), 0);
  const int64_t total = L * (attention + norms + router + E * expert) + 2 * V * h + h;
  const int64_t activated = L * (attention + norms + router + k * expert) + 2 * V * h + h;
  EXPECT_EQ(m.TotalParameters(), total);
  EXPECT_EQ(total, int64_t{46'702'792'704});
  EXPECT_EQ(m.ActivatedParameters(), activated);
  EXPECT_EQ(activated, int64_t{12'879'925'248});
  EXPECT_EQ(m.ActivatedParametersWithoutEmbedding(), activated - V * h);
  // The card (46.7B, 12.9B) counts the embedding: 0.16% off; without it 12.75B is 1.2% off.
  EXPECT_LT(RelativeError(static_cast<double>(total), 46.7e9), 0.01);
  EXPECT_LT(RelativeError(static_cast<double>(activated), 12.9e9), 0.01);
  EXPECT_GT(RelativeError(static_cast<double>(activated - V * h), 12.9e9), 0.01);
  EXPECT_EQ(m.seq_len, 32768);
}

TEST(MoePresets, Mixtral8x22bMatchesItsCard) {
  // config.json: 56 layers, h 6144, 48 heads, 8 KV heads of 128, experts' f 16384, vocab 32768.
  const TransformerSpec& m = Preset("mixtral-8x22b");
  const int64_t L = 56, h = 6144, kv = 1024, f = 16384, V = 32768, E = 8, k = 2;
  const int64_t shared_part = 2 * h * h + 2 * h * kv + 2 * h + E * h;  // attention, norms, router
  const int64_t total = L * (shared_part + E * 3 * h * f) + 2 * V * h + h;
  const int64_t activated = L * (shared_part + k * 3 * h * f) + 2 * V * h + h;
  EXPECT_EQ(m.TotalParameters(), total);
  EXPECT_EQ(total, int64_t{140'630'071'296});
  EXPECT_EQ(m.ActivatedParameters(), activated);
  EXPECT_EQ(activated, int64_t{39'161'468'928});
  // Card 141B / 39B, with the embedding counted (0.26%, 0.41%; without it 0.10%).
  EXPECT_LT(RelativeError(static_cast<double>(total), 141e9), 0.01);
  EXPECT_LT(RelativeError(static_cast<double>(activated), 39e9), 0.01);
  EXPECT_EQ(m.seq_len, 65536);
}

TEST(MoePresets, DbrxMatchesItsCardWithoutTheInputEmbedding) {
  // config.json: 40 layers, d_model 6144, 48 heads, kv_n_heads 8, ffn_hidden_size 10752 (GLU),
  // 16 experts, top-4, vocab 100352, untied; LayerNorms without bias (h weights each).
  const TransformerSpec& m = Preset("dbrx");
  const int64_t L = 40, h = 6144, kv = 1024, f = 10752, V = 100352, E = 16, k = 4;
  const int64_t shared_part = 2 * h * h + 2 * h * kv + 2 * h + E * h;
  const int64_t total = L * (shared_part + E * 3 * h * f) + 2 * V * h + h;
  const int64_t activated = L * (shared_part + k * 3 * h * f) + 2 * V * h + h;
  EXPECT_EQ(m.TotalParameters(), total);
  EXPECT_EQ(total, int64_t{131'596'523'520});
  EXPECT_EQ(m.ActivatedParameters(), activated);
  EXPECT_EQ(m.ActivatedParametersWithoutEmbedding(), activated - V * h);
  EXPECT_EQ(activated - V * h, int64_t{35'853'146'112});
  // Card: 132B total (0.31%), 36B active: 0.41% without the input embedding, 1.3% with it.
  EXPECT_LT(RelativeError(static_cast<double>(total), 132e9), 0.01);
  EXPECT_LT(RelativeError(static_cast<double>(activated - V * h), 36e9), 0.01);
  EXPECT_GT(RelativeError(static_cast<double>(activated), 36e9), 0.01);
  EXPECT_EQ(m.seq_len, 32768);
}

TEST(MoePresets, DeepSeekV3MatchesItsCardWithoutTheInputEmbedding) {
  // config.json: 61 layers, the first 3 dense (f 18432), h 7168, 128 heads, MLA (q_lora 1536,
  // kv_lora 512, nope 128, rope 64, v 128), 256 routed experts + 1 shared of f_e 2048, top-8,
  // router 256 x h plus the 256 score-correction biases, vocab 129280, untied, RMSNorm/SwiGLU.
  const TransformerSpec& m = Preset("deepseek-v3");
  const int64_t L = 61, dense = 3, h = 7168, f = 18432, fe = 2048, a = 128, V = 129280;
  const int64_t ql = 1536, kl = 512, n = 128, r = 64, v = 128, E = 256, k = 8, shared = 1;
  const int64_t attention = h * ql + ql + ql * a * (n + r)  // q_a, its norm, q_b
                            + h * (kl + r) + kl + kl * a * (n + v)  // kv_a, its norm, kv_b
                            + a * v * h;  // output
  EXPECT_EQ(attention, int64_t{187'107'328});
  const int64_t norms = 2 * h;
  const int64_t expert = 3 * h * fe;
  const int64_t router = E * h + E;
  const int64_t dense_layer = attention + norms + 3 * h * f;
  EXPECT_EQ(m.LayerParameters(), dense_layer);
  EXPECT_EQ(m.MoeLayerParameters(), attention + norms + router + (E + shared) * expert);
  const int64_t total = dense * dense_layer +
                        (L - dense) * (attention + norms + router + (E + shared) * expert) +
                        2 * V * h + h;
  const int64_t activated = dense * dense_layer +
                            (L - dense) * (attention + norms + router + (k + shared) * expert) +
                            2 * V * h + h;
  EXPECT_EQ(m.TotalParameters(), total);
  EXPECT_EQ(total, int64_t{671'026'419'200});
  EXPECT_EQ(m.ActivatedParameters(), activated);
  EXPECT_EQ(activated, int64_t{37'552'297'472});
  EXPECT_EQ(m.ActivatedParametersWithoutEmbedding(), activated - V * h);
  EXPECT_EQ(activated - V * h, int64_t{36'625'618'432});
  EXPECT_LT(RelativeError(static_cast<double>(total), 671e9), 0.01);
  // DeepSeek counts without the input embedding: its README_WEIGHTS.md's 36.6B (with the 0.9B
  // output head) is met within 0.1%; the card's 37B is that count rounded to whole billions,
  // 1.01% above it (with the embedding, 37.55B is 1.5% off).
  EXPECT_LT(RelativeError(static_cast<double>(activated - V * h), 36.6e9), 0.001);
  EXPECT_EQ(std::round(static_cast<double>(activated - V * h) / 1e9), 37);
  EXPECT_LT(RelativeError(static_cast<double>(activated - V * h), 37e9), 0.0102);
  EXPECT_EQ(m.seq_len, 4096);
  EXPECT_EQ(m.MoeLayers(), 58);
  EXPECT_FALSE(m.IsMoeLayer(2));
  EXPECT_TRUE(m.IsMoeLayer(3));
}

TEST(MoePresets, DenseModelsActivateEverything) {
  const TransformerSpec& llama = Preset("llama3-8b");
  EXPECT_FALSE(llama.moe());
  EXPECT_EQ(llama.ActivatedParameters(), llama.TotalParameters());
  EXPECT_EQ(llama.ActivatedParametersWithoutEmbedding(),
            llama.TotalParameters() - int64_t{128256} * 4096);
  EXPECT_EQ(llama.MoeLayers(), 0);
  EXPECT_EQ(llama.ExpertParameters(), 0);
}

// ---------------------------------------------------------------------------------------------
// Model files.

proto::TransformerModel MixtralLike() {
  proto::TransformerModel model;
  model.set_layers(4);
  model.set_hidden(1024);
  model.set_ffn_hidden(3584);
  model.set_heads(8);
  model.set_kv_heads(2);
  model.set_vocab(1000);
  model.set_seq_len(2048);
  model.set_mlp(proto::TransformerModel::SWIGLU);
  model.set_norm(proto::TransformerModel::RMSNORM);
  model.set_tied_embeddings(false);
  model.set_experts(8);
  model.set_experts_per_token(2);
  return model;
}

TEST(MoeFromProto, ReadsExpertsAndMla) {
  ConfigLocations locations;
  locations.set_source("m.yaml");
  proto::TransformerModel model = MixtralLike();
  TransformerSpec spec;
  ASSERT_TRUE(TransformerFromProto(model, locations, &spec).ok());
  EXPECT_EQ(spec.experts, 8);
  EXPECT_EQ(spec.experts_per_token, 2);
  EXPECT_EQ(spec.expert_ffn_hidden, 3584);  // default: ffn_hidden
  EXPECT_EQ(spec.first_dense_layers, 0);
  EXPECT_FALSE(spec.mla);

  model.set_expert_ffn_hidden(512);
  model.set_shared_experts(2);
  model.set_first_dense_layers(1);
  model.set_router_bias(true);
  model.set_attention(proto::TransformerModel::MLA);
  model.set_kv_heads(0);
  model.set_heads(12);  // MLA's heads need not divide hidden
  model.set_q_lora_rank(256);
  model.set_kv_lora_rank(128);
  model.set_qk_nope_head_dim(64);
  model.set_qk_rope_head_dim(32);
  model.set_v_head_dim(64);
  ASSERT_TRUE(TransformerFromProto(model, locations, &spec).ok());
  EXPECT_TRUE(spec.mla);
  EXPECT_EQ(spec.kv_heads, 12);
  EXPECT_EQ(spec.expert_ffn_hidden, 512);
  EXPECT_EQ(spec.shared_experts, 2);
  EXPECT_EQ(spec.first_dense_layers, 1);
  EXPECT_TRUE(spec.router_bias);
  // MLA: q_a h x 256 + 256, q_b 256 x 12(64 + 32), kv_a h x (128 + 32) + 128, kv_b
  // 128 x 12(64 + 64), output 12 x 64 x h.
  const int64_t h = 1024;
  const int64_t attention = h * 256 + 256 + 256 * 12 * 96 + h * 160 + 128 + 128 * 12 * 128 +
                            12 * 64 * h;
  EXPECT_EQ(spec.LayerParameters(), attention + 3 * h * 3584 + 2 * h);
  EXPECT_EQ(spec.MoeLayerParameters(), attention + 2 * h + (8 * h + 8) + (8 + 2) * 3 * h * 512);
  EXPECT_EQ(spec.MoeLayerActivatedParameters(),
            attention + 2 * h + (8 * h + 8) + (2 + 2) * 3 * h * 512);
  // Without q_lora_rank one projection h x 12(64 + 32).
  model.set_q_lora_rank(0);
  ASSERT_TRUE(TransformerFromProto(model, locations, &spec).ok());
  EXPECT_EQ(spec.LayerParameters(), attention - (h * 256 + 256 + 256 * 12 * 96) + h * 12 * 96 +
                                        3 * h * 3584 + 2 * h);
}

TEST(MoeFromProto, GeluExpertsKeepTheirBiases) {
  proto::TransformerModel model = MixtralLike();
  model.set_mlp(proto::TransformerModel::GELU);
  model.set_expert_ffn_hidden(512);
  ConfigLocations locations;
  TransformerSpec spec;
  ASSERT_TRUE(TransformerFromProto(model, locations, &spec).ok());
  EXPECT_EQ(spec.ExpertParameters(), 2 * 1024 * 512 + 512 + 1024);
}

TEST(MoeFromProto, ReportsEveryErrorWithItsField) {
  ConfigLocations locations;
  locations.set_source("m.yaml");
  TransformerSpec spec;
  proto::TransformerModel model = MixtralLike();
  model.set_experts_per_token(9);
  model.set_first_dense_layers(4);
  model.set_q_lora_rank(64);
  EXPECT_EQ(TransformerFromProto(model, locations, &spec).message(),
            "m.yaml: q_lora_rank: applies with attention MLA only; got 64\n"
            "m.yaml: experts_per_token: 9 exceeds the 8 experts; valid: 1 to 8\n"
            "m.yaml: first_dense_layers: 4 leaves no MoE layer of the 4; valid: 0 to 3");

  model = MixtralLike();
  model.set_experts(0);
  model.set_shared_experts(1);
  model.set_router_bias(true);
  EXPECT_EQ(TransformerFromProto(model, locations, &spec).message(),
            "m.yaml: experts_per_token: applies with experts only (a dense model); got 2\n"
            "m.yaml: shared_experts: applies with experts only (a dense model); got 1\n"
            "m.yaml: router_bias: applies with experts only (a dense model)");

  model = MixtralLike();
  model.set_experts_per_token(0);
  model.set_experts(-1);
  EXPECT_EQ(TransformerFromProto(model, locations, &spec).message(),
            "m.yaml: experts: must be at least 0; got -1");

  model = MixtralLike();
  model.set_attention(proto::TransformerModel::MLA);
  model.set_mlp(proto::TransformerModel::GELU);
  model.set_kv_lora_rank(0);
  model.set_qk_nope_head_dim(64);
  model.set_v_head_dim(64);
  EXPECT_EQ(TransformerFromProto(model, locations, &spec).message(),
            "m.yaml: kv_heads: 2 with attention MLA, whose 8 heads each have a key and value; "
            "leave kv_heads unset or give 8\n"
            "m.yaml: attention: MLA comes with DeepSeek's layer (RMSNorm, no biases); give mlp "
            "SWIGLU\n"
            "m.yaml: kv_lora_rank: must be at least 1; got 0");
}

// ---------------------------------------------------------------------------------------------
// Training setups.

TEST(MoeSetup, ExpertParallelismIsChecked) {
  const TransformerSpec& mixtral = Preset("mixtral-8x7b");
  TrainingSetup setup = Training(4096, 1);
  setup.layout.dp = 8;
  setup.layout.ep = 8;
  EXPECT_TRUE(CheckTrainingSetup(mixtral, setup, FlagLocator()).ok());
  setup.layout.ep = 1;  // all experts local
  EXPECT_TRUE(CheckTrainingSetup(mixtral, setup, FlagLocator()).ok());
  setup.layout.ep = 0;
  EXPECT_EQ(CheckTrainingSetup(mixtral, setup, FlagLocator()).message(),
            "--ep: must be at least 1; got 0");
  setup.layout.ep = 3;
  EXPECT_EQ(CheckTrainingSetup(mixtral, setup, FlagLocator()).message(),
            "--ep: 3 does not divide the 8 experts of mixtral-8x7b; valid with these GPUs: 1, 2, "
            "4, 8");
  setup.layout.ep = 4;
  setup.layout.dp = 2;
  EXPECT_EQ(CheckTrainingSetup(mixtral, setup, FlagLocator()).message(),
            "--ep: 4 does not divide the dp x tp x cp = 2 GPUs that hold a stage "
            "(expert-parallel groups are taken from them); valid: 1, 2");
  setup.layout.tp = 2;  // tp and cp count: 2 x 2 x 1
  setup.sequence_parallel = true;
  EXPECT_TRUE(CheckTrainingSetup(mixtral, setup, FlagLocator()).ok());
  setup.sequence_parallel = false;
  EXPECT_EQ(CheckTrainingSetup(mixtral, setup, FlagLocator()).message(),
            "--tp: 2 with the experts of mixtral-8x7b needs --sequence-parallel (Megatron-core's "
            "MoE layers require it with tensor parallelism)");
  TrainingSetup dense = Training(8192, 1);
  dense.layout.dp = 2;
  dense.layout.ep = 2;
  EXPECT_EQ(CheckTrainingSetup(Preset("llama3-8b"), dense, FlagLocator()).message(),
            "--ep: 2 shards routed experts; llama3-8b has none (valid: 1)");
}

// ---------------------------------------------------------------------------------------------
// Model FLOPs and activations of one layer.

TEST(MoeLayerCosts, FlopsCountTheActivatedExperts) {
  // Mixtral: QKV and output 2bs(2h^2 + 2h kv), router 2bshE, k SwiGLU experts 6bshf each,
  // attention 4bs^2h.
  const TransformerSpec& m = Preset("mixtral-8x7b");
  const double b = 2, s = 4096, h = 4096, kv = 1024, f = 14336, E = 8, k = 2;
  const double attention_weights = 2 * b * s * (2 * h * h + 2 * h * kv) + 2 * b * s * h * E;
  const double mlp = k * 6 * b * s * h * f;
  const double core = 4 * b * s * s * h;
  const LayerCosts costs = TransformerLayerCosts(m, Training(4096, 2), LayerKind::kMoe);
  EXPECT_DOUBLE_EQ(costs.forward_flops, attention_weights + mlp + core);
  EXPECT_DOUBLE_EQ(costs.backward_input_flops, attention_weights + mlp + 2 * core);
  EXPECT_DOUBLE_EQ(costs.backward_weight_flops, attention_weights + mlp);
  const LayerPartFlops parts = TransformerLayerPartFlops(m, Training(4096, 2), LayerKind::kMoe);
  EXPECT_DOUBLE_EQ(parts.forward_attention, attention_weights + core);
  EXPECT_DOUBLE_EQ(parts.forward_mlp, mlp);
  EXPECT_DOUBLE_EQ(parts.input_attention, attention_weights + 2 * core);
  EXPECT_DOUBLE_EQ(parts.input_mlp, mlp);
  EXPECT_DOUBLE_EQ(parts.weight_attention, attention_weights);
  EXPECT_DOUBLE_EQ(parts.weight_mlp, mlp);
  // Tensor parallelism (with sequence parallelism) divides everything by t; expert parallelism
  // changes no FLOPs (balanced routing).
  TrainingSetup setup = Training(4096, 2);
  setup.layout.tp = 2;
  setup.sequence_parallel = true;
  setup.layout.dp = 4;
  setup.layout.ep = 8;
  EXPECT_DOUBLE_EQ(TransformerLayerCosts(m, setup, LayerKind::kMoe).forward_flops,
                   (attention_weights + mlp + core) / 2);
}

TEST(MoeLayerCosts, DeepSeekV3MlaAndSharedExpertFlops) {
  // Per token: 2 x (q_a h q_lora + q_b q_lora a(n + r) + kv_a h(kv_lora + r) + kv_b
  // kv_lora a(n + v) + output a v h); the core 2bs^2 a(n + r + v) (scores over n + r channels,
  // context over v); a MoE layer adds the router 2hE and 9 experts (8 routed, 1 shared) of 6h f_e.
  const TransformerSpec& m = Preset("deepseek-v3");
  const double b = 1, s = 4096, h = 7168, a = 128, ql = 1536, kl = 512, n = 128, r = 64, v = 128;
  const double fe = 2048, f = 18432, E = 256;
  const double attention =
      2 * b * s * (h * ql + ql * a * (n + r) + h * (kl + r) + kl * a * (n + v) + a * v * h);
  const double core = 2 * b * s * s * a * (n + r + v);
  TrainingSetup setup = Training(4096, 1);
  setup.recompute = Recompute::kSelective;
  const LayerCosts dense = TransformerLayerCosts(m, setup, LayerKind::kDense);
  EXPECT_DOUBLE_EQ(dense.forward_flops, attention + 6 * b * s * h * f + core);
  EXPECT_DOUBLE_EQ(dense.backward_input_flops, attention + 6 * b * s * h * f + 3 * core);
  const LayerCosts moe = TransformerLayerCosts(m, setup, LayerKind::kMoe);
  const double moe_weights = attention + 2 * b * s * h * E + 9 * 6 * b * s * h * fe;
  EXPECT_DOUBLE_EQ(moe.forward_flops, moe_weights + core);
  EXPECT_DOUBLE_EQ(moe.backward_weight_flops, moe_weights);
  // Selective recompute's attention core is in I's attention part.
  const LayerPartFlops parts = TransformerLayerPartFlops(m, setup, LayerKind::kMoe);
  EXPECT_DOUBLE_EQ(parts.input_attention, attention + 2 * b * s * h * E + 3 * core);
  EXPECT_DOUBLE_EQ(parts.input_mlp, 9 * 6 * b * s * h * fe);
}

TEST(MoeLayerCosts, ActivationsOfTheDroplessAllToAllLayer) {
  // Per token (T_g = sb/t of them on a GPU): router probabilities in fp32 and the routing map 5E,
  // the received tokens (fc1's input) 2kh, SwiGLU's gate, up and product 6kf, the unpermute's
  // input 2kh; M_W: the router logits' gradient 2E, fc1's input 2kh and output gradient 4kf,
  // fc2's input 2kf and output gradient 2kh. The attention part as a dense Llama layer's.
  const TransformerSpec& m = Preset("mixtral-8x7b");
  const int64_t s = 4096, b = 1, h = 4096, kv = 1024, f = 14336, E = 8, k = 2;
  TrainingSetup setup = Training(s, b);
  LayerCosts costs = TransformerLayerCosts(m, setup, LayerKind::kMoe);
  const int64_t attention = 8 * s * b * h + s * b * (2 * h + 4 * kv + 2 * h);
  const int64_t experts = s * b * (5 * E + 2 * k * h + 6 * k * f + 2 * k * h);
  EXPECT_EQ(costs.activation_bytes, attention + experts);
  const int64_t attention_w = 8 * s * b * h + s * b * (2 * (h + 2 * kv) + 2 * h);
  const int64_t experts_w = s * b * (2 * E + 2 * k * h + 4 * k * f + 2 * k * f + 2 * k * h);
  EXPECT_EQ(costs.activation_w_bytes, attention_w + experts_w);
  // Tensor and sequence parallelism t = 2: everything / t; expert parallelism changes nothing
  // (each GPU receives T_g k tokens however the experts are spread).
  setup.layout.tp = 2;
  setup.sequence_parallel = true;
  setup.layout.dp = 4;
  setup.layout.ep = 8;
  costs = TransformerLayerCosts(m, setup, LayerKind::kMoe);
  EXPECT_EQ(costs.activation_bytes, (attention + experts) / 2);
  EXPECT_EQ(costs.activation_w_bytes, (attention_w + experts_w) / 2);
  setup.recompute = Recompute::kFull;  // the layer's input only
  EXPECT_EQ(TransformerLayerCosts(m, setup, LayerKind::kMoe).activation_bytes, 2 * s * b * h / 2);
}

TEST(MoeLayerCosts, DeepSeekV3Activations) {
  // MLA per token: norms 8h and the latents (q_a's output and its norm's 4 q_lora, kv_a's output
  // 2(kv_lora + rope) and its norm's 2 kv_lora); Q and K 2a(n + r) each, V and the context 2av
  // each. The MoE part as above with the shared expert's 6 f_e.
  const TransformerSpec& m = Preset("deepseek-v3");
  const int64_t s = 4096, b = 1, h = 7168, a = 128, ql = 1536, kl = 512, n = 128, r = 64, v = 128;
  const int64_t fe = 2048, E = 256, k = 8;
  const int64_t attention = s * b * (8 * h + 4 * ql + 2 * (kl + r) + 2 * kl) +
                            s * b * (2 * a * (n + r) * 2 + 2 * a * v * 2);
  const int64_t experts = s * b * (5 * E + 2 * k * h + 6 * k * fe + 2 * k * h + 6 * fe);
  const TrainingSetup setup = Training(s, b);
  EXPECT_EQ(TransformerLayerCosts(m, setup, LayerKind::kMoe).activation_bytes,
            attention + experts);
  const int64_t f = 18432;
  EXPECT_EQ(TransformerLayerCosts(m, setup, LayerKind::kDense).activation_bytes,
            attention + 6 * s * b * f);
  // M_W: the latents' W tensors (q_a's and kv_a's output gradients, q_b's and kv_b's inputs: as
  // many bytes as the latents), q_b's, kv_b's output gradients and the projection's input.
  const int64_t attention_w = s * b * (8 * h + 4 * ql + 2 * (kl + r) + 2 * kl) +
                              s * b * (2 * a * (n + r) + 2 * a * (n + v) + 2 * a * v);
  const int64_t experts_w =
      s * b * (2 * E + 2 * k * h + 4 * k * fe + 2 * k * fe + 2 * k * h + 6 * fe);
  EXPECT_EQ(TransformerLayerCosts(m, setup, LayerKind::kMoe).activation_w_bytes,
            attention_w + experts_w);
}

// ---------------------------------------------------------------------------------------------
// Stages.

TEST(MoeStageModels, LayersAreDenseOrMoeByTheirGlobalIndex) {
  // The 61 layers alone: the MTP module's layer on the last stage is tests/models/mtp_test.cc's.
  TransformerSpec m = Preset("deepseek-v3");
  m.mtp_layers = 0;
  const TrainingSetup setup = Training(4096, 1);
  std::vector<StageModel> stages = BuildStageModels(m, setup, {16, 15, 15, 15});
  EXPECT_EQ(stages[0].moe_layers, 13);  // layers 0-2 dense
  EXPECT_EQ(stages[1].moe_layers, 15);
  stages = BuildStageModels(m, setup, {2, 59});
  EXPECT_EQ(stages[0].moe_layers, 0);
  EXPECT_EQ(stages[1].moe_layers, 58);
  EXPECT_EQ(stages[0].dispatch_bytes, 0);  // no MoE layer
  const LayerCosts dense = TransformerLayerCosts(m, setup, LayerKind::kDense);
  const LayerCosts moe = TransformerLayerCosts(m, setup, LayerKind::kMoe);
  EXPECT_DOUBLE_EQ(stages[1].backward_weight_flops,
                   1 * dense.backward_weight_flops + 58 * moe.backward_weight_flops +
                       2.0 * 4096 * 7168 * 129280);
  EXPECT_EQ(stages[1].activation_bytes,
            dense.activation_bytes + 58 * moe.activation_bytes + 4 * 4096 * 7168 +
                4 * 4096 * int64_t{129280});
  // One stage holds every parameter once.
  stages = BuildStageModels(m, setup, {61});
  EXPECT_EQ(stages[0].parameters, m.TotalParameters());
  EXPECT_EQ(stages[0].expert_parameters, int64_t{58} * 256 * (3 * 7168 * 2048));
}

TEST(MoeStageModels, ExpertParallelismShardsTheExpertsAndTheirState) {
  // Mixtral on 2 stages of 16 layers, dp 8, ep 4: each GPU holds 8/4 = 2 experts per layer, the
  // rest (attention, norms, router) whole (t = 1).
  const TransformerSpec& m = Preset("mixtral-8x7b");
  const int64_t h = 4096, kv = 1024, f = 14336, E = 8, V = 32000;
  TrainingSetup setup = Training(4096, 1);
  setup.layout.dp = 8;
  setup.layout.ep = 4;
  setup.zero_stage = 1;
  const std::vector<StageModel> stages = BuildStageModels(m, setup, {16, 16});
  const int64_t dense = 16 * (2 * h * h + 2 * h * kv + 2 * h + E * h) + V * h;  // stage 0
  const int64_t experts = 16 * 2 * (3 * h * f);
  EXPECT_EQ(stages[0].expert_parameters, experts);
  EXPECT_EQ(stages[0].parameters, dense + experts);
  // ZeRO-1: dense state / (dp x cp) = 8, expert state / (dp x tp x cp / e) = 2.
  EXPECT_EQ(stages[0].static_bytes, 6 * (dense + experts) + 12 * dense / 8 + 12 * experts / 2);
  EXPECT_EQ(stages[0].gradient_bytes, 4 * (dense + experts));
  EXPECT_EQ(stages[0].expert_gradient_bytes, 4 * experts);
  EXPECT_EQ(stages[0].optimizer_step_bytes, 30 * (dense / 8 + experts / 2));
  // All-to-all bytes per MoE layer: T_g k h in bf16 and 16 bits, T_g = 4096 tokens.
  EXPECT_EQ(stages[0].dispatch_bytes, 4096 * 2 * h * 2);
  EXPECT_EQ(stages[0].combine_bytes, 4096 * 2 * h * 2);
}

TEST(MoeStageModels, TensorParallelMoeLayers) {
  // t = 2 with sequence parallelism, fp8: T_g = sb/2. The attention's pair of collectives per
  // layer; Mixtral's experts have none (each GPU dispatches its own tokens), DeepSeek's shared
  // expert has the MLP's pair as in a dense layer.
  const TransformerSpec& m = Preset("mixtral-8x7b");
  const int64_t s = 4096, h = 4096, k = 2;
  TrainingSetup setup = Training(s, 1);
  setup.layout.tp = 2;
  setup.sequence_parallel = true;
  setup.layout.dp = 4;
  setup.layout.ep = 8;
  setup.dtype = Dtype::kFp8;
  std::vector<StageModel> stages = BuildStageModels(m, setup, {4, 24, 4});
  EXPECT_EQ(stages[1].tp_forward_steps, 24 * 2 * 1);      // 24 all-reduce equivalents
  EXPECT_EQ(stages[1].tp_backward_steps, 24 * 2 + 24 * 1);  // and QKV's input gathered again
  EXPECT_EQ(stages[1].dispatch_bytes, s / 2 * k * h * 1);
  EXPECT_EQ(stages[1].combine_bytes, s / 2 * k * h * 2);
  // Per GPU: the attention and norms / t, the router whole, 8/8 = 1 expert per layer.
  const int64_t kv = 1024, f = 14336;
  EXPECT_EQ(stages[1].parameters, 24 * (2 * h * h + 2 * h * kv + 2 * h) / 2 + 24 * 8 * h +
                                      24 * 1 * 3 * h * f);

  const TransformerSpec& deepseek = Preset("deepseek-v3");
  setup.layout.ep = 8;
  setup.dtype = Dtype::kBf16;
  stages = BuildStageModels(deepseek, setup, {2, 29, 30});  // stage 1: 1 dense, 28 MoE layers
  EXPECT_EQ(stages[1].tp_forward_steps, 2 * 29 * 2 * 1);
  EXPECT_EQ(stages[1].tp_backward_steps, 2 * 29 * 2 * 1 + 2 * 29 * 1);
}

// ---------------------------------------------------------------------------------------------
// Ops and their parts.

TEST(MoeOps, GroupedExpertGemmsUnderBalancedRouting) {
  // Mixtral, s = 4096, b = 1, ep 4 (dp 4): each GPU receives T_g k = 8192 tokens for its 2
  // experts, 4096 each.
  const TransformerSpec& m = Preset("mixtral-8x7b");
  TrainingSetup setup = Training(4096, 1);
  setup.layout.dp = 4;
  setup.layout.ep = 4;
  const double T = 4096, h = 4096, kv = 1024, f = 14336, E = 8, k = 2;
  const std::vector<ModelOp> ops = LayerOps(m, setup, LayerKind::kMoe);
  double forward_matmul = 0, forward_mlp_bytes = 0;
  bool found_fc1 = false;
  for (const ModelOp& op : ops) {
    EXPECT_NE(op.part, LayerPart::kNone) << op.name;
    if (op.name == "expert fc1" && op.pass == OpPass::kForward) {
      found_fc1 = true;
      EXPECT_EQ(op.batch, 2);
      EXPECT_EQ(op.m, 4096);
      EXPECT_EQ(op.n, 2 * 14336);
      EXPECT_EQ(op.k, 4096);
      EXPECT_EQ(op.part, LayerPart::kMlp);
    }
    if ((op.name == "router" || op.name == "norm 2") && op.pass == OpPass::kForward) {
      EXPECT_EQ(op.part, LayerPart::kAttention) << op.name;
    }
    if (op.pass != OpPass::kForward) continue;
    if (op.kind == KernelKind::kMatmul) forward_matmul += op.flops;
    if (op.kind == KernelKind::kMemory && op.part == LayerPart::kMlp) forward_mlp_bytes += op.bytes;
  }
  EXPECT_TRUE(found_fc1);
  // QKV, projection, router, and k experts per token.
  EXPECT_DOUBLE_EQ(forward_matmul,
                   2 * T * h * (h + 2 * kv) + 2 * T * h * h + 2 * T * h * E + k * 6 * T * h * f);
  // Permute 4Tkh, SwiGLU 6Tkf, unpermute 2Tkh + 2Th, residual add 6Th.
  EXPECT_DOUBLE_EQ(forward_mlp_bytes,
                   4 * T * k * h + 6 * T * k * f + 2 * T * k * h + 2 * T * h + 6 * T * h);
}

TEST(MoeOps, DenseLayersKeepTheirOpsAndGetParts) {
  const TransformerSpec& llama = Preset("llama3-8b");
  for (const ModelOp& op : LayerOps(llama, Training(8192, 1))) {
    const bool mlp = op.name == "norm 2" || op.name == "mlp up" || op.name == "activation" ||
                     op.name == "mlp down" || op.name == "residual 2";
    EXPECT_EQ(op.part, mlp ? LayerPart::kMlp : LayerPart::kAttention) << op.name;
  }
  for (const ModelOp& op : HeadOps(llama, Training(8192, 1))) {
    EXPECT_EQ(op.part, LayerPart::kNone);
  }
}

TEST(MoeOps, StagePartsSumToTheLayerWithoutAFullRecompute) {
  const TransformerSpec& m = Preset("deepseek-v3");
  TrainingSetup setup = Training(4096, 1);
  setup.layout.dp = 8;
  setup.layout.ep = 8;
  GpuModel gpu;
  gpu.matmul_flops_per_s = 1e15;
  gpu.attention_flops_per_s = 5e14;
  gpu.memory_bytes_per_s = 3e12;
  gpu.sms = 132;
  auto time = [&](const std::vector<ModelOp>& ops, OpPass pass, bool recomputed) {
    double sum = 0;
    for (const ModelOp& op : ops) {
      if (op.pass == pass && op.recompute == recomputed) sum += TimeOp(op, gpu).seconds;
    }
    return sum;
  };
  for (Recompute recompute : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    setup.recompute = recompute;
    const std::vector<StageModel> stages = BuildStageModels(m, setup, {2, 59});
    const std::vector<PassSeconds> seconds = StagePassSeconds(m, setup, stages, gpu, 0);
    const MoeLayerSeconds& p = seconds[1].moe_layer;
    const std::vector<ModelOp> ops = LayerOps(m, setup, LayerKind::kMoe);
    EXPECT_DOUBLE_EQ(p.forward_attention_s + p.forward_mlp_s, time(ops, OpPass::kForward, false));
    EXPECT_DOUBLE_EQ(p.weight_attention_s + p.weight_mlp_s,
                     time(ops, OpPass::kBackwardWeight, false));
    // I's parts hold a selective recompute, not a full one (the engine reruns the forward).
    const double recomputed = time(ops, OpPass::kBackwardInput, true);
    EXPECT_DOUBLE_EQ(p.input_attention_s + p.input_mlp_s,
                     time(ops, OpPass::kBackwardInput, false) +
                         (recompute == Recompute::kSelective ? recomputed : 0));
    if (recompute == Recompute::kFull) {
      EXPECT_DOUBLE_EQ(recomputed, time(ops, OpPass::kForward, false));
    }
    EXPECT_GT(p.forward_mlp_s, 0);
    EXPECT_GT(p.forward_attention_s, 0);
    // The dense stage has no MoE part.
    EXPECT_EQ(seconds[0].moe_layer.forward_mlp_s, 0);
  }
}

TEST(MoeStageCosts, FilledOnlyWithExpertParallelism) {
  // The 61 layers alone: the MTP module's layer on the last stage is tests/models/mtp_test.cc's.
  TransformerSpec m = Preset("deepseek-v3");
  m.mtp_layers = 0;
  TrainingSetup setup = Training(4096, 1);
  setup.layout.dp = 8;
  setup.recompute = Recompute::kFull;
  GpuModel gpu;
  gpu.matmul_flops_per_s = 1e15;
  gpu.attention_flops_per_s = 5e14;
  gpu.memory_bytes_per_s = 3e12;
  std::vector<StageModel> stages = BuildStageModels(m, setup, {2, 59});
  std::vector<PassSeconds> seconds = StagePassSeconds(m, setup, stages, gpu, 0);
  EXPECT_TRUE(ModelStageCosts(stages, seconds, setup).moe.empty());  // ep 1: all local

  setup.layout.ep = 8;
  stages = BuildStageModels(m, setup, {2, 59});
  seconds = StagePassSeconds(m, setup, stages, gpu, 0);
  const StageCosts costs = ModelStageCosts(stages, seconds, setup);
  ASSERT_EQ(costs.moe.size(), 2u);
  EXPECT_EQ(costs.moe[0].layers, 0);
  EXPECT_EQ(costs.moe[1].layers, 58);
  EXPECT_TRUE(costs.moe[1].full_recompute);
  EXPECT_EQ(costs.moe[1].layer_seconds.forward_mlp_s, seconds[1].moe_layer.forward_mlp_s);
  EXPECT_EQ(costs.moe[1].layer_seconds.input_attention_s, seconds[1].moe_layer.input_attention_s);
  // T_g k h: 4096 tokens x 8 experts x 7168, bf16 both ways.
  EXPECT_EQ(costs.moe[1].dispatch_bytes, int64_t{4096} * 8 * 7168 * 2);
  EXPECT_EQ(costs.moe[1].combine_bytes, int64_t{4096} * 8 * 7168 * 2);
  // Stage totals keep every layer, the recompute and the head.
  EXPECT_EQ(costs.forward_s[1], seconds[1].forward_s);
  EXPECT_GT(costs.backward_input_s[1], 58 * (costs.moe[1].layer_seconds.input_attention_s +
                                             costs.moe[1].layer_seconds.input_mlp_s +
                                             costs.moe[1].layer_seconds.forward_attention_s +
                                             costs.moe[1].layer_seconds.forward_mlp_s));

  // --efficiency: the parts are the model FLOPs at the rate.
  seconds = StagePassSeconds(m, setup, stages, gpu, 0.5);
  const LayerPartFlops parts = TransformerLayerPartFlops(m, setup, LayerKind::kMoe);
  EXPECT_DOUBLE_EQ(seconds[1].moe_layer.forward_mlp_s, parts.forward_mlp / 0.5e15);
  EXPECT_DOUBLE_EQ(seconds[1].moe_layer.weight_attention_s, parts.weight_attention / 0.5e15);
}

}  // namespace
}  // namespace ppsim
