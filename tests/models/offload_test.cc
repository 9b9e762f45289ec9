// Megatron's fine-grained activation offloading modules (models/offload.h): the bytes each module
// moves per layer against closed forms worked out by hand from the shapes, and the checks.
#include "models/offload.h"

#include <gtest/gtest.h>

#include <string>

#include "base/flag_locator.h"
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

// The same with 8 routed experts of f_e 768, 2 per token, layers 2.. MoE.
TransformerSpec SmallMoe() {
  TransformerSpec spec = Small();
  spec.name = "small-moe";
  spec.experts = 8;
  spec.experts_per_token = 2;
  spec.expert_ffn_hidden = 768;
  spec.first_dense_layers = 2;
  return spec;
}

// s 2048, b 1, t 2 with sequence parallelism: sb = 2048 tokens; T_r = sb/t = 1024 tokens in the
// replicated region; per GPU Q and context 512 wide, K and V 256 each; T_g = 1024 routed tokens.
TrainingSetup SmallSetup(const std::string& modules) {
  TrainingSetup setup;
  setup.seq_len = 2048;
  setup.microbatch_size = 1;
  setup.layout.tp = 2;
  setup.sequence_parallel = true;
  EXPECT_TRUE(ParseOffloadModules("--offload-modules", modules, &setup.offload_modules).ok());
  return setup;
}

int64_t Bytes(const TransformerSpec& spec, const std::string& modules,
              LayerKind kind = LayerKind::kDense) {
  const TrainingSetup setup = SmallSetup(modules);
  EXPECT_TRUE(CheckTrainingSetup(spec, setup, FlagLocator()).ok());
  return LayerOffloadBytes(spec, setup, kind);
}

TEST(OffloadBytes, EachModuleMovesItsInput) {
  const TransformerSpec spec = Small();
  // attn_norm, mlp_norm: the residual stream, 2 bytes x T_r x h = 2 x 1024 x 1024.
  EXPECT_EQ(Bytes(spec, "attn_norm"), 2 * 1024 * 1024);
  EXPECT_EQ(Bytes(spec, "mlp_norm"), 2 * 1024 * 1024);
  // qkv_linear: norm 1's 16-bit output, 2 x T_r x h.
  EXPECT_EQ(Bytes(spec, "qkv_linear"), 2 * 1024 * 1024);
  // core_attn: Q 2 x 2048 x 512, K and V 2 x 2048 x 256 each.
  EXPECT_EQ(Bytes(spec, "core_attn"), 2 * 2048 * 512 + 4 * 2048 * 256);
  // attn_proj (with core_attn): the context, 2 x 2048 x 512, more.
  EXPECT_EQ(Bytes(spec, "core_attn,attn_proj"), 2 * 2048 * 512 + 4 * 2048 * 256 + 2 * 2048 * 512);
  // All five: 4 x 2 MiB + 4 MiB.
  EXPECT_EQ(Bytes(spec, "attn_norm qkv_linear core_attn attn_proj mlp_norm"), 12582912);
  TrainingSetup none = SmallSetup("core_attn");
  none.offload_modules = 0;
  EXPECT_EQ(LayerOffloadBytes(spec, none, LayerKind::kDense), 0);
}

TEST(OffloadBytes, ExpertModulesOnMoeLayersOnly) {
  const TransformerSpec spec = SmallMoe();
  // expert_fc1: the permuted tokens, 2 bytes x T_g k h = 2 x 1024 x 2 x 1024.
  EXPECT_EQ(Bytes(spec, "expert_fc1", LayerKind::kMoe), 2 * 1024 * 2 * 1024);
  // moe_act: SwiGLU's gate and up outputs, 4 bytes x T_g k f_e = 4 x 1024 x 2 x 768.
  EXPECT_EQ(Bytes(spec, "moe_act", LayerKind::kMoe), 4 * 1024 * 2 * 768);
  // A dense layer of the model has neither.
  EXPECT_EQ(Bytes(spec, "expert_fc1,moe_act", LayerKind::kDense), 0);
  // A stage of 3 layers, 1 of them MoE: mlp_norm on all three, expert_fc1 on one.
  const TrainingSetup setup = SmallSetup("mlp_norm,expert_fc1");
  StageModel stage;
  stage.layers = 3;
  stage.moe_layers = 1;
  EXPECT_EQ(StageOffloadBytes(spec, setup, stage), 3 * 2 * 1024 * 1024 + 2 * 1024 * 2 * 1024);
}

