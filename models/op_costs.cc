#include "models/op_costs.h"

#include <algorithm>
#include <cmath>

#include "base/names.h"

namespace ppsim {
namespace {

constexpr NamedValue<OpPass> kOpPasses[] = {
    {"F", OpPass::kForward}, {"I", OpPass::kBackwardInput}, {"W", OpPass::kBackwardWeight}};
constexpr NamedValue<KernelKind> kKernelKinds[] = {{"matmul", KernelKind::kMatmul},
                                                   {"attention", KernelKind::kAttention},
                                                   {"memory", KernelKind::kMemory}};

constexpr double kTileLong = 256;  // cuBLAS's 256 x 128 tile (see the header)
constexpr double kTileShort = 128;

// The ops being listed. Names get the current prefix ("recompute "), and every op the current
// pass and part tags: a recomputed forward has the forward's shapes and counts in I.
class OpList {
 public:
  explicit OpList(const TrainingSetup& setup)
      : in_bytes_(static_cast<double>(DtypeBytes(setup.dtype))),
        grad_accumulate_bytes_(setup.fp32_grads ? 8 : 4),
        fp8_(IsFp8(setup.dtype)),
        tp_(setup.layout.tp > 1) {}

  void Memory(const std::string& name, double bytes) {
    ModelOp& op = Add(name, KernelKind::kMemory);
    op.bytes = bytes;
  }

  // A GEMM of batch x (m x n) results over k: 16-bit (or fp8) operands, a 16-bit result.
  void Gemm(const std::string& name, double m, double n, double k, double batch = 1) {
    ModelOp& op = Add(name, KernelKind::kMatmul);
    const double in_bytes = OperandBytes();
    op.sixteen_bit = sixteen_bit_ && fp8_;
    // Shapes in whole rows (an expert's share of the routed tokens, m, may be fractional).
    op.m = static_cast<int64_t>(std::ceil(m));
    op.n = static_cast<int64_t>(std::ceil(n));
    op.k = static_cast<int64_t>(std::ceil(k));
    op.batch = static_cast<int64_t>(batch);
    op.flops = 2 * m * n * k * batch;
    op.bytes = batch * (in_bytes * (m * k + k * n) + 2 * m * n);
  }

  // Transformer Engine's cast-transpose of `elements` 16-bit values into FP8 and its transpose
  // (read 2, write 1 + 1 bytes each), in an fp8 run (see the header); nothing otherwise.
  void Fp8Cast(const std::string& name, double elements) {
    if (fp8_) Memory(name + " fp8 cast", 4 * elements);
  }

  // A weight GEMM Y[T x n] = X[T x k] W[k x n] in `direction`: its forward (kForward), input
  // gradient dX = dY W^T (kBackwardInput) or weight gradient dW = X^T dY (kBackwardWeight). A
  // grouped GEMM (a MoE layer's experts) has `batch` of them, each of its own weight.
  void Weight(const std::string& name, OpPass direction, double tokens, double n, double k,
              double batch = 1) {
    switch (direction) {
      case OpPass::kForward:
        Gemm(name, tokens, n, k, batch);
        break;
      case OpPass::kBackwardInput:
        // The output gradient dY, quantized for the FP8 dgrad (and, transposed, the wgrad).
        if (!sixteen_bit_) Fp8Cast(name + " grad", batch * tokens * n);
        Gemm(name, tokens, k, n, batch);
        break;
      case OpPass::kBackwardWeight:
        Gemm(name, k, n, tokens, batch);
        // Reads X and dY; accumulates into the main gradient instead of writing a result.
        ops_.back().bytes =
            batch * (OperandBytes() * tokens * (k + n) + grad_accumulate_bytes_ * k * n);
        break;
    }
  }

  // The next GEMMs are kept in 16 bits in an fp8 run (outside Transformer Engine's FP8 modules).
  void SixteenBit(bool on) { sixteen_bit_ = on; }
  // Bytes per GEMM operand element: the run's dtype's, or 2 for a GEMM kept in 16 bits.
  double OperandBytes() const { return sixteen_bit_ ? 2 : in_bytes_; }
  // Marks the last op a GEMM that TE's userbuffers overlap with a TP collective on 16 SMs
  // ('pipeline' or 'bulk'), when tp > 1.
  void TpOverlapped() { ops_.back().tp_overlapped = tp_; }

  void Attention(const std::string& name, double flops, double bytes) {
    ModelOp& op = Add(name, KernelKind::kAttention);
    op.flops = flops;
    op.bytes = bytes;
  }

  void Tag(OpPass pass, std::string prefix = "") {
    pass_ = pass;
    prefix_ = std::move(prefix);
  }
  void Part(LayerPart part) { part_ = part; }
  std::vector<ModelOp> Take() { return std::move(ops_); }

