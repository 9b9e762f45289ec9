#include "models/transformer.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

#include "base/embedded.h"
#include "base/escape.h"
#include "base/names.h"
#include "models/layer_parts.h"
#include "models/offload.h"
#include "models/op_costs.h"

namespace ppsim {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// MHA's channels per head: head_dim, or hidden / heads when it is 0 (a spec built in code).
int64_t HeadDim(const TransformerSpec& spec) {
  return spec.head_dim > 0 ? spec.head_dim : spec.hidden / spec.heads;
}
// Width of the K (or V) projection: head size times KV heads (MHA).
int64_t KvWidth(const TransformerSpec& spec) { return HeadDim(spec) * spec.kv_heads; }
// Width of the queries and of the context (the output projection's input): a d (MHA).
int64_t QueryWidth(const TransformerSpec& spec) { return HeadDim(spec) * spec.heads; }

// LayerNorm has a weight and a bias, RMSNorm a weight.
int64_t FinalNormParameters(const TransformerSpec& spec) {
  return spec.rmsnorm ? spec.hidden : 2 * spec.hidden;
}

// A layer's attention: MHA's Q, K, V and output projections (GPT: with their biases), or MLA's
// projections and its two latent RMSNorms (no biases): q_a h x q_lora + q_lora, q_b
// q_lora x a(nope + rope) (or one h x a(nope + rope) without q_lora), kv_a h x (kv_lora + rope) +
// kv_lora, kv_b kv_lora x a(nope + v), output a v x h.
int64_t AttentionParameters(const TransformerSpec& spec) {
  const int64_t h = spec.hidden;
  if (spec.mla) {
    const int64_t a = spec.heads;
    const int64_t qk_width = a * (spec.qk_nope_head_dim + spec.qk_rope_head_dim);
    const int64_t q = spec.q_lora_rank > 0
                          ? h * spec.q_lora_rank + spec.q_lora_rank + spec.q_lora_rank * qk_width
                          : h * qk_width;
    const int64_t kv = h * (spec.kv_lora_rank + spec.qk_rope_head_dim) + spec.kv_lora_rank +
                       spec.kv_lora_rank * a * (spec.qk_nope_head_dim + spec.v_head_dim);
    return q + kv + a * spec.v_head_dim * h;
  }
  // MHA: Q h x a d, K and V h x k d, output a d x h; GPT's biases on all four, or a SwiGLU
  // layer's Q, K and V biases (Qwen2); Qwen3's RMSNorms of a head's queries and keys, d each.
  const int64_t kv = KvWidth(spec);
  const int64_t q = QueryWidth(spec);
  const int64_t matrices = h * (q + 2 * kv) + q * h;
  if (!spec.swiglu) return matrices + (q + 2 * kv) + h;
  return matrices + (spec.qkv_bias ? q + 2 * kv : 0) + (spec.qk_norm ? 2 * HeadDim(spec) : 0);
}

// An MLP of f channels: SwiGLU's gate, up and down 3hf; GELU's two matmuls with biases.
int64_t MlpParameters(const TransformerSpec& spec, int64_t f) {
  const int64_t h = spec.hidden;
  return spec.swiglu ? 3 * h * f : 2 * h * f + f + h;
}

// The two norms of a layer (before the attention and before the MLP).
int64_t LayerNormParameters(const TransformerSpec& spec) { return 2 * FinalNormParameters(spec); }

constexpr NamedValue<Dtype> kDtypes[] = {
    {"bf16", Dtype::kBf16},
    {"fp16", Dtype::kFp16},
    {"fp8", Dtype::kFp8},
    {"mxfp8", Dtype::kMxfp8},
};
constexpr NamedValue<Recompute> kRecomputes[] = {
    {"none", Recompute::kNone},
    {"selective", Recompute::kSelective},
    {"full", Recompute::kFull},
};

// The layer's matmul FLOPs on one GPU: the weight matmuls of its attention part (a MoE layer's
// router included) and of its MLP part, and the attention core.
struct LayerFlops {
  double attention_weights = 0;
  double mlp_weights = 0;
  double weights = 0;  // both
  double attention = 0;
  // Parts that modules recompute: a MoE layer's router and shared experts, MLA's q_b and kv_b.
  double router = 0, shared_mlp = 0, mla_up = 0;
};

// The MLP's FLOPs per token: 4hf (GELU) or 6hf (SwiGLU).
double MlpFlopsPerToken(const TransformerSpec& spec, int64_t f) {
  return (spec.swiglu ? 6 : 4) * static_cast<double>(spec.hidden) * static_cast<double>(f);
}

LayerFlops LayerMatmulFlops(const TransformerSpec& spec, const TrainingSetup& setup,
                            LayerKind kind) {
  const double b = static_cast<double>(setup.microbatch_size);
  const double s = static_cast<double>(setup.seq_len);
  const double h = static_cast<double>(spec.hidden);
  const double f = static_cast<double>(spec.ffn_hidden);
  const double kv = static_cast<double>(KvWidth(spec));
  const double q = static_cast<double>(QueryWidth(spec));
  const double t = static_cast<double>(setup.layout.tp);
  double attention_weights = 0, up_projections = 0, router = 0, shared = 0;
  if (spec.mla) {
    // q_a and q_b (or one query projection), kv_a, kv_b, output: 2bs x their parameters.
    const double a = spec.heads;
    const double qk = a * static_cast<double>(spec.qk_nope_head_dim + spec.qk_rope_head_dim);
    const double q_lora = static_cast<double>(spec.q_lora_rank);
    const double kv_lora = static_cast<double>(spec.kv_lora_rank);
    const double queries = spec.q_lora_rank > 0 ? h * q_lora + q_lora * qk : h * qk;
    const double kv_a = h * (kv_lora + static_cast<double>(spec.qk_rope_head_dim));
    const double kv_b = kv_lora * a * static_cast<double>(spec.qk_nope_head_dim + spec.v_head_dim);
    const double output = a * static_cast<double>(spec.v_head_dim) * h;
    attention_weights = 2 * b * s * (queries + kv_a + kv_b + output);
    up_projections = 2 * b * s * ((spec.q_lora_rank > 0 ? q_lora * qk : 0) + kv_b);
  } else {
    const double qkv = 2 * b * s * h * (q + 2 * kv);
    const double projection = 2 * b * s * q * h;
    attention_weights = qkv + projection;
  }
  double mlp = 0;
  if (kind == LayerKind::kMoe) {
    // The router's logits, then k routed and the shared experts per token.
    router = 2 * b * s * h * spec.experts;
    attention_weights += router;
    mlp = b * s * (spec.experts_per_token + spec.shared_experts) *
          MlpFlopsPerToken(spec, spec.expert_ffn_hidden);
    shared = b * s * spec.shared_experts * MlpFlopsPerToken(spec, spec.expert_ffn_hidden);
  } else {
    mlp = (spec.swiglu ? 6 : 4) * b * s * h * f;
  }
  // Context parallelism: each GPU has s/c of the tokens (queries) and computes 1/c of the scores.
  const double c = static_cast<double>(setup.layout.cp);
  LayerFlops flops;
  flops.attention_weights = attention_weights / t / c;
  flops.mlp_weights = mlp / t / c;
  flops.weights = (attention_weights + mlp) / t / c;
  flops.router = router / t / c;
  flops.shared_mlp = shared / t / c;
  flops.mla_up = up_projections / t / c;
  // Scores (QK^T) and context (PV) over all s^2 pairs: 2bs^2 a(d_qk + d_v), 4bs^2 ad for MHA.
  if (spec.mla) {
    const AttentionWidths w = AttentionWidthsOf(spec);
    flops.attention = 2 * b * s * s * static_cast<double>(w.query + w.context) / t / c;
  } else {
    flops.attention = 4 * b * s * s * q / t / c;
  }
  return flops;
}

// Activation bytes of one layer on one GPU; the "replicated" parts are divided by t only with
// sequence parallelism. Dimensions are divided by t before multiplying, so the results are exact
// (t divides heads, kv_heads and ffn_hidden, hence hidden and the KV width); a MoE layer's expert
// part is of the T_g = sb/t tokens its GPU routes (exact when t divides them).
struct LayerActivations {
  int64_t stored = 0;       // M_B
  int64_t weight_grad = 0;  // M_W
};

// Bytes of `elements` values that a Transformer Engine linear layer saves as its input: 16-bit,
// FP8's 1 byte, or MXFP8's 1 byte plus an E8M0 scale per 32 values.
int64_t SavedBytes(Dtype dtype, int64_t elements) {
  switch (dtype) {
    case Dtype::kFp8:
      return elements;
    case Dtype::kMxfp8:
      return elements + CeilDiv(elements, 32);
    default:
      return 2 * elements;
  }
}

}  // namespace

