#include "interop/hf_config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/files.h"

namespace ppsim {
namespace {

// The real config.json files of tests/data/hf (SOURCES.md there cites each).
TransformerSpec Read(const std::string& name) {
  const std::string path = std::string(PPSIM_SOURCE_DIR) + "/tests/data/hf/" + name;
  std::string text;
  EXPECT_TRUE(ReadFile(path, &text).ok()) << path;
  EXPECT_TRUE(LooksLikeHfConfig(text)) << path;
  TransformerSpec spec;
  const Status status = ReadHfConfig(text, name, &spec);
  EXPECT_TRUE(status.ok()) << status.message();
  return spec;
}

std::string Error(const std::string& text) {
  TransformerSpec spec;
  return ReadHfConfig(text, "config.json", &spec).message();
}

// The closed forms, written from the weights transformers' model classes create
// (modeling_llama.py, modeling_mistral.py, modeling_mixtral.py, modeling_qwen2.py,
// modeling_qwen3.py, modeling_qwen3_moe.py, modeling_deepseek_v3.py), with h hidden_size, a
// heads, k KV heads, d head_dim (hidden / heads unless given), f intermediate_size, V vocab_size,
// L layers:
//   attention  q_proj h x ad, k_proj and v_proj h x kd each, o_proj ad x h (+ Qwen2's q, k, v
//              biases ad + 2kd; + Qwen3's q_norm and k_norm, d each)
//   MLP        gate_proj, up_proj h x f, down_proj f x h: 3hf
//   norms      input_layernorm and post_attention_layernorm, h each; the final norm h
//   embedding  embed_tokens V x h; lm_head V x h unless tie_word_embeddings
// The sums were done in Python (the expressions below, evaluated by hand-written script, not by
// ppsim), and each total is also checked against its model card's rounded figure.
int64_t Attention(int64_t h, int64_t a, int64_t k, int64_t d) {
  return h * a * d + 2 * h * k * d + a * d * h;
}
int64_t Dense(int64_t layers, int64_t per_layer, int64_t h, int64_t vocab, bool tied) {
  return layers * per_layer + vocab * h + (tied ? 0 : vocab * h) + h;
}

// The card's figure is the count rounded or truncated at its last digit (Qwen's cards truncate:
// 7,615,616,512 is "7.61B"): "8.03B" holds 8.025e9 up to 8.04e9.
void ExpectRounded(int64_t count, double card, double unit) {
  EXPECT_GE(static_cast<double>(count), card - unit / 2) << count << " vs " << card;
  EXPECT_LT(static_cast<double>(count), card + unit) << count << " vs " << card;
}

TEST(HfConfig, Llama31_8B) {
  // h 4096, a 32, k 8, d 128, f 14336, V 128256, L 32, untied.
  const TransformerSpec s = Read("llama-3.1-8b.json");
  const int64_t h = 4096, f = 14336;
  const int64_t layer = Attention(h, 32, 8, 128) + 3 * h * f + 2 * h;
  EXPECT_EQ(s.TotalParameters(), Dense(32, layer, h, 128256, false));
  EXPECT_EQ(s.TotalParameters(), 8030261248);
  ExpectRounded(s.TotalParameters(), 8.03e9, 0.01e9);  // card: 8.03B params (safetensors)
  EXPECT_TRUE(s.swiglu);
  EXPECT_TRUE(s.rmsnorm);
  EXPECT_FALSE(s.tied_embeddings);
  // rope_scaling.original_max_position_embeddings, not max_position_embeddings 131072.
  EXPECT_EQ(s.seq_len, 8192);
  EXPECT_EQ(s.name, "llama-3.1-8b.json");
}

TEST(HfConfig, Llama31_70B) {
  const TransformerSpec s = Read("llama-3.1-70b.json");
  const int64_t h = 8192, f = 28672;
  const int64_t layer = Attention(h, 64, 8, 128) + 3 * h * f + 2 * h;
  EXPECT_EQ(s.TotalParameters(), Dense(80, layer, h, 128256, false));
  EXPECT_EQ(s.TotalParameters(), 70553706496);
  ExpectRounded(s.TotalParameters(), 70.6e9, 0.1e9);  // card: 70.6B
}

TEST(HfConfig, Llama32_3BTiedWithHeadDim) {
  // h 3072, a 24, k 8, head_dim 128 (= 3072 / 24), f 8192, L 28, tied: no lm_head.
  const TransformerSpec s = Read("llama-3.2-3b.json");
  const int64_t h = 3072, f = 8192;
  const int64_t layer = Attention(h, 24, 8, 128) + 3 * h * f + 2 * h;
  EXPECT_EQ(s.TotalParameters(), Dense(28, layer, h, 128256, true));
  EXPECT_EQ(s.TotalParameters(), 3212749824);
  ExpectRounded(s.TotalParameters(), 3.21e9, 0.01e9);  // card: 3.21B
  EXPECT_TRUE(s.tied_embeddings);
}

TEST(HfConfig, MistralNemoHeadsNarrowerThanHidden) {
  // h 5120 but a d = 32 x 128 = 4096: q_proj 5120 x 4096, o_proj 4096 x 5120.
  const TransformerSpec s = Read("mistral-nemo-12b.json");
  const int64_t h = 5120, f = 14336;
  const int64_t layer = Attention(h, 32, 8, 128) + 3 * h * f + 2 * h;
  EXPECT_EQ(s.TotalParameters(), Dense(40, layer, h, 131072, false));
  EXPECT_EQ(s.TotalParameters(), 12247782400);
  ExpectRounded(s.TotalParameters(), 12e9, 1e9);  // card: "12B"
  EXPECT_EQ(s.head_dim, 128);
  EXPECT_EQ(AttentionWidthsOf(s).query, 4096);
  EXPECT_EQ(s.seq_len, 128000);  // max_position_embeddings (no rope_scaling)
}

TEST(HfConfig, Qwen25_7BCountsQkvBiases) {
  // Qwen2Attention: q, k, v with biases (ad + 2kd = 3584 + 1024), o without.
  const TransformerSpec s = Read("qwen2.5-7b.json");
  const int64_t h = 3584, f = 18944;
  const int64_t layer = Attention(h, 28, 4, 128) + (3584 + 2 * 512) + 3 * h * f + 2 * h;
  EXPECT_EQ(s.TotalParameters(), Dense(28, layer, h, 152064, false));
  EXPECT_EQ(s.TotalParameters(), 7615616512);
  ExpectRounded(s.TotalParameters(), 7.61e9, 0.01e9);  // card: 7.61B
  EXPECT_TRUE(s.qkv_bias);
}

TEST(HfConfig, Qwen3_8BCountsQkNorms) {
  // Qwen3Attention: q_norm and k_norm RMSNorm(head_dim) each.
  const TransformerSpec s = Read("qwen3-8b.json");
  const int64_t h = 4096, f = 12288;
  const int64_t layer = Attention(h, 32, 8, 128) + 2 * 128 + 3 * h * f + 2 * h;
  EXPECT_EQ(s.TotalParameters(), Dense(36, layer, h, 151936, false));
  EXPECT_EQ(s.TotalParameters(), 8190735360);
  ExpectRounded(s.TotalParameters(), 8.2e9, 0.1e9);  // card: 8.2B
  EXPECT_TRUE(s.qk_norm);
  EXPECT_EQ(s.seq_len, 40960);
}

TEST(HfConfig, Qwen3_4BHeadsWiderThanHidden) {
  // h 2560 but a d = 32 x 128 = 4096; tied.
  const TransformerSpec s = Read("qwen3-4b.json");
  const int64_t h = 2560, f = 9728;
  const int64_t layer = Attention(h, 32, 8, 128) + 2 * 128 + 3 * h * f + 2 * h;
  EXPECT_EQ(s.TotalParameters(), Dense(36, layer, h, 151936, true));
  EXPECT_EQ(s.TotalParameters(), 4022468096);
  ExpectRounded(s.TotalParameters(), 4.0e9, 0.1e9);  // card: 4.0B
}

TEST(HfConfig, Qwen3_30B_A3B) {
  // Every layer MoE (decoder_sparse_step 1, mlp_only_layers []): gate 128 x h, 128 experts of
  // 3 h 768; a token uses 8.
  const TransformerSpec s = Read("qwen3-30b-a3b.json");
  const int64_t h = 2048, fe = 768;
  const int64_t shared = Attention(h, 32, 4, 128) + 2 * 128 + 2 * h + 128 * h;
  EXPECT_EQ(s.TotalParameters(), Dense(48, shared + 128 * 3 * h * fe, h, 151936, false));
  EXPECT_EQ(s.ActivatedParameters(), Dense(48, shared + 8 * 3 * h * fe, h, 151936, false));
  EXPECT_EQ(s.TotalParameters(), 30532122624);
  EXPECT_EQ(s.ActivatedParameters(), 3353032704);
  ExpectRounded(s.TotalParameters(), 30.5e9, 0.1e9);     // card: 30.5B
  ExpectRounded(s.ActivatedParameters(), 3.3e9, 0.1e9);  // card: 3.3B activated
  EXPECT_EQ(s.first_dense_layers, 0);
}

TEST(HfConfig, Mixtral8x7B) {
  // MixtralSparseMoeBlock: gate 8 x h, 8 experts (w1, w2, w3: 3 h f), top-2.
  const TransformerSpec s = Read("mixtral-8x7b.json");
  const int64_t h = 4096, f = 14336;
  const int64_t shared = Attention(h, 32, 8, 128) + 2 * h + 8 * h;
  EXPECT_EQ(s.TotalParameters(), Dense(32, shared + 8 * 3 * h * f, h, 32000, false));
  EXPECT_EQ(s.ActivatedParameters(), Dense(32, shared + 2 * 3 * h * f, h, 32000, false));
  EXPECT_EQ(s.TotalParameters(), 46702792704);
  EXPECT_EQ(s.ActivatedParameters(), 12879925248);
  ExpectRounded(s.TotalParameters(), 46.7e9, 0.1e9);      // Mistral AI: 46.7B total
  ExpectRounded(s.ActivatedParameters(), 12.9e9, 0.1e9);  // and 12.9B per token
}

TEST(HfConfig, DeepSeekV3) {
  // MLA (q_a h x 1536 + its norm 1536, q_b 1536 x 128(128 + 64), kv_a h x (512 + 64) + its norm
  // 512, kv_b 512 x 128(128 + 128), o 128 x 128 x h), 2 norms; 3 dense layers (MLP of 18432);
  // 58 MoE layers: gate 256 x h and its e_score_correction_bias 256, 256 routed and 1 shared
  // expert of 3 h 2048, 8 routed per token.
  const TransformerSpec s = Read("deepseek-v3.json");
  const int64_t h = 7168;
  const int64_t attention =
      h * 1536 + 1536 + 1536 * 128 * 192 + h * 576 + 512 + 512 * 128 * 256 + 128 * 128 * h + 2 * h;
  const int64_t expert = 3 * h * 2048, router = 256 * h + 256;
  const int64_t dense = 3 * (attention + 3 * h * 18432);
  const int64_t outer = 2 * 129280 * h + h;
  EXPECT_EQ(s.TotalParameters(), dense + 58 * (attention + router + 257 * expert) + outer);
  EXPECT_EQ(s.ActivatedParameters(), dense + 58 * (attention + router + 9 * expert) + outer);
  EXPECT_EQ(s.TotalParameters(), 671026419200);
  EXPECT_EQ(s.ActivatedParameters(), 37552297472);
  ExpectRounded(s.TotalParameters(), 671e9, 1e9);     // card: 671B total
  ExpectRounded(s.ActivatedParameters(), 37e9, 1e9);  // and 37B activated
  EXPECT_EQ(s.seq_len, 4096);  // rope_scaling.original_max_position_embeddings
  // num_nextn_predict_layers 1: one MTP module (a MoE layer, eh_proj 2h x h, enorm, hnorm and
  // the final norm). The card's checkpoint is 685B, "671B main model + 14B MTP module"; this
  // module with its own copies of the embedding and head (2 x 129280 h, which ppsim shares with
  // the model) counts 13.46B, the total 684.49B.
  EXPECT_EQ(s.mtp_layers, 1);
  EXPECT_EQ(s.MtpParameters(), attention + router + 257 * expert + 2 * h * h + 3 * h);
  EXPECT_EQ(s.MtpParameters() + 2 * 129280 * h, 13'463'426'304);
}

TEST(HfConfig, NotesListIgnoredFields) {
  const TransformerSpec s = Read("qwen2.5-7b.json");
  ASSERT_EQ(s.notes.size(), 2u);
  EXPECT_EQ(s.notes[0],
            "default sequence length 131072 from max_position_embeddings (--seq-len overrides)");
  EXPECT_EQ(s.notes[1],
            "ignored (no effect on the cost): attention_dropout, bos_token_id, eos_token_id, "
            "initializer_range, max_window_layers, model_type, rms_norm_eps, rope_theta, "
            "sliding_window, torch_dtype, transformers_version, use_cache, use_mrope, "
            "use_sliding_window");
}

TEST(HfConfig, DetectsByContent) {
  EXPECT_TRUE(LooksLikeHfConfig(R"({"model_type": "llama"})"));
  EXPECT_TRUE(LooksLikeHfConfig("{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": "));
  EXPECT_FALSE(LooksLikeHfConfig(R"({"layers": 2, "hidden": 8})"));
  EXPECT_FALSE(LooksLikeHfConfig("layers: 2\n"));
}

const char* const kTiny =
    R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
        "max_position_embeddings": 256)";

TEST(HfConfig, Errors) {
  EXPECT_EQ(Error(R"({"architectures": ["GPT2LMHeadModel"]})"),
            "config.json: architectures: unknown architecture 'GPT2LMHeadModel'; valid: "
            "LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM, "
            "Qwen3ForCausalLM, Qwen3MoeForCausalLM, DeepseekV3ForCausalLM");
  EXPECT_EQ(Error(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 64})"),
            "config.json: intermediate_size: missing; give a whole number from 1 to 16777216\n"
            "config.json: num_hidden_layers: missing; give a whole number from 1 to 100000\n"
            "config.json: num_attention_heads: missing; give a whole number from 1 to 16777216\n"
            "config.json: vocab_size: missing; give a whole number from 1 to 16777216\n"
            "config.json: max_position_embeddings: missing; give a whole number from 1 to "
            "1073741824");
  EXPECT_EQ(Error(std::string(kTiny) + R"(, "num_key_value_heads": "2"})"),
            "config.json: num_key_value_heads: a string (\"2\"); give a whole number from 1 to "
            "16777216");
  EXPECT_EQ(Error(std::string(kTiny) + R"(, "hidden_size": 64.5})"),
            "config.json: hidden_size: a number with a fraction (64.5); give a whole number "
            "from 1 to 16777216");
  EXPECT_EQ(Error(std::string(kTiny) + R"(, "attention_bias": true, "hidden_act": "gelu"})"),
            "config.json: hidden_act: a string (\"gelu\") is not modelled (ppsim's gated MLP is "
            "SwiGLU); valid: \"silu\"\n"
            "config.json: attention_bias: true is not modelled (biases on the attention's "
            "output projection); valid: false");
  EXPECT_EQ(Error("{\"architectures\": [\"LlamaForCausalLM\"],\n  \"hidden_size\": "),
            "config.json:2:18: syntax error while parsing value - unexpected end of input; "
            "expected '[', '{', or a literal; a Hugging Face config.json is one JSON object");
  // A number beyond a double is nlohmann's out_of_range, not a parse error (a fuzzer found it).
  EXPECT_EQ(Error(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 1e99999})"),
            "config.json: number overflow parsing '1e99999'; a Hugging Face config.json is one "
            "JSON object");
}

TEST(HfConfig, ModelChecksSpeakTheConfigsNames) {
  // heads must divide hidden_size without head_dim; the message names the config's fields.
  EXPECT_EQ(Error(std::string(kTiny) + R"(, "num_attention_heads": 6})"),
            "config.json: num_attention_heads: 6 does not divide hidden 64");
  EXPECT_EQ(
      Error(std::string(kTiny) + R"(, "hidden_size": 16777216, "num_hidden_layers": 100000})"),
      "config.json: num_hidden_layers: the model's sizes allow up to 4.5e+20 parameters; "
      "counts are kept up to 2^60");
}

TEST(HfConfig, ExpertLayoutsPpsimCannotModel) {
  const std::string moe =
      R"({"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 64, "intermediate_size": 128,
          "num_hidden_layers": 4, "num_attention_heads": 4, "vocab_size": 100,
          "max_position_embeddings": 256, "num_experts": 4, "num_experts_per_tok": 2,
          "moe_intermediate_size": 32, )";
  EXPECT_EQ(Error(moe + R"("decoder_sparse_step": 2, "mlp_only_layers": [1]})"),
            "config.json: decoder_sparse_step: 2 interleaves dense and MoE layers; ppsim models "
            "the dense layers first only; valid: 1\n"
            "config.json: mlp_only_layers: [1] is not the first layers; ppsim models the dense "
            "layers first only; valid: [] or [0, 1, ..., k - 1]");
  TransformerSpec spec;
  ASSERT_TRUE(ReadHfConfig(moe + R"("mlp_only_layers": [0, 1]})", "c.json", &spec).ok());
  EXPECT_EQ(spec.first_dense_layers, 2);
  EXPECT_EQ(spec.MoeLayers(), 2);
}

}  // namespace
}  // namespace ppsim