TEST(OffloadBytes, Fp8LinearInputsAreOneByte) {
  TrainingSetup setup = SmallSetup("qkv_linear,attn_norm");
  setup.dtype = Dtype::kFp8;
  // qkv_linear: 1 byte x T_r x h; attn_norm stays 16-bit (the residual stream).
  EXPECT_EQ(LayerOffloadBytes(Small(), setup, LayerKind::kDense), 1024 * 1024 + 2 * 1024 * 1024);
}

std::string ParseError(const std::string& text) {
  uint32_t modules = 0;
  return ParseOffloadModules("--offload-modules", text, &modules).message();
}

std::string CheckError(const TransformerSpec& spec, const TrainingSetup& setup) {
  return CheckTrainingSetup(spec, setup, FlagLocator()).message();
}

TEST(OffloadModules, NamesAreMegatrons) {
  uint32_t modules = 0;
  ASSERT_TRUE(ParseOffloadModules("--offload-modules", "moe_act, attn_norm", &modules).ok());
  EXPECT_EQ(modules, kOffloadMoeAct | kOffloadAttnNorm);
  EXPECT_EQ(OffloadModulesName(modules), "attn_norm,moe_act");
  EXPECT_EQ(ParseError("core_atn"),
            "--offload-modules: unknown module 'core_atn'; valid: attn_norm, qkv_linear, "
            "core_attn, attn_proj, mlp_norm, expert_fc1, moe_act (did you mean core_attn?)");
  EXPECT_EQ(ParseError("moe_act,moe_act"),
            "--offload-modules: moe_act is listed twice; give each module once");
  EXPECT_EQ(ParseError(" , "),
            "--offload-modules: empty; give one or more of attn_norm, qkv_linear, core_attn, "
            "attn_proj, mlp_norm, expert_fc1, moe_act");
}

TEST(OffloadModules, RefusedCombinations) {
  EXPECT_EQ(CheckError(Small(), SmallSetup("attn_proj")),
            "--offload-modules: attn_proj needs core_attn too, as Megatron requires (attn_proj's "
            "input is core_attn's output, which core_attn's backward needs)");
  EXPECT_EQ(CheckError(Small(), SmallSetup("expert_fc1")),
            "--offload-modules: expert_fc1 needs a model with experts; small is dense (valid: "
            "attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm)");
  TrainingSetup moe = SmallSetup("moe_act");
  moe.recompute = Recompute::kSelective;
  moe.recompute_modules = kRecomputeMoe;
  EXPECT_EQ(CheckError(SmallMoe(), moe),
            "--offload-modules: moe_act cannot be offloaded while the moe recompute module drops "
            "the whole MoE layer's activations, as Megatron asserts; remove one of them");
  TrainingSetup norm = SmallSetup("qkv_linear");
  norm.recompute = Recompute::kSelective;
  norm.recompute_modules = kRecomputeLayernorm;
  EXPECT_EQ(CheckError(Small(), norm),
            "--offload-modules: qkv_linear moves norm 1's output, which the layernorm recompute "
            "module drops; remove one of them");
  TrainingSetup full = SmallSetup("core_attn");
  full.recompute = Recompute::kFull;
  EXPECT_EQ(CheckError(Small(), full),
            "--offload-modules: offloads module inputs that --recompute full does not keep (a "
            "layer keeps its input only); valid: recompute none or selective");
  // Offloading core_attn's inputs while recomputing its scores is fine (different bytes).
  TrainingSetup attn = SmallSetup("core_attn");
  attn.recompute = Recompute::kSelective;
  EXPECT_TRUE(CheckTrainingSetup(Small(), attn, FlagLocator()).ok());
}

}  // namespace
}  // namespace ppsim