LayerParts LayerActivationParts(const TransformerSpec& spec, const TrainingSetup& setup,
                                LayerKind kind) {
  const int64_t t = setup.layout.tp;
  const int64_t sb = setup.seq_len / setup.layout.cp * setup.microbatch_size;  // this GPU's tokens
  const int64_t q_t = QueryWidth(spec) / t;
  const int64_t kv_t = KvWidth(spec) / t;
  const int64_t f_t = spec.ffn_hidden / t;
  const int64_t a_t = spec.heads / t;
  const int64_t h = spec.hidden;
  const bool gpt = !spec.swiglu;
  const bool moe = kind == LayerKind::kMoe;
  auto saved = [&](int64_t elements) { return SavedBytes(setup.dtype, elements); };
  // Elements of the replicated region (norms, MLA's latents): sb/t tokens with sequence
  // parallelism; of the tensor-parallel region, sb tokens of per-GPU widths; of the routed
  // experts, T_g = sb/t tokens.
  auto rep = [&](int64_t per_token) {
    return setup.sequence_parallel ? sb * per_token / t : sb * per_token;
  };
  auto routed = [&](int64_t per_token) { return sb * per_token / t; };
  LayerParts p;
  p.norm_inputs = 2 * rep(2 * h);
  // Norm 1's output is QKV's (MLA: the down projections') FP8 input (TE's LayerNormLinear);
  // norm 2's is fc1's, except in a MoE layer, where the 16-bit router saves it too.
  p.attn_norm_output = saved(rep(h));
  p.norm_outputs = p.attn_norm_output + (moe ? 2 * rep(h) : saved(rep(h)));
  p.dropout_masks = gpt ? rep(2 * h) : 0;
  int64_t w_sharded = 0;  // per token: QKV's (q_b's, kv_b's) output gradients
  int64_t context_t = q_t;
  if (spec.mla) {
    const int64_t qk_t = a_t * (spec.qk_nope_head_dim + spec.qk_rope_head_dim);
    context_t = a_t * spec.v_head_dim;
    p.qkv = sb * (2 * qk_t + 2 * qk_t + 2 * context_t);
    // q_a's and kv_a's outputs (16-bit, their norms' inputs) and their norms' outputs (q_b's and
    // kv_b's FP8 inputs).
    p.latents = 2 * rep(spec.q_lora_rank + spec.kv_lora_rank + spec.qk_rope_head_dim) +
                saved(rep(spec.q_lora_rank)) + saved(rep(spec.kv_lora_rank));
    w_sharded = 2 * qk_t + 2 * a_t * (spec.qk_nope_head_dim + spec.v_head_dim);
  } else {
    p.qkv = sb * (2 * q_t + 4 * kv_t);
    w_sharded = 2 * (q_t + 2 * kv_t);
  }
  p.context = saved(sb * context_t);
  // Softmax output (2), and for GPT the attention dropout's mask (1) and output (2), per score.
  p.scores = setup.flash_attention ? 0 : (gpt ? 5 : 2) * a_t * setup.seq_len * sb;
  // An MLP's intermediates: GELU's input (16-bit) or SwiGLU's gate and up outputs, and fc2's FP8
  // input (the activation's output); for W, fc1's output gradient and fc2's input.
  auto mlp_bytes = [&](int64_t f_elements) {
    return (gpt ? 2 : 4) * f_elements + saved(f_elements);
  };
  auto mlp_w = [&](int64_t f_elements) { return (gpt ? 2 : 4) * f_elements + saved(f_elements); };
  int64_t weight_mlp = 0;
  if (moe) {
    const int64_t k = spec.experts_per_token, e = spec.experts, f_e = spec.expert_ffn_hidden;
    const int64_t f_s = spec.shared_experts * f_e;
    // The router's fp32 probabilities and 1-byte map 5E; the permuted tokens (grouped fc1's FP8
    // input) kh; the experts' intermediates; the unpermutation's 16-bit input 2kh.
    p.moe_act = saved(routed(k * f_e));
    p.expert_fc1_input = saved(routed(k * h));
    p.moe_act_input = (gpt ? 2 : 4) * routed(k * f_e);
    p.shared = f_s > 0 ? mlp_bytes(sb * f_s / t) : 0;
    p.moe = routed(5 * e) + saved(routed(k * h)) + (gpt ? 2 : 4) * routed(k * f_e) + p.moe_act +
            2 * routed(k * h) + p.shared;
    weight_mlp = routed(2 * e) + saved(routed(k * h)) + (gpt ? 2 : 4) * routed(k * f_e) +
                 saved(routed(k * f_e)) + 2 * routed(k * h) + (f_s > 0 ? mlp_w(sb * f_s / t) : 0);
  } else {
    p.mlp = mlp_bytes(sb * f_t);
    weight_mlp = mlp_w(sb * f_t);
  }
  // For W: the inputs of QKV (MLA: the down projections') and of the MLP's first matmul(s) and
  // the output gradients of the projection and of the last MLP matmul (replicated without
  // sequence parallelism); the output gradients of QKV and of the first MLP matmul(s) and the
  // inputs of the projection and of the last MLP matmul (sharded); MLA's latents as many bytes as
  // they keep (q_a's and kv_a's output gradients, q_b's and kv_b's inputs).
  p.weight_grad = 2 * saved(rep(h)) + 2 * rep(2 * h) + p.latents + sb * w_sharded +
                  saved(sb * context_t) + weight_mlp;
  return p;
}