 private:
  ModelOp& Add(const std::string& name, KernelKind kind) {
    ModelOp& op = ops_.emplace_back();
    op.name = prefix_ + name;
    op.pass = pass_;
    op.kind = kind;
    op.part = part_;
    op.recompute = !prefix_.empty();
    return op;
  }

  double in_bytes_;
  double grad_accumulate_bytes_;
  bool fp8_;
  bool tp_;
  bool sixteen_bit_ = false;
  OpPass pass_ = OpPass::kForward;
  LayerPart part_ = LayerPart::kNone;
  std::string prefix_;
  std::vector<ModelOp> ops_;
};

// The model's sizes on one GPU, as doubles (their products overflow nothing).
struct Dims {
  // kv: the K (or V) width k d; q: the queries' and the context's a d (h unless head_dim is set).
  double b, s, tokens, tokens_r, t, cp, h, q, kv, f, heads, head_dim, vocab_shard;
  bool gpt;
  // Attention: queries' and keys' channels per head, values' (both head_dim for MHA).
  double qk_head, v_head;
  // MLA (see models/model.proto): latent ranks and the rotary channels per head.
  bool mla;
  double q_lora, kv_lora, rope;
  // MoE: the tokens this GPU routes (T_g: tokens_r, as the layer needs sequence parallelism with
  // t > 1), experts E, top-k, this GPU's E/e experts, an expert's FFN and the shared experts'.
  double routed_tokens, experts, top_k, local_experts, expert_f, shared_f;
};

Dims DimsOf(const TransformerSpec& spec, const TrainingSetup& setup) {
  Dims d;
  d.t = setup.layout.tp;
  d.cp = setup.layout.cp;
  d.b = static_cast<double>(setup.microbatch_size);
  d.s = static_cast<double>(setup.seq_len);
  d.tokens = d.b * d.s / setup.layout.cp;  // this GPU's tokens (context parallelism: s/c of each)
  d.tokens_r = setup.sequence_parallel ? d.tokens / d.t : d.tokens;
  d.h = static_cast<double>(spec.hidden);
  const AttentionWidths widths = AttentionWidthsOf(spec);
  d.q = static_cast<double>(widths.query);
  d.kv = static_cast<double>(widths.key);
  d.f = static_cast<double>(spec.ffn_hidden);
  d.heads = static_cast<double>(spec.heads / setup.layout.tp);
  d.head_dim = static_cast<double>(widths.qk_head_dim);
  d.vocab_shard = static_cast<double>((spec.vocab + setup.layout.tp - 1) / setup.layout.tp);
  d.gpt = !spec.swiglu;
  d.qk_head = static_cast<double>(widths.qk_head_dim);
  d.v_head = static_cast<double>(widths.v_head_dim);
  d.mla = spec.mla;
  d.q_lora = static_cast<double>(spec.q_lora_rank);
  d.kv_lora = static_cast<double>(spec.kv_lora_rank);
  d.rope = static_cast<double>(spec.qk_rope_head_dim);
  d.routed_tokens = d.tokens_r;
  d.experts = spec.experts;
  d.top_k = spec.experts_per_token;
  d.local_experts = spec.experts / setup.layout.ep;
  d.expert_f = static_cast<double>(spec.expert_ffn_hidden);
  d.shared_f = static_cast<double>(spec.shared_experts) * d.expert_f;
  return d;
}

// The attention core: its forward, or (backward) its backward.
void AttentionOps(const Dims& d, bool flash, bool backward, OpList* ops) {
  const double batch = d.b * d.heads;
  const double scores = batch * d.s * d.s;
  if (flash) {
    // With context parallelism each of the c GPUs computes 1/c of the causal scores. Per query-key
    // pair QK^T takes 2 d_qk FLOPs and PV 2 d_v; MLA's differ, MHA's are both the head size.
    double forward_flops = 0, qkvo = 0;
    if (d.mla) {
      forward_flops = batch * (d.qk_head + d.v_head) * d.s * (d.s + 1) / d.cp;
      qkvo = 2 * d.tokens * d.heads * (2 * d.qk_head + 2 * d.v_head);
    } else {
      forward_flops = 2 * batch * d.head_dim * d.s * (d.s + 1) / d.cp;
      qkvo = 2 * d.tokens * (2 * d.q + 2 * d.kv) / d.t;
    }
    if (backward) {
      ops->Attention("attention", 2.5 * forward_flops, 2 * qkvo);
    } else {
      ops->Attention("attention", forward_flops, qkvo);
    }
    return;
  }
  // Megatron's unfused attention (torch's baddbmm and bmm) is outside TE's FP8 modules.
  ops->SixteenBit(true);
  if (!backward) {
    ops->Gemm("attention scores", d.s, d.s, d.qk_head, batch);
    ops->Memory("softmax", 4 * scores);
    if (d.gpt) ops->Memory("attention dropout", 5 * scores);
    ops->Gemm("attention context", d.s, d.v_head, d.s, batch);
    ops->SixteenBit(false);
    return;
  }
  ops->Gemm("attention context, grad probabilities", d.s, d.s, d.v_head, batch);
  ops->Gemm("attention context, grad values", d.s, d.v_head, d.s, batch);
  if (d.gpt) ops->Memory("attention dropout", 5 * scores);
  ops->Memory("softmax", 6 * scores);
  ops->Gemm("attention scores, grad queries", d.s, d.qk_head, d.s, batch);
  ops->Gemm("attention scores, grad keys", d.s, d.qk_head, d.s, batch);
  ops->SixteenBit(false);
}

// The MLP's first GEMM's width: GeLU's f, SwiGLU's gate and up 2f.
double UpWidth(const Dims& d) { return (d.gpt ? 1 : 2) * d.f / d.t; }
// The same for an MLP of f channels on one GPU.
double UpWidthOf(const Dims& d, double f) { return (d.gpt ? 1 : 2) * f; }

// The attention part's forward: norm 1, the attention's GEMMs and core, residual 1. MHA: QKV and
// the projection. MLA: q_a ("q down") and kv_a ("kv down") on the tokens of the replicated region
// (Megatron-core runs them unsplit, on the sequence-parallel shard), their latent RMSNorms, q_b
// and kv_b ("q up", "kv up") column-parallel, the projection row-parallel.
void AttentionPartForward(const Dims& d, bool flash, OpList* ops) {
  ops->Part(LayerPart::kAttention);
  ops->Memory("norm 1", 4 * d.tokens_r * d.h);
  if (d.mla) {
    const double qk = d.heads * d.qk_head;
    // The down projections share norm 1's output, a separate norm before two GEMMs: one cast.
    ops->Fp8Cast("q/kv down input", d.tokens_r * d.h);
    if (d.q_lora > 0) {
      ops->Weight("q down", OpPass::kForward, d.tokens_r, d.q_lora, d.h);
      ops->Memory("q norm", 4 * d.tokens_r * d.q_lora);
      ops->Weight("q up", OpPass::kForward, d.tokens, qk, d.q_lora);
    } else {
      ops->Weight("q", OpPass::kForward, d.tokens, qk, d.h);
    }
    ops->Weight("kv down", OpPass::kForward, d.tokens_r, d.kv_lora + d.rope, d.h);
    ops->Memory("kv norm", 4 * d.tokens_r * d.kv_lora);
    ops->Weight("kv up", OpPass::kForward, d.tokens, d.heads * (d.qk_head - d.rope + d.v_head),
                d.kv_lora);
    // The queries' rotary channels (per head) and the key's (shared by the heads).
    ops->Memory("rotary", 4 * d.tokens * d.heads * d.rope + 4 * d.tokens_r * d.rope);
    AttentionOps(d, flash, /*backward=*/false, ops);
    ops->Fp8Cast("proj input", d.tokens * d.heads * d.v_head);
    ops->Weight("proj", OpPass::kForward, d.tokens, d.h, d.heads * d.v_head);
    ops->TpOverlapped();
  } else {
    ops->Weight("qkv", OpPass::kForward, d.tokens, (d.q + 2 * d.kv) / d.t, d.h);
    if (!d.gpt) ops->Memory("rotary", 4 * d.tokens * (d.q + d.kv) / d.t);
    AttentionOps(d, flash, /*backward=*/false, ops);
    ops->Fp8Cast("proj input", d.tokens * d.q / d.t);
    ops->Weight("proj", OpPass::kForward, d.tokens, d.h, d.q / d.t);
    ops->TpOverlapped();
  }
  ops->Memory("residual 1", (d.gpt ? 7 : 6) * d.tokens_r * d.h);
}

// I from the projection's input gradient down to the layer input's (norm 1).
void AttentionPartInputGrads(const Dims& d, bool flash, OpList* ops) {
  ops->Part(LayerPart::kAttention);
  if (d.mla) {
    const double qk = d.heads * d.qk_head;
    ops->Weight("proj", OpPass::kBackwardInput, d.tokens, d.h, d.heads * d.v_head);
    AttentionOps(d, flash, /*backward=*/true, ops);
    ops->Memory("rotary", 4 * d.tokens * d.heads * d.rope + 4 * d.tokens_r * d.rope);
    ops->Weight("kv up", OpPass::kBackwardInput, d.tokens,
                d.heads * (d.qk_head - d.rope + d.v_head), d.kv_lora);
    ops->Memory("kv norm", 6 * d.tokens_r * d.kv_lora);
    ops->Weight("kv down", OpPass::kBackwardInput, d.tokens_r, d.kv_lora + d.rope, d.h);
    if (d.q_lora > 0) {
      ops->Weight("q up", OpPass::kBackwardInput, d.tokens, qk, d.q_lora);
      ops->Memory("q norm", 6 * d.tokens_r * d.q_lora);
      ops->Weight("q down", OpPass::kBackwardInput, d.tokens_r, d.q_lora, d.h);
    } else {
      ops->Weight("q", OpPass::kBackwardInput, d.tokens, qk, d.h);
    }
  } else {
    ops->Weight("proj", OpPass::kBackwardInput, d.tokens, d.h, d.q / d.t);
    AttentionOps(d, flash, /*backward=*/true, ops);
    if (!d.gpt) ops->Memory("rotary", 4 * d.tokens * (d.q + d.kv) / d.t);
    ops->Weight("qkv", OpPass::kBackwardInput, d.tokens, (d.q + 2 * d.kv) / d.t, d.h);
    ops->TpOverlapped();
  }
  ops->Memory("norm 1", 6 * d.tokens_r * d.h);
}

void AttentionPartWeightGrads(const Dims& d, OpList* ops) {
  ops->Part(LayerPart::kAttention);
  if (d.mla) {
    const double qk = d.heads * d.qk_head;
    ops->Weight("proj", OpPass::kBackwardWeight, d.tokens, d.h, d.heads * d.v_head);
    ops->Weight("kv up", OpPass::kBackwardWeight, d.tokens,
                d.heads * (d.qk_head - d.rope + d.v_head), d.kv_lora);
    ops->Weight("kv down", OpPass::kBackwardWeight, d.tokens_r, d.kv_lora + d.rope, d.h);
    if (d.q_lora > 0) {
      ops->Weight("q up", OpPass::kBackwardWeight, d.tokens, qk, d.q_lora);
      ops->Weight("q down", OpPass::kBackwardWeight, d.tokens_r, d.q_lora, d.h);
    } else {
      ops->Weight("q", OpPass::kBackwardWeight, d.tokens, qk, d.h);
    }
  } else {
    ops->Weight("proj", OpPass::kBackwardWeight, d.tokens, d.h, d.q / d.t);
    ops->Weight("qkv", OpPass::kBackwardWeight, d.tokens, (d.q + 2 * d.kv) / d.t, d.h);
    ops->TpOverlapped();
  }
}

// A MoE layer's router (attention part): the logits GEMM T_g x E x h and the softmax and top-k,
// which read the 16-bit logits, write and read again the fp32 scores and write a 1-byte routing
// map per token and expert, 11 T_g E bytes; its backward reads the fp32 scores and their
// gradients and writes the logits' 16-bit gradient, 10 T_g E.
void RouterOps(const Dims& d, OpPass direction, OpList* ops) {
  ops->Part(LayerPart::kAttention);
  ops->SixteenBit(true);  // Megatron's router is a torch linear, outside TE's FP8 modules
  const double tokens = d.routed_tokens;
  switch (direction) {
    case OpPass::kForward:
      ops->Weight("router", direction, tokens, d.experts, d.h);
      ops->Memory("router softmax, top-k", 11 * tokens * d.experts);
      break;
    case OpPass::kBackwardInput:
      ops->Memory("router softmax, top-k", 10 * tokens * d.experts);
      ops->Weight("router", direction, tokens, d.experts, d.h);
      break;
    case OpPass::kBackwardWeight:
      ops->Weight("router", direction, tokens, d.experts, d.h);
      break;
  }
  ops->SixteenBit(false);
}

// An MLP of f_gpu channels on one GPU over `tokens`, named "<prefix>up", "<prefix>activation",
// "<prefix>down", in `direction` (I and W in reverse order).
void MlpOps(const Dims& d, const std::string& prefix, double tokens, double f_gpu, OpPass direction,
            OpList* ops) {
  const double up = UpWidthOf(d, f_gpu);
  switch (direction) {
    case OpPass::kForward:
      // Its input is the MoE layer's norm 2, which the router reads too: not fused with a cast.
      ops->Fp8Cast(prefix + "up input", tokens * d.h);
      ops->Weight(prefix + "up", direction, tokens, up, d.h);
      ops->Memory(prefix + "activation", (d.gpt ? 4 : 6) * tokens * f_gpu);
      ops->Fp8Cast(prefix + "down input", tokens * f_gpu);
      ops->Weight(prefix + "down", direction, tokens, d.h, f_gpu);
      break;
    case OpPass::kBackwardInput:
      ops->Weight(prefix + "down", direction, tokens, d.h, f_gpu);
      ops->Memory(prefix + "activation", (d.gpt ? 6 : 10) * tokens * f_gpu);
      ops->Weight(prefix + "up", direction, tokens, up, d.h);
      break;
    case OpPass::kBackwardWeight:
      ops->Weight(prefix + "down", direction, tokens, d.h, f_gpu);
      ops->Weight(prefix + "up", direction, tokens, up, d.h);
      break;
  }
}

// A MoE layer's MLP part in `direction`: the routed experts as grouped GEMMs (E/e experts on this
// GPU, each of m = T_g k e/E tokens under balanced routing: T_g k in all), the token permutation
// before the dispatch (read each token once per expert it goes to and write the copy, 4 T_g k h;
// its backward adds the k copies' gradients, 2 T_g k h + 2 T_g h) and the unpermutation after the
// combine (read the k outputs and write their weighted sum, 2 T_g k h + 2 T_g h; its backward
// reads the gradient and the saved outputs for the probabilities' gradient and writes the k
// gradients, 4 T_g k h + 2 T_g h), and the shared experts as a tensor-parallel MLP of
// shared x f_e channels on the T = T_g t gathered tokens.
void MoeMlpOps(const Dims& d, OpPass direction, OpList* ops) {
  ops->Part(LayerPart::kMlp);
  const double routed = d.routed_tokens * d.top_k;  // T_g k
  const double per_expert = routed / d.local_experts;
  const double g = d.local_experts;
  const double f = d.expert_f;
  const double up = UpWidthOf(d, f);
  const double shared_f = d.shared_f / d.t;
  switch (direction) {
    case OpPass::kForward:
      ops->Memory("permute", 4 * routed * d.h);
      ops->Fp8Cast("expert fc1 input", routed * d.h);
      ops->Weight("expert fc1", direction, per_expert, up, d.h, g);
      ops->Memory("expert activation", (d.gpt ? 4 : 6) * routed * f);
      ops->Fp8Cast("expert fc2 input", routed * f);
      ops->Weight("expert fc2", direction, per_expert, d.h, f, g);
      ops->Memory("unpermute", 2 * routed * d.h + 2 * d.routed_tokens * d.h);
      if (shared_f > 0) MlpOps(d, "shared ", d.tokens, shared_f, direction, ops);
      break;
    case OpPass::kBackwardInput:
      ops->Memory("unpermute", 4 * routed * d.h + 2 * d.routed_tokens * d.h);
      if (shared_f > 0) MlpOps(d, "shared ", d.tokens, shared_f, direction, ops);
      ops->Weight("expert fc2", direction, per_expert, d.h, f, g);
      ops->Memory("expert activation", (d.gpt ? 6 : 10) * routed * f);
      ops->Weight("expert fc1", direction, per_expert, up, d.h, g);
      ops->Memory("permute", 2 * routed * d.h + 2 * d.routed_tokens * d.h);
      break;
    case OpPass::kBackwardWeight:
      ops->Weight("expert fc2", direction, per_expert, d.h, f, g);
      ops->Weight("expert fc1", direction, per_expert, up, d.h, g);
      if (shared_f > 0) MlpOps(d, "shared ", d.tokens, shared_f, direction, ops);
      break;
  }
}

// A dense layer's MLP after norm 2: up (SwiGLU: gate and up), the activation, down.
void DenseMlpForward(const Dims& d, OpList* ops) {
  ops->Weight("mlp up", OpPass::kForward, d.tokens, UpWidth(d), d.h);
  ops->Memory("activation", (d.gpt ? 4 : 6) * d.tokens * d.f / d.t);
  // Megatron's activation (bias_gelu / bias_swiglu) writes 16 bits, cast for the FP8 GEMM.
  ops->Fp8Cast("mlp down input", d.tokens * d.f / d.t);
  ops->Weight("mlp down", OpPass::kForward, d.tokens, d.h, d.f / d.t);
  ops->TpOverlapped();
}

void LayerForwardOps(const Dims& d, bool flash, LayerKind kind, OpList* ops) {
  const double residual = (d.gpt ? 7 : 6) * d.tokens_r * d.h;
  AttentionPartForward(d, flash, ops);
  if (kind == LayerKind::kMoe) {
    ops->Memory("norm 2", 4 * d.tokens_r * d.h);
    RouterOps(d, OpPass::kForward, ops);
    MoeMlpOps(d, OpPass::kForward, ops);
  } else {
    ops->Part(LayerPart::kMlp);
    ops->Memory("norm 2", 4 * d.tokens_r * d.h);
    DenseMlpForward(d, ops);
  }
  ops->Part(LayerPart::kMlp);
  ops->Memory("residual 2", residual);
}

// The forward ops that Megatron's selective modules (`modules`, RecomputeModule bits) run again
// in I (models/transformer.h, "Recomputation by module"): layernorm the two norms, core_attn the
// attention core, mla_up_proj q_b, kv_b and the rotary embedding, mlp a dense layer's MLP, moe a
// MoE layer's router and experts, moe_act the routed experts' activation, shared_experts the
// shared experts' MLP.
void SelectiveRecomputeOps(const Dims& d, bool flash, LayerKind kind, uint32_t modules,
                           OpList* ops) {
  const bool moe = kind == LayerKind::kMoe;
  ops->Part(LayerPart::kAttention);
  if (modules & kRecomputeLayernorm) ops->Memory("norm 1", 4 * d.tokens_r * d.h);
  if (modules & kRecomputeMlaUpProj) {
    if (d.q_lora > 0) {
      ops->Weight("q up", OpPass::kForward, d.tokens, d.heads * d.qk_head, d.q_lora);
    }
    ops->Weight("kv up", OpPass::kForward, d.tokens, d.heads * (d.qk_head - d.rope + d.v_head),
                d.kv_lora);
    ops->Memory("rotary", 4 * d.tokens * d.heads * d.rope + 4 * d.tokens_r * d.rope);
  }
  if (modules & kRecomputeCoreAttn) AttentionOps(d, flash, /*backward=*/false, ops);
  if (modules & kRecomputeLayernorm) {
    ops->Part(moe ? LayerPart::kAttention : LayerPart::kMlp);
    ops->Memory("norm 2", 4 * d.tokens_r * d.h);
  }
  if (!moe) {
    ops->Part(LayerPart::kMlp);
    if (modules & kRecomputeMlp) DenseMlpForward(d, ops);
    return;
  }
  if (modules & kRecomputeMoe) {
    RouterOps(d, OpPass::kForward, ops);
    MoeMlpOps(d, OpPass::kForward, ops);
    return;
  }
  ops->Part(LayerPart::kMlp);
  if (modules & kRecomputeMoeAct) {
    ops->Memory("expert activation", (d.gpt ? 4 : 6) * d.routed_tokens * d.top_k * d.expert_f);
  }
  if ((modules & kRecomputeSharedExperts) && d.shared_f > 0) {
    MlpOps(d, "shared ", d.tokens, d.shared_f / d.t, OpPass::kForward, ops);
  }
}

}  // namespace

std::vector<ModelOp> LayerOps(const TransformerSpec& spec, const TrainingSetup& setup,
                              LayerKind kind) {
  const Dims d = DimsOf(spec, setup);
  const bool flash = setup.flash_attention;
  const bool moe = kind == LayerKind::kMoe;
  OpList ops(setup);
  LayerForwardOps(d, flash, kind, &ops);

  ops.Tag(OpPass::kBackwardInput, "recompute ");
  if (setup.recompute == Recompute::kFull) {
    LayerForwardOps(d, flash, kind, &ops);
  } else if (setup.recompute == Recompute::kSelective) {
    SelectiveRecomputeOps(d, flash, kind, RecomputeModulesOf(setup), &ops);
  }
  ops.Tag(OpPass::kBackwardInput);
  // The gradient add of the residual stream, and GPT's dropout backward.
  const double residual = (d.gpt ? 6 + 5 : 6) * d.tokens_r * d.h;
  ops.Part(LayerPart::kMlp);
  ops.Memory("residual 2", residual);
  if (moe) {
    MoeMlpOps(d, OpPass::kBackwardInput, &ops);
    RouterOps(d, OpPass::kBackwardInput, &ops);
    ops.Memory("norm 2", 6 * d.tokens_r * d.h);
  } else {
    ops.Weight("mlp down", OpPass::kBackwardInput, d.tokens, d.h, d.f / d.t);
    ops.Memory("activation", (d.gpt ? 6 : 10) * d.tokens * d.f / d.t);
    ops.Weight("mlp up", OpPass::kBackwardInput, d.tokens, UpWidth(d), d.h);
    ops.TpOverlapped();
    ops.Memory("norm 2", 6 * d.tokens_r * d.h);
  }
  ops.Part(LayerPart::kAttention);
  ops.Memory("residual 1", residual);
  AttentionPartInputGrads(d, flash, &ops);

  ops.Tag(OpPass::kBackwardWeight);
  if (moe) {
    MoeMlpOps(d, OpPass::kBackwardWeight, &ops);
    RouterOps(d, OpPass::kBackwardWeight, &ops);
  } else {
    ops.Part(LayerPart::kMlp);
    ops.Weight("mlp down", OpPass::kBackwardWeight, d.tokens, d.h, d.f / d.t);
    ops.Weight("mlp up", OpPass::kBackwardWeight, d.tokens, UpWidth(d), d.h);
    ops.TpOverlapped();
  }
  AttentionPartWeightGrads(d, &ops);
  if (d.gpt) {
    // Each bias gradient reads its output's gradient once. A dense layer's are one op (in its MLP
    // part); a MoE layer's are the attention's and the experts' (each routed copy's).
    if (moe) {
      ops.Part(LayerPart::kAttention);
      ops.Memory("bias grads", 2 * d.tokens * ((d.h + 2 * d.kv) / d.t + d.h));
      ops.Part(LayerPart::kMlp);
      ops.Memory("expert bias grads",
                 2 * d.routed_tokens * d.top_k * (d.expert_f + d.h) +
                     (d.shared_f > 0 ? 2 * d.tokens * (d.shared_f / d.t + d.h) : 0));
    } else {
      ops.Part(LayerPart::kMlp);
      ops.Memory("bias grads", 2 * d.tokens * ((d.h + 2 * d.kv) / d.t + d.f / d.t + 2 * d.h));
    }
  }
  return ops.Take();
}

std::vector<ModelOp> EmbeddingOps(const TransformerSpec& spec, const TrainingSetup& setup) {
  const Dims d = DimsOf(spec, setup);
  OpList ops(setup);
  ops.Memory("embedding", 4 * d.tokens * d.h);
  if (d.gpt) ops.Memory("embedding dropout", 7 * d.tokens_r * d.h);
  ops.Tag(OpPass::kBackwardWeight);
  ops.Memory("embedding", 2 * d.tokens * d.h + (setup.fp32_grads ? 8 : 4) * d.tokens * d.h);
  return ops.Take();
}

std::vector<ModelOp> HeadOps(const TransformerSpec& spec, const TrainingSetup& setup) {
  const Dims d = DimsOf(spec, setup);
  const double logits = d.tokens * d.vocab_shard;
  OpList ops(setup);
  // Megatron's output layer is tensor_parallel.ColumnParallelLinear, outside TE's FP8 modules.
  ops.SixteenBit(true);
  ops.Memory("final norm", 4 * d.tokens_r * d.h);
  ops.Weight("lm head", OpPass::kForward, d.tokens, d.vocab_shard, d.h);
  ops.Memory("cross-entropy", 30 * logits);
  ops.Tag(OpPass::kBackwardInput);
  ops.Memory("cross-entropy", 14 * logits);
  ops.Weight("lm head", OpPass::kBackwardInput, d.tokens, d.vocab_shard, d.h);
  ops.Memory("final norm", 6 * d.tokens_r * d.h);
  ops.Tag(OpPass::kBackwardWeight);
  ops.Weight("lm head", OpPass::kBackwardWeight, d.tokens, d.vocab_shard, d.h);
  return ops.Take();
}

OpTime TimeOp(const ModelOp& op, const GpuModel& gpu) {
  OpTime time;
  const double memory_s =
      gpu.memory_bytes_per_s > 0 ? op.bytes / (gpu.memory_bytes_per_s * gpu.memory_efficiency) : 0;
  double compute_s = 0;
  if (op.kind == KernelKind::kMatmul) {
    double rate = op.sixteen_bit ? gpu.attention_flops_per_s * gpu.matmul_16bit_efficiency
                                 : gpu.matmul_flops_per_s * gpu.matmul_efficiency;
    if (op.tp_overlapped) rate *= gpu.tp_overlapped_sm_share;
    double computed = op.flops;
    if (gpu.sms > 0 && op.flops > 0) {
      // The tiling that needs fewer waves (then fewer tiles).
      auto tiles = [&](double tile_m, double tile_n) {
        return std::ceil(static_cast<double>(op.m) / tile_m) *
               std::ceil(static_cast<double>(op.n) / tile_n) * static_cast<double>(op.batch);
      };
      const double sms = gpu.sms;
      const double waves = std::min(std::ceil(tiles(kTileLong, kTileShort) / sms),
                                    std::ceil(tiles(kTileShort, kTileLong) / sms));
      computed = waves * sms * kTileLong * kTileShort * 2 * static_cast<double>(op.k);
      time.quantization = op.flops / computed;
    }
    compute_s = computed / rate;
  } else if (op.kind == KernelKind::kAttention) {
    compute_s = op.flops / (gpu.attention_flops_per_s * gpu.attention_efficiency);
  }
  time.memory_bound = memory_s > compute_s;
  time.seconds = std::max(compute_s, memory_s);
  return time;
}

namespace {

PassSeconds SumOps(const std::vector<ModelOp>& ops, const GpuModel& gpu) {
  PassSeconds sum;
  for (const ModelOp& op : ops) {
    const double s = TimeOp(op, gpu).seconds;
    switch (op.pass) {
      case OpPass::kForward:
        sum.forward_s += s;
        break;
      case OpPass::kBackwardInput:
        sum.backward_input_s += s;
        break;
      case OpPass::kBackwardWeight:
        sum.backward_weight_s += s;
        break;
    }
  }
  return sum;
}

void AddScaled(const PassSeconds& part, double times, PassSeconds* total) {
  total->forward_s += times * part.forward_s;
  total->backward_input_s += times * part.backward_input_s;
  total->backward_weight_s += times * part.backward_weight_s;
}

// A MoE layer's ops summed by part and pass, without a full recompute's forward.
MoeLayerSeconds SumParts(const std::vector<ModelOp>& ops, const GpuModel& gpu,
                         const TrainingSetup& setup) {
  MoeLayerSeconds sum;
  for (const ModelOp& op : ops) {
    if (op.recompute && setup.recompute == Recompute::kFull) continue;
    const double s = TimeOp(op, gpu).seconds;
    const bool attention = op.part == LayerPart::kAttention;
    switch (op.pass) {
      case OpPass::kForward:
        (attention ? sum.forward_attention_s : sum.forward_mlp_s) += s;
        break;
      case OpPass::kBackwardInput:
        (attention ? sum.input_attention_s : sum.input_mlp_s) += s;
        break;
      case OpPass::kBackwardWeight:
        (attention ? sum.weight_attention_s : sum.weight_mlp_s) += s;
        break;
    }
  }
  return sum;
}

}  // namespace

std::vector<PassSeconds> StagePassSeconds(const TransformerSpec& spec, const TrainingSetup& setup,
                                          const std::vector<StageModel>& stages,
                                          const GpuModel& gpu, double efficiency) {
  std::vector<PassSeconds> seconds;
  if (efficiency > 0) {
    const double rate = gpu.matmul_flops_per_s * efficiency;
    MoeLayerSeconds moe;
    if (spec.moe()) {
      const LayerPartFlops parts = TransformerLayerPartFlops(spec, setup, LayerKind::kMoe);
      moe = {parts.forward_attention / rate, parts.forward_mlp / rate,
             parts.input_attention / rate,   parts.input_mlp / rate,
             parts.weight_attention / rate,  parts.weight_mlp / rate};
    }
    for (const StageModel& stage : stages) {
      seconds.push_back({stage.forward_flops / rate, stage.backward_input_flops / rate,
                         stage.backward_weight_flops / rate,
                         stage.moe_layers > 0 ? moe : MoeLayerSeconds()});
    }
    return seconds;
  }
  const PassSeconds layer = SumOps(LayerOps(spec, setup), gpu);
  PassSeconds moe_layer;
  MoeLayerSeconds moe_parts;
  if (spec.moe()) {
    const std::vector<ModelOp> ops = LayerOps(spec, setup, LayerKind::kMoe);
    moe_layer = SumOps(ops, gpu);
    moe_parts = SumParts(ops, gpu, setup);
  }
  // Full recompute of part of a stage's layers (the block method): the others' ops without it.
  TrainingSetup keep_all = setup;
  keep_all.recompute = Recompute::kNone;
  const bool full = setup.recompute == Recompute::kFull;
  const PassSeconds kept_layer = full ? SumOps(LayerOps(spec, keep_all), gpu) : layer;
  const PassSeconds kept_moe_layer =
      full && spec.moe() ? SumOps(LayerOps(spec, keep_all, LayerKind::kMoe), gpu) : moe_layer;
  const PassSeconds embedding = SumOps(EmbeddingOps(spec, setup), gpu);
  const PassSeconds head = SumOps(HeadOps(spec, setup), gpu);
  for (const StageModel& stage : stages) {
    PassSeconds total;
    const int32_t full_moe = full ? stage.recomputed_moe_layers : stage.moe_layers;
    const int32_t full_dense =
        full ? stage.recomputed_layers - full_moe : stage.layers - stage.moe_layers;
    AddScaled(layer, full_dense, &total);
    AddScaled(kept_layer, stage.layers - stage.moe_layers - full_dense, &total);
    if (stage.moe_layers > 0) {
      AddScaled(moe_layer, full_moe, &total);
      AddScaled(kept_moe_layer, stage.moe_layers - full_moe, &total);
      total.moe_layer = moe_parts;
    }
    if (stage.embedding) AddScaled(embedding, 1, &total);
    if (stage.lm_head) AddScaled(head, 1, &total);
    seconds.push_back(total);
  }
  return seconds;
}

std::string_view OpPassName(OpPass pass) { return NameOf(kOpPasses, pass); }

std::string_view KernelKindName(KernelKind kind) { return NameOf(kKernelKinds, kind); }

std::string_view LayerPartName(LayerPart part) {
  switch (part) {
    case LayerPart::kAttention:
      return "attention";
    case LayerPart::kMlp:
      return "mlp";
    case LayerPart::kNone:
      break;
  }
  return "";
}

}  // namespace ppsim