namespace {

LayerActivations LayerActivationBytes(const TransformerSpec& spec, const TrainingSetup& setup,
                                      LayerKind kind) {
  const LayerParts p = LayerActivationParts(spec, setup, kind);
  LayerActivations bytes;
  if (setup.recompute == Recompute::kFull) {
    // Only the layer's input, which is sharded along the sequence with sequence parallelism.
    const int64_t sb = setup.seq_len / setup.layout.cp * setup.microbatch_size;
    bytes.stored = 2 * sb * (setup.sequence_parallel ? spec.hidden / setup.layout.tp : spec.hidden);
  } else {
    const uint32_t m = RecomputeModulesOf(setup);
    auto kept = [&](uint32_t module, int64_t part) { return (m & module) ? 0 : part; };
    int64_t moe = p.moe;
    if (m & kRecomputeMoe) {
      moe = 0;
    } else {
      moe -= (m & kRecomputeMoeAct ? p.moe_act : 0) + (m & kRecomputeSharedExperts ? p.shared : 0);
    }
    bytes.stored = p.norm_inputs + kept(kRecomputeLayernorm, p.norm_outputs) + p.dropout_masks +
                   p.latents + kept(kRecomputeMlaUpProj, p.qkv) + p.context +
                   kept(kRecomputeCoreAttn, p.scores) + kept(kRecomputeMlp, p.mlp) + moe;
  }
  // What W needs is kept from I (which rematerializes what a recompute dropped) until W; with full
  // recompute it is capped at M_B, which undercounts.
  bytes.weight_grad = std::min(p.weight_grad, bytes.stored);
  return bytes;
}

// A stage's largest FSDP unit on one GPU of its tensor-parallel group (torchtitan's
// fully_shard units: the embedding, each layer — a MoE layer with its experts —, the final norm
// with the head).
int64_t FsdpUnitParameters(const TransformerSpec& spec, const StageModel& stage, int64_t t) {
  int64_t unit = stage.layers > stage.moe_layers ? CeilDiv(spec.LayerParameters(), t) : 0;
  if (stage.moe_layers > 0) unit = std::max(unit, CeilDiv(spec.MoeLayerParameters(), t));
  if (stage.embedding) unit = std::max(unit, CeilDiv(spec.EmbeddingParameters(), t));
  if (stage.lm_head) {
    int64_t head = FinalNormParameters(spec) + spec.HeadParameters();
    if (spec.tied_embeddings && !stage.embedding) head += spec.vocab * spec.hidden;
    unit = std::max(unit, CeilDiv(head, t));
  }
  return unit;
}

// ZeRO-2 and ZeRO-3 (setup.zero_stage 2, 3): a stage's weights, gradients and optimizer state
// on one GPU once the gradients (2) or everything (3) are sharded over the n GPUs holding the same
// parameters (dp x cp; ZeRO-3: S x cp, S = dp_shard). `unit_parameters` is the stage's largest
// FSDP unit's (a layer, the embedding, or the final norm with the head) on this GPU. With the
// recipe's R = w + g bytes per parameter (weights w, gradients g) and S sharded (RecipeBytes):
//   ZeRO-2: weights w P; gradients g P / n plus the bucket in flight (--grad-bucket; without it
//     the stage's gradients are one bucket: g P in all); optimizer S P / n.
//   ZeRO-3 (FSDP2): all of R + S sharded: weights w P / n, gradients g P / n, optimizer S P / n
//     (torchtitan's recipe 8 + 8, fp32 parameters and gradients and Adam's moments, is FSDP2's 16
//     bytes; Megatron's 6 + 12 keeps its 16-bit copy too); in flight, the 16-bit parameters
//     gathered (2 bytes: FSDP2's param_dtype), two units (the one computing and the one
//     prefetched) with reshard-after-forward, the whole stage without; and the unsharded
//     gradients (g bytes: the reduce dtype), one unit's with reshard-after-forward
//     (reduce-scattered unit by unit), the stage's without (FSDP2 keeps them while gradient sync is
//     off until the last microbatch, as torchtitan runs it with a pipeline).
constexpr int64_t kGatheredBytesPerParameter = 2;  // FSDP2's param_dtype bf16 (torchtitan's)

void ShardMemory(const TrainingSetup& setup, int64_t unit_parameters, StageModel* stage) {
  const ParamBytes bytes = RecipeBytes(setup);
  const int64_t g = GradientBytesPerParameter(setup);
  const int64_t w = bytes.replicated - g;
  const int64_t p = stage->parameters;
  const int64_t cp = setup.layout.cp;
  stage->gradient_sync_bytes = g * p;
  if (setup.zero_stage == 2) {
    const int64_t n = int64_t{setup.layout.dp} * cp;
    const int64_t bucket = setup.grad_bucket_bytes > 0 ? setup.grad_bucket_bytes : g * p;
    stage->gradient_bytes = std::min(g * p, CeilDiv(g * p, n) + bucket);
    stage->optimizer_state_bytes = CeilDiv(bytes.sharded * p, n);
  } else {
    const int64_t s = setup.dp_shard > 0 ? setup.dp_shard : setup.layout.dp;
    const int64_t n = s * cp;
    const bool reshard = setup.ReshardAfterForward();
    const int64_t gathered = reshard ? std::min(p, 2 * unit_parameters) : p;
    const int64_t unsharded_gradients = reshard ? std::min(p, unit_parameters) : p;
    stage->weight_bytes = CeilDiv(w * p, n) + kGatheredBytesPerParameter * gathered;
    stage->gradient_bytes = CeilDiv(g * p, n) + g * unsharded_gradients;
    stage->optimizer_state_bytes = CeilDiv(bytes.sharded * p, n);
    stage->fsdp_units = stage->layers + (stage->embedding ? 1 : 0) + (stage->lm_head ? 1 : 0);
    stage->fsdp_gather_bytes = kGatheredBytesPerParameter * p;
  }
  stage->static_bytes = stage->weight_bytes + stage->gradient_bytes + stage->optimizer_state_bytes;
  // Adam's step on the shard (models/transformer.h StageModel::optimizer_step_bytes); ZeRO-3 writes
  // no 16-bit copy (the next forward gathers one from the fp32 shard): 2 bytes less.
  const int64_t n = setup.zero_stage == 2
                        ? int64_t{setup.layout.dp} * cp
                        : (setup.dp_shard > 0 ? setup.dp_shard : setup.layout.dp) * cp;
  stage->optimizer_step_bytes =
      ((setup.fp32_grads ? 30 : 36) - (setup.zero_stage == 3 ? 2 : 0)) * CeilDiv(p, n);
}

}  // namespace

int64_t TransformerSpec::LayerParameters() const {
  return AttentionParameters(*this) + MlpParameters(*this, ffn_hidden) + LayerNormParameters(*this);
}

int64_t TransformerSpec::EmbeddingParameters() const {
  return vocab * hidden + (swiglu ? 0 : seq_len * hidden);
}

int64_t TransformerSpec::HeadParameters() const { return tied_embeddings ? 0 : vocab * hidden; }

int64_t TransformerSpec::TotalParameters() const {
  return DenseLayers() * LayerParameters() + MoeLayers() * MoeLayerParameters() +
         EmbeddingParameters() + HeadParameters() + FinalNormParameters(*this);
}

int64_t TransformerSpec::ExpertParameters() const {
  return moe() ? MlpParameters(*this, expert_ffn_hidden) : 0;
}

int64_t TransformerSpec::RouterParameters() const {
  return moe() ? int64_t{experts} * hidden + (router_bias ? experts : 0) : 0;
}

int64_t TransformerSpec::MoeLayerParameters() const {
  if (!moe()) return 0;
  return AttentionParameters(*this) + LayerNormParameters(*this) + RouterParameters() +
         (int64_t{experts} + shared_experts) * ExpertParameters();
}

int64_t TransformerSpec::MoeLayerActivatedParameters() const {
  if (!moe()) return 0;
  return AttentionParameters(*this) + LayerNormParameters(*this) + RouterParameters() +
         (int64_t{experts_per_token} + shared_experts) * ExpertParameters();
}

int64_t TransformerSpec::ActivatedParameters() const {
  return DenseLayers() * LayerParameters() + MoeLayers() * MoeLayerActivatedParameters() +
         EmbeddingParameters() + HeadParameters() + FinalNormParameters(*this);
}

int64_t TransformerSpec::ActivatedParametersWithoutEmbedding() const {
  return ActivatedParameters() - EmbeddingParameters();
}

AttentionWidths AttentionWidthsOf(const TransformerSpec& spec) {
  AttentionWidths w;
  if (spec.mla) {
    w.qk_head_dim = spec.qk_nope_head_dim + spec.qk_rope_head_dim;
    w.v_head_dim = spec.v_head_dim;
    w.query = w.key = spec.heads * w.qk_head_dim;
    w.value = w.context = spec.heads * w.v_head_dim;
  } else {
    w.qk_head_dim = w.v_head_dim = HeadDim(spec);
    w.query = w.context = QueryWidth(spec);
    w.key = w.value = KvWidth(spec);
  }
  return w;
}

Status ParseDtype(std::string_view what, std::string_view text, Dtype* dtype) {
  return ParseNamed(kDtypes, "value", what, text, dtype, /*ignore_case=*/true);
}

Status ParseRecompute(std::string_view what, std::string_view text, Recompute* recompute) {
  return ParseNamed(kRecomputes, "value", what, text, recompute, /*ignore_case=*/true);
}

std::string_view DtypeName(Dtype dtype) { return NameOf(kDtypes, dtype); }

std::string_view RecomputeName(Recompute recompute) { return NameOf(kRecomputes, recompute); }

int64_t DtypeBytes(Dtype dtype) { return IsFp8(dtype) ? 1 : 2; }

int64_t GradientBytesPerParameter(const TrainingSetup& setup) { return setup.fp32_grads ? 4 : 2; }

ParamBytes RecipeBytes(const TrainingSetup& setup) {
  ParamBytes bytes = setup.fp32_grads ? ParamBytes{6, 12} : ParamBytes{4, 16};
  if (setup.replicated_bytes_per_param >= 0) bytes.replicated = setup.replicated_bytes_per_param;
  if (setup.sharded_bytes_per_param >= 0) bytes.sharded = setup.sharded_bytes_per_param;
  return bytes;
}

Status CheckTrainingSetup(const TransformerSpec& spec, const TrainingSetup& setup,
                          const Locator& where) {
  RETURN_IF_ERROR(CheckRecomputeSetup(spec, setup, where));
  RETURN_IF_ERROR(CheckOffloadSetup(spec, setup, where));
  auto at_least_one = [&](std::string_view field, int64_t value) {
    return where.Invalid(field, "must be at least 1; got " + std::to_string(value));
  };
  if (setup.seq_len < 1) return at_least_one("seq_len", setup.seq_len);
  if (setup.microbatch_size < 1) return at_least_one("microbatch_size", setup.microbatch_size);
  if (setup.layout.tp < 1) return at_least_one("tp", setup.layout.tp);
  if (setup.layout.dp < 1) return at_least_one("dp", setup.layout.dp);
  if (setup.layout.cp < 1) return at_least_one("cp", setup.layout.cp);
  if (setup.layout.cp > 1 && setup.seq_len % (2 * setup.layout.cp) != 0) {
    return where.Invalid("cp", std::to_string(setup.layout.cp) + " GPUs hold 2 x " +
                                   std::to_string(setup.layout.cp) + " chunks of each sequence; " +
                                   std::to_string(2 * setup.layout.cp) + " does not divide the " +
                                   "sequence length " + std::to_string(setup.seq_len));
  }
  RETURN_IF_ERROR(CheckCpCommType(spec, setup, where));
  if (setup.layout.cp > 1 && !setup.flash_attention) {
    return where.Invalid("cp",
                         "context parallelism runs ring attention on flash attention "
                         "(Transformer Engine); drop " +
                             where.Name("flash_attention") + " off");
  }
  RETURN_IF_ERROR(CheckSharding(spec, setup, where));
  if (RecipeBytes(setup).replicated < GradientBytesPerParameter(setup)) {
    // The replicated bytes hold each GPU's gradients (what the all-reduce moves) and weights.
    return where.Invalid(
        "bytes_per_param",
        std::to_string(RecipeBytes(setup).replicated) + " bytes per parameter on every GPU " +
            "cannot hold the " + std::to_string(GradientBytesPerParameter(setup)) + "-byte " +
            (setup.fp32_grads ? "fp32" : "16-bit") + " gradients; give R of at least " +
            std::to_string(GradientBytesPerParameter(setup)) + " (R = weights + gradients)");
  }
  auto divides = [&](const char* what, int64_t count) {
    return where.Invalid("tp", std::to_string(setup.layout.tp) + " does not divide the " +
                                   std::to_string(count) + " " + what + " of " + spec.name);
  };
  // Sizes are counted in 64-bit integers: the largest one — a layer's attention scores and
  // activations, the head's fp32 logits, for all layers — must stay well inside them.
  const double sb = static_cast<double>(setup.seq_len) * static_cast<double>(setup.microbatch_size);
  double layer_bytes =
      sb * (64.0 * spec.hidden + 5.0 * spec.heads * static_cast<double>(setup.seq_len)) +
      sb * 4.0 * spec.vocab;
  if (spec.moe()) {
    // A MoE layer's routed copies of the tokens and the experts' intermediates.
    const double k = spec.experts_per_token;
    layer_bytes +=
        sb * (5.0 * spec.experts + 4.0 * k * static_cast<double>(spec.hidden) +
              6.0 * (k + spec.shared_experts) * static_cast<double>(spec.expert_ffn_hidden));
  }
  if (const AttentionWidths w = AttentionWidthsOf(spec); spec.mla || w.query != spec.hidden) {
    layer_bytes +=
        sb * 8.0 * static_cast<double>(w.query + w.context + spec.q_lora_rank + spec.kv_lora_rank);
  }
  constexpr double kMaxCountedBytes = 1152921504606846976.0;  // 2^60, 1 EiB
  if (layer_bytes * (spec.layers + 2) > kMaxCountedBytes) {
    std::string fields;
    auto blame = [&](std::string_view field, int64_t value) {
      fields += (fields.empty() ? where.Where(field) : ", " + where.Name(field)) + " " +
                std::to_string(value);
    };
    if (setup.seq_len != spec.seq_len) blame("seq_len", setup.seq_len);
    if (setup.microbatch_size > 1) blame("microbatch_size", setup.microbatch_size);
    if (fields.empty()) fields = where.Where("model") + " " + spec.name;
    char text[160];
    std::snprintf(text, sizeof(text),
                  ": a microbatch of %.3g tokens needs about %.2g bytes of activations in %s; "
                  "sizes are counted up to 2^60 bytes (1 EiB)",
                  sb, layer_bytes * spec.layers, spec.name.c_str());
    return Status::InvalidInput(fields + text);
  }
  if (spec.heads % setup.layout.tp != 0) return divides("heads", spec.heads);
  if (spec.kv_heads % setup.layout.tp != 0) return divides("KV heads", spec.kv_heads);
  if (spec.ffn_hidden % setup.layout.tp != 0) return divides("FFN channels", spec.ffn_hidden);
  const int64_t shared_ffn = int64_t{spec.shared_experts} * spec.expert_ffn_hidden;
  if (shared_ffn % setup.layout.tp != 0) return divides("shared-expert FFN channels", shared_ffn);
  if (spec.moe() && setup.layout.tp > 1 && !setup.sequence_parallel) {
    // Megatron-LM's argument check (megatron/training/arguments.py): "When using MoE and tensor
    // parallelism, sequence parallelism must be used."
    return where.Invalid("tp", std::to_string(setup.layout.tp) + " with the experts of " +
                                   spec.name + " needs " + where.Name("sequence_parallel") +
                                   " (Megatron-core's MoE layers require it with tensor "
                                   "parallelism)");
  }
  if (setup.layout.ep < 1) return at_least_one("ep", setup.layout.ep);
  if (setup.layout.ep > 1) {
    if (!spec.moe()) {
      return where.Invalid("ep", std::to_string(setup.layout.ep) + " shards routed experts; " +
                                     spec.name + " has none (valid: 1)");
    }
    // The degrees that divide both the experts and the GPUs holding a stage, for messages.
    const int64_t gpus = int64_t{setup.layout.dp} * setup.layout.tp * setup.layout.cp;
    std::string valid;
    for (int64_t e = 1; e <= std::min<int64_t>(spec.experts, gpus); ++e) {
      if (spec.experts % e == 0 && gpus % e == 0) {
        valid += (valid.empty() ? "" : ", ") + std::to_string(e);
      }
    }
    if (spec.experts % setup.layout.ep != 0) {
      return where.Invalid("ep", std::to_string(setup.layout.ep) + " does not divide the " +
                                     std::to_string(spec.experts) + " experts of " + spec.name +
                                     "; valid with these GPUs: " + valid);
    }
    if (gpus % setup.layout.ep != 0) {
      return where.Invalid(
          "ep", std::to_string(setup.layout.ep) + " does not divide the dp x tp x cp = " +
                    std::to_string(gpus) + " GPUs that hold a stage (" +
                    "expert-parallel groups are taken from them); valid: " + valid);
    }
  }
  return Status();
}

namespace {

// The model FLOPs the selective modules recompute in I: core_attn the attention core, mlp a dense
// layer's MLP, moe a MoE layer's router and experts (shared_experts its shared experts alone),
// mla_up_proj q_b and kv_b; layernorm and moe_act are element-wise (0 FLOPs).
double SelectiveRecomputeFlops(const TrainingSetup& setup, LayerKind kind,
                               const LayerFlops& flops) {
  const uint32_t m = RecomputeModulesOf(setup);
  double sum = 0;
  if (m & kRecomputeCoreAttn) sum += flops.attention;
  if (m & kRecomputeMlaUpProj) sum += flops.mla_up;
  if (kind == LayerKind::kDense) return sum + (m & kRecomputeMlp ? flops.mlp_weights : 0);
  if (m & kRecomputeMoe) return sum + flops.router + flops.mlp_weights;
  return sum + (m & kRecomputeSharedExperts ? flops.shared_mlp : 0);
}

}  // namespace

LayerCosts TransformerLayerCosts(const TransformerSpec& spec, const TrainingSetup& setup,
                                 LayerKind kind) {
  const LayerFlops flops = LayerMatmulFlops(spec, setup, kind);
  LayerCosts costs;
  costs.forward_flops = flops.weights + flops.attention;
  costs.backward_input_flops = flops.weights + 2 * flops.attention;
  costs.backward_weight_flops = flops.weights;
  switch (setup.recompute) {
    case Recompute::kNone:
      break;
    case Recompute::kSelective:
      costs.backward_input_flops += SelectiveRecomputeFlops(setup, kind, flops);
      break;
    case Recompute::kFull:
      costs.backward_input_flops += costs.forward_flops;
      break;
  }
  const LayerActivations bytes = LayerActivationBytes(spec, setup, kind);
  costs.activation_bytes = bytes.stored;
  costs.activation_w_bytes = bytes.weight_grad;
  return costs;
}

LayerPartFlops TransformerLayerPartFlops(const TransformerSpec& spec, const TrainingSetup& setup,
                                         LayerKind kind) {
  const LayerFlops flops = LayerMatmulFlops(spec, setup, kind);
  LayerPartFlops parts;
  parts.forward_attention = flops.attention_weights + flops.attention;
  parts.forward_mlp = flops.mlp_weights;
  // Selective modules: the router and MLA's up projections are in the attention part.
  const double recomputed = SelectiveRecomputeFlops(setup, kind, flops);
  const uint32_t m = RecomputeModulesOf(setup);
  const double attention_recomputed =
      (m & kRecomputeCoreAttn ? flops.attention : 0) +
      (m & kRecomputeMlaUpProj ? flops.mla_up : 0) +
      (kind == LayerKind::kMoe && (m & kRecomputeMoe) ? flops.router : 0);
  parts.input_attention = flops.attention_weights + 2 * flops.attention + attention_recomputed;
  parts.input_mlp = flops.mlp_weights + recomputed - attention_recomputed;
  parts.weight_attention = flops.attention_weights;
  parts.weight_mlp = flops.mlp_weights;
  return parts;
}

Status SplitLayers(const TransformerSpec& spec, int32_t num_stages, const LayerSplit& split,
                   const Locator& where, std::vector<int32_t>* layers_per_stage) {
  layers_per_stage->clear();
  if (num_stages < 1) {
    return where.Invalid("pp", "must be at least 1 stage; got " + std::to_string(num_stages));
  }
  if (!split.layers_per_stage.empty()) {
    const std::vector<int32_t>& given = split.layers_per_stage;
    if (split.embedding_as_layer || split.loss_as_layer) {
      return where.Invalid("layers_per_stage",
                           "an explicit split cannot be combined with counting the embedding or "
                           "the loss as a layer");
    }
    if (static_cast<int64_t>(given.size()) != num_stages) {
      return where.Invalid("layers_per_stage", std::to_string(given.size()) + " entries for " +
                                                   std::to_string(num_stages) +
                                                   " stages; give one per stage");
    }
    int64_t sum = 0;
    for (size_t s = 0; s < given.size(); ++s) {
      if (given[s] < 0) {
        return where.Invalid("layers_per_stage", "stage " + std::to_string(s) + " has " +
                                                     std::to_string(given[s]) +
                                                     " layers; must be at least 0");
      }
      sum += given[s];
    }
    if (sum != spec.layers) {
      return where.Invalid("layers_per_stage", "the entries sum to " + std::to_string(sum) +
                                                   "; the model has " +
                                                   std::to_string(spec.layers) + " layers");
    }
    *layers_per_stage = given;
    return Status();
  }
  const int64_t slots =
      int64_t{spec.layers} + (split.embedding_as_layer ? 1 : 0) + (split.loss_as_layer ? 1 : 0);
  if (slots < num_stages) {
    std::string extra;
    if (split.embedding_as_layer && split.loss_as_layer) {
      extra = " plus the embedding and the loss";
    } else if (split.embedding_as_layer) {
      extra = " plus the embedding";
    } else if (split.loss_as_layer) {
      extra = " plus the loss";
    }
    return where.Invalid("pp", std::to_string(num_stages) + " stages for the " +
                                   std::to_string(spec.layers) + " layers of " + spec.name + extra +
                                   "; each stage needs at least one");
  }
  const int64_t base = slots / num_stages;
  const int64_t extra = slots % num_stages;
  for (int32_t s = 0; s < num_stages; ++s) {
    layers_per_stage->push_back(static_cast<int32_t>(base + (s < extra ? 1 : 0)));
  }
  if (split.embedding_as_layer) --layers_per_stage->front();
  if (split.loss_as_layer) --layers_per_stage->back();
  return Status();
}

namespace {
// A stage's context-parallel bytes per GPU (CpCommType): `qkv` and `out` bytes of Q, K, V and of
// the output on this GPU, `kv_block` its K and V, for `layers` layers of which `recomputed` run
// their attention again in the backward (its forward exchanges again).
void CpLayerBytes(const TrainingSetup& setup, int64_t qkv, int64_t out, int64_t kv_block,
                  int64_t recomputed, int32_t layers, StageModel* stage) {
  const int64_t c = setup.layout.cp;
  if (setup.cp_comm_type == CpCommType::kA2aP2p) {
    CpHierarchicalBytes(setup, qkv + out, kv_block, recomputed, layers, stage);
    return;
  }
  int64_t forward = (c - 1) * kv_block;  // p2p and allgather: c - 1 blocks each way
  int64_t backward = 2 * forward;        // K and V again, and their gradients
  if (setup.cp_comm_type == CpCommType::kA2a) {
    // What leaves the GPU: (c - 1) / c of Q, K, V and of O (forward), of dO, dQ, dK, dV.
    forward = (qkv + out) * (c - 1) / c;
    backward = forward;
  }
  stage->cp_forward_bytes = layers * forward;
  stage->cp_backward_bytes = layers * backward + recomputed * forward;
}

// Adds `count` layers of `layer`'s costs to a stage.
void AddLayers(const LayerCosts& layer, int64_t count, StageModel* stage) {
  const double times = static_cast<double>(count);
  stage->forward_flops += times * layer.forward_flops;
  stage->backward_input_flops += times * layer.backward_input_flops;
  stage->backward_weight_flops += times * layer.backward_weight_flops;
  stage->activation_bytes += count * layer.activation_bytes;
  stage->activation_w_bytes += count * layer.activation_w_bytes;
}

// A layer's costs as a stage's layers take them: with the setup's recompute, and (full recompute
// of part of the layers, block) keeping everything.
struct StageLayerCosts {
  LayerCosts layer, moe_layer, kept_layer, kept_moe_layer;
};

StageLayerCosts StageLayerCostsOf(const TransformerSpec& spec, const TrainingSetup& setup) {
  StageLayerCosts c;
  c.layer = TransformerLayerCosts(spec, setup);
  if (spec.moe()) c.moe_layer = TransformerLayerCosts(spec, setup, LayerKind::kMoe);
  TrainingSetup keep_all = setup;
  keep_all.recompute = Recompute::kNone;
  keep_all.recompute_method = RecomputeMethod::kAll;
  keep_all.recompute_num_layers = 0;
  c.kept_layer = TransformerLayerCosts(spec, keep_all);
  if (spec.moe()) c.kept_moe_layer = TransformerLayerCosts(spec, keep_all, LayerKind::kMoe);
  return c;
}

// Adds a stage's layers (stage->layers, of them stage->moe_layers MoE) and sets which are
// recomputed fully: all with full (every layer, uniform), the stage's first N with block (its
// dense layers come first); uniform keeps one input per group of N.
void AddStageLayers(const StageLayerCosts& c, const TrainingSetup& setup, StageModel* stage) {
  const bool full = setup.recompute == Recompute::kFull;
  const int64_t n = stage->layers - stage->moe_layers;
  const int64_t m = stage->moe_layers;
  int64_t full_layers = full ? stage->layers : 0;
  if (full && setup.recompute_method == RecomputeMethod::kBlock) {
    full_layers = std::min<int64_t>(setup.recompute_num_layers, stage->layers);
  }
  stage->recomputed_layers = static_cast<int32_t>(full_layers);
  stage->recomputed_moe_layers = static_cast<int32_t>(full_layers - std::min(full_layers, n));
  const int64_t full_dense = full_layers - stage->recomputed_moe_layers;
  AddLayers(c.layer, full ? full_dense : n, stage);
  AddLayers(c.moe_layer, full ? stage->recomputed_moe_layers : m, stage);
  if (full) {
    AddLayers(c.kept_layer, n - full_dense, stage);
    AddLayers(c.kept_moe_layer, m - stage->recomputed_moe_layers, stage);
  }
  if (full && setup.recompute_method == RecomputeMethod::kUniform) {
    const int64_t groups = CeilDiv(stage->layers, setup.recompute_num_layers);
    stage->activation_bytes = groups * c.layer.activation_bytes;
    stage->activation_w_bytes = std::min(stage->activation_w_bytes, stage->activation_bytes);
  }
}

}  // namespace

std::vector<StageModel> BuildStageModels(const TransformerSpec& spec, const TrainingSetup& setup,
                                         const std::vector<int32_t>& layers_per_stage) {
  const int64_t t = setup.layout.tp;
  const int64_t sb = setup.seq_len / setup.layout.cp * setup.microbatch_size;  // this GPU's tokens
  const int64_t h_per_gpu = setup.sequence_parallel ? spec.hidden / t : spec.hidden;
  const int64_t vocab_shard = CeilDiv(spec.vocab, t);
  const StageLayerCosts costs = StageLayerCostsOf(spec, setup);
  const uint32_t modules = RecomputeModulesOf(setup);
  const double head_flops = 2.0 * static_cast<double>(sb) * static_cast<double>(spec.hidden) *
                            static_cast<double>(vocab_shard);
  const int32_t num_stages = static_cast<int32_t>(layers_per_stage.size());
  // A MoE layer's parameters: those shared over t like a dense layer's (attention, norms, shared
  // experts), the router (whole on each GPU) and this GPU's E/e routed experts.
  const int64_t moe_shared_parameters = spec.moe()
                                            ? spec.MoeLayerParameters() - spec.RouterParameters() -
                                                  int64_t{spec.experts} * spec.ExpertParameters()
                                            : 0;
  const int64_t local_experts = spec.experts / setup.layout.ep;

  std::vector<StageModel> stages;
  int32_t first_layer = 0;  // the stage's first global layer
  for (int32_t s = 0; s < num_stages; ++s) {
    StageModel stage;
    // The last stage's MTP modules' layers follow the model's (layers [L, L + D)).
    stage.layers = layers_per_stage[s] + (s == num_stages - 1 ? spec.mtp_layers : 0);
    const int32_t dense_end = spec.moe() ? spec.first_dense_layers : spec.layers + spec.mtp_layers;
    stage.moe_layers = stage.layers - std::clamp(dense_end - first_layer, int32_t{0}, stage.layers);
    first_layer += stage.layers;
    stage.embedding = s == 0;
    stage.lm_head = s == num_stages - 1;
    const int64_t n = stage.layers - stage.moe_layers;  // dense layers
    const int64_t m = stage.moe_layers;
    AddStageLayers(costs, setup, &stage);
    const int64_t full_dense = stage.recomputed_layers - stage.recomputed_moe_layers;
    int64_t parameters = n * spec.LayerParameters() + m * moe_shared_parameters;
    if (stage.embedding) {
      parameters += spec.EmbeddingParameters();
      // GPT's embedding dropout mask (1 byte per element); the lookup keeps nothing else.
      if (!spec.swiglu) stage.activation_bytes += sb * h_per_gpu;
    }
    if (stage.lm_head) {
      parameters += FinalNormParameters(spec) + spec.HeadParameters();
      if (spec.tied_embeddings && !stage.embedding) parameters += spec.vocab * spec.hidden;
      stage.forward_flops += head_flops;
      stage.backward_input_flops += head_flops;
      stage.backward_weight_flops += head_flops;
      stage.activation_bytes += 4 * sb * h_per_gpu + 4 * sb * vocab_shard;
      stage.activation_w_bytes += 2 * sb * h_per_gpu + 2 * sb * vocab_shard;
      AddMtpCosts(spec, setup, sb, h_per_gpu, vocab_shard, &stage, &parameters);
    }
    stage.expert_parameters = m * local_experts * spec.ExpertParameters();
    stage.parameters =
        CeilDiv(parameters, t) + m * spec.RouterParameters() + stage.expert_parameters;
    const int64_t dense_parameters = stage.parameters - stage.expert_parameters;
    // Megatron's distributed optimizer shards over the data-parallel group with its context-
    // parallel GPUs (they hold the same parameters); the routed experts' state over the GPUs
    // holding the same experts, the expert-data-parallel group dp x tp x cp / e.
    const int64_t optimizer_shards =
        setup.zero_stage == 1 ? int64_t{setup.layout.dp} * setup.layout.cp : 1;
    const int64_t expert_shards =
        setup.zero_stage == 1
            ? int64_t{setup.layout.dp} * setup.layout.tp * setup.layout.cp / setup.layout.ep
            : 1;
    const ParamBytes bytes = RecipeBytes(setup);
    // The one place the static bytes are split: the replicated bytes hold the gradients (what the
    // data-parallel all-reduce moves) and the weights; the sharded bytes are the optimizer's
    // (CheckTrainingSetup: the replicated bytes are at least the gradients').
    const int64_t gradient_bytes_per_parameter = GradientBytesPerParameter(setup);
    stage.gradient_bytes = gradient_bytes_per_parameter * stage.parameters;
    // Experts sharded as dense parameters are reduced with them (ExpertsShardAsDense).
    stage.expert_gradient_bytes =
        ExpertsShardAsDense(setup) ? 0 : gradient_bytes_per_parameter * stage.expert_parameters;
    stage.weight_bytes = (bytes.replicated - gradient_bytes_per_parameter) * stage.parameters;
    stage.optimizer_state_bytes = CeilDiv(bytes.sharded * dense_parameters, optimizer_shards) +
                                  CeilDiv(bytes.sharded * stage.expert_parameters, expert_shards);
    stage.static_bytes = stage.weight_bytes + stage.gradient_bytes + stage.optimizer_state_bytes;
    // The rank's whole boundary tensor (all its GPUs' tokens).
    stage.message_bytes = sb * setup.layout.cp * spec.hidden * DtypeBytes(setup.dtype);
    stage.optimizer_step_bytes =
        (setup.fp32_grads ? 30 : 36) * (CeilDiv(dense_parameters, optimizer_shards) +
                                        CeilDiv(stage.expert_parameters, expert_shards));
    if (setup.zero_stage >= 2) ShardMemory(setup, FsdpUnitParameters(spec, stage, t), &stage);
    if (t > 1) {
      const int32_t all_reduce = 2 * (setup.layout.tp - 1);
      const int32_t half = setup.layout.tp - 1;  // a reduce-scatter or an all-gather
      // A layer's collective pairs: its attention's and its MLP's; a MoE layer's routed experts
      // have none (each GPU routes its own sequence-parallel tokens, expert tensor parallelism
      // 1), its shared experts are tensor-parallel like a dense MLP.
      const int32_t pairs =
          2 * static_cast<int32_t>(n) + (spec.shared_experts > 0 ? 2 : 1) * stage.moe_layers;
      // Recomputation repeats the forward's collectives: a fully recomputed layer's pairs, the
      // MLP's with the mlp module, the shared experts' with moe or shared_experts.
      const int32_t moe_pairs = spec.shared_experts > 0 ? 2 : 1;
      int32_t recomputed_pairs =
          2 * static_cast<int32_t>(full_dense) + moe_pairs * stage.recomputed_moe_layers;
      if (modules & kRecomputeMlp) recomputed_pairs += static_cast<int32_t>(n);
      if ((modules & (kRecomputeMoe | kRecomputeSharedExperts)) && spec.shared_experts > 0) {
        recomputed_pairs += stage.moe_layers;
      }
      stage.tp_forward_steps = pairs * all_reduce;
      stage.tp_backward_steps = (pairs + recomputed_pairs) * all_reduce;
      // Sequence parallelism keeps only the shard of a column-parallel layer's input and gathers
      // it again in the backward for the weight gradient: QKV's and the MLP's.
      if (setup.sequence_parallel) stage.tp_backward_steps += pairs * half;
      // The vocabulary-parallel embedding's output: all-reduced, or reduce-scattered (and its
      // gradient all-gathered) with sequence parallelism. The head's input: all-reduced in the
      // backward, or all-gathered in F and reduce-scattered in I with sequence parallelism, which
      // also gathers it again for the head's weight gradient.
      if (stage.embedding) {
        stage.tp_forward_steps += setup.sequence_parallel ? half : all_reduce;
        stage.tp_backward_steps += setup.sequence_parallel ? half : 0;
      }
      if (stage.lm_head) {
        stage.tp_forward_steps += setup.sequence_parallel ? half : 0;
        stage.tp_backward_steps += setup.sequence_parallel ? 2 * half : all_reduce;
      }
      stage.tp_step_bytes = CeilDiv(sb * spec.hidden * 2, t);
    }
    if (setup.layout.cp > 1) {
      // K and V of this GPU's tokens.
      const AttentionWidths w = AttentionWidthsOf(spec);
      const int64_t kv_block = 2 * sb * (w.key / t) + 2 * sb * (w.value / t);
      // The attention runs again in the layers recomputed fully or with core_attn.
      const int64_t recomputed =
          (modules & kRecomputeCoreAttn) ? stage.layers : stage.recomputed_layers;
      CpLayerBytes(setup, 2 * sb * (w.query / t) + kv_block, 2 * sb * (w.context / t), kv_block,
                   recomputed, stage.layers, &stage);
    }
    if (m > 0) {
      // T_g k h: this GPU's T_g = sb/t tokens, each to k experts.
      const int64_t routed = sb * spec.experts_per_token * spec.hidden / t;
      stage.dispatch_bytes = routed * DtypeBytes(setup.dtype);
      stage.combine_bytes = routed * 2;
    }
    stages.push_back(stage);
  }
  return stages;
}

namespace {

// ZeRO-2 and 3: the bytes reduced and, with ZeRO-3, the FSDP units' gathers (StageCosts).
void AddShardedCosts(const StageModel& stage, const TrainingSetup& setup, StageCosts* costs) {
  costs->gradient_sync_bytes.push_back(stage.gradient_sync_bytes);
  if (setup.zero_stage != 3) return;
  costs->fsdp_units.push_back(stage.fsdp_units);
  costs->fsdp_gather_bytes.push_back(stage.fsdp_gather_bytes);
  costs->fsdp_reshard = setup.ReshardAfterForward();
  costs->fsdp_shard = setup.dp_shard > 0 && setup.dp_shard < setup.layout.dp ? setup.dp_shard : 0;
}

}  // namespace

StageCosts ModelStageCosts(const std::vector<StageModel>& stages,
                           const std::vector<PassSeconds>& seconds, const TrainingSetup& setup) {
  StageCosts costs;
  const ParallelLayout& layout = setup.layout;
  bool experts = false;
  for (const StageModel& stage : stages) experts = experts || stage.expert_gradient_bytes > 0;
  for (size_t k = 0; k < stages.size(); ++k) {
    const StageModel& stage = stages[k];
    costs.forward_s.push_back(seconds[k].forward_s);
    costs.backward_input_s.push_back(seconds[k].backward_input_s);
    costs.backward_weight_s.push_back(seconds[k].backward_weight_s);
    costs.backward_s.push_back(seconds[k].backward_input_s + seconds[k].backward_weight_s);
    costs.activation_bytes.push_back(stage.activation_bytes);
    costs.activation_w_bytes.push_back(stage.activation_w_bytes);
    costs.message_bytes.push_back(stage.message_bytes);
    costs.static_bytes.push_back(stage.static_bytes);
    costs.weight_bytes.push_back(stage.weight_bytes);
    costs.gradient_bytes.push_back(stage.gradient_bytes);
    costs.optimizer_state_bytes.push_back(stage.optimizer_state_bytes);
    costs.optimizer_step_bytes.push_back(stage.optimizer_step_bytes);
    if (experts) costs.expert_gradient_bytes.push_back(stage.expert_gradient_bytes);
    if (setup.zero_stage >= 2 && layout.dp * layout.cp > 1) AddShardedCosts(stage, setup, &costs);
    if ((setup.zero_stage == 1 || setup.zero_stage == 2) && layout.dp * layout.cp > 1) {
      // The dense parameters: the experts' are reduced over their own groups (sim/gradient_sync.h).
      costs.param_gather_bytes.push_back(
          2 * (stage.parameters - (ExpertsShardAsDense(setup) ? 0 : stage.expert_parameters)));
    }
    if (layout.tp > 1) {
      costs.tp_forward_steps.push_back(stage.tp_forward_steps);
      costs.tp_backward_steps.push_back(stage.tp_backward_steps);
      costs.tp_step_bytes.push_back(stage.tp_step_bytes);
    }
    if (layout.cp > 1) {
      costs.cp_forward_bytes.push_back(stage.cp_forward_bytes);
      costs.cp_backward_bytes.push_back(stage.cp_backward_bytes);
      costs.cp_serial =
          setup.cp_comm_type != CpCommType::kP2p && setup.cp_comm_type != CpCommType::kA2aP2p;
      AddCpA2aCosts(setup, stage, &costs);
    }
    if (layout.ep > 1) {
      const MoeLayerSeconds& parts = seconds[k].moe_layer;
      MoeStage moe;
      moe.layers = stage.moe_layers;
      if (moe.layers > 0) {
        moe.layer_seconds = parts;
        // Block recompute of part of the MoE layers: their forward again sits in I's rest,
        // without its all-to-alls.
        moe.full_recompute =
            setup.recompute == Recompute::kFull && stage.recomputed_moe_layers == stage.moe_layers;
        moe.dispatch_bytes = stage.dispatch_bytes;
        moe.combine_bytes = stage.combine_bytes;
      }
      costs.moe.push_back(moe);
    }
  }
  return costs;
}

}  // namespace ppsim
