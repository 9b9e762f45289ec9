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
// pass tag: a recomputed forward has the forward's shapes and counts in I.
class OpList {
 public:
  explicit OpList(const TrainingSetup& setup)
      : in_bytes_(static_cast<double>(DtypeBytes(setup.dtype))),
        grad_accumulate_bytes_(setup.fp32_grads ? 8 : 4) {}

  void Memory(const std::string& name, double bytes) {
    ModelOp& op = Add(name, KernelKind::kMemory);
    op.bytes = bytes;
  }

  // A GEMM of batch x (m x n) results over k: 16-bit (or fp8) operands, a 16-bit result.
  void Gemm(const std::string& name, double m, double n, double k, double batch = 1) {
    ModelOp& op = Add(name, KernelKind::kMatmul);
    op.m = static_cast<int64_t>(m);
    op.n = static_cast<int64_t>(n);
    op.k = static_cast<int64_t>(k);
    op.batch = static_cast<int64_t>(batch);
    op.flops = 2 * m * n * k * batch;
    op.bytes = batch * (in_bytes_ * (m * k + k * n) + 2 * m * n);
  }

  // A weight GEMM Y[T x n] = X[T x k] W[k x n] in `direction`: its forward (kForward), input
  // gradient dX = dY W^T (kBackwardInput) or weight gradient dW = X^T dY (kBackwardWeight).
  void Weight(const std::string& name, OpPass direction, double tokens, double n, double k) {
    switch (direction) {
      case OpPass::kForward:
        Gemm(name, tokens, n, k);
        break;
      case OpPass::kBackwardInput:
        Gemm(name, tokens, k, n);
        break;
      case OpPass::kBackwardWeight:
        Gemm(name, k, n, tokens);
        // Reads X and dY; accumulates into the main gradient instead of writing a result.
        ops_.back().bytes = in_bytes_ * tokens * (k + n) + grad_accumulate_bytes_ * k * n;
        break;
    }
  }

  void Attention(const std::string& name, double flops, double bytes) {
    ModelOp& op = Add(name, KernelKind::kAttention);
    op.flops = flops;
    op.bytes = bytes;
  }

  void Tag(OpPass pass, std::string prefix = "") {
    pass_ = pass;
    prefix_ = std::move(prefix);
  }
  std::vector<ModelOp> Take() { return std::move(ops_); }

 private:
  ModelOp& Add(const std::string& name, KernelKind kind) {
    ModelOp& op = ops_.emplace_back();
    op.name = prefix_ + name;
    op.pass = pass_;
    op.kind = kind;
    return op;
  }

  double in_bytes_;
  double grad_accumulate_bytes_;
  OpPass pass_ = OpPass::kForward;
  std::string prefix_;
  std::vector<ModelOp> ops_;
};

// The model's sizes on one GPU, as doubles (their products overflow nothing).
struct Dims {
  double b, s, tokens, tokens_r, t, cp, h, kv, f, heads, head_dim, vocab_shard;
  bool gpt;
};

Dims DimsOf(const TransformerSpec& spec, const TrainingSetup& setup) {
  Dims d;
  d.t = setup.tp;
  d.cp = setup.cp;
  d.b = static_cast<double>(setup.microbatch_size);
  d.s = static_cast<double>(setup.seq_len);
  d.tokens = d.b * d.s / setup.cp;  // this GPU's tokens (context parallelism: s/c of each)
  d.tokens_r = setup.sequence_parallel ? d.tokens / d.t : d.tokens;
  d.h = static_cast<double>(spec.hidden);
  d.kv = static_cast<double>(spec.hidden / spec.heads * spec.kv_heads);
  d.f = static_cast<double>(spec.ffn_hidden);
  d.heads = static_cast<double>(spec.heads / setup.tp);
  d.head_dim = static_cast<double>(spec.hidden / spec.heads);
  d.vocab_shard = static_cast<double>((spec.vocab + setup.tp - 1) / setup.tp);
  d.gpt = !spec.swiglu;
  return d;
}

// The attention core: its forward, or (backward) its backward.
void AttentionOps(const Dims& d, bool flash, bool backward, OpList* ops) {
  const double batch = d.b * d.heads;
  const double scores = batch * d.s * d.s;
  if (flash) {
    // With context parallelism each of the c GPUs computes 1/c of the causal scores.
    const double forward_flops = 2 * batch * d.head_dim * d.s * (d.s + 1) / d.cp;
    const double qkvo = 2 * d.tokens * (2 * d.h + 2 * d.kv) / d.t;
    if (backward) {
      ops->Attention("attention", 2.5 * forward_flops, 2 * qkvo);
    } else {
      ops->Attention("attention", forward_flops, qkvo);
    }
    return;
  }
  if (!backward) {
    ops->Gemm("attention scores", d.s, d.s, d.head_dim, batch);
    ops->Memory("softmax", 4 * scores);
    if (d.gpt) ops->Memory("attention dropout", 5 * scores);
    ops->Gemm("attention context", d.s, d.head_dim, d.s, batch);
    return;
  }
  ops->Gemm("attention context, grad probabilities", d.s, d.s, d.head_dim, batch);
  ops->Gemm("attention context, grad values", d.s, d.head_dim, d.s, batch);
  if (d.gpt) ops->Memory("attention dropout", 5 * scores);
  ops->Memory("softmax", 6 * scores);
  ops->Gemm("attention scores, grad queries", d.s, d.head_dim, d.s, batch);
  ops->Gemm("attention scores, grad keys", d.s, d.head_dim, d.s, batch);
}

// The MLP's first GEMM's width: GeLU's f, SwiGLU's gate and up 2f.
double UpWidth(const Dims& d) { return (d.gpt ? 1 : 2) * d.f / d.t; }

void LayerForwardOps(const Dims& d, bool flash, OpList* ops) {
  const double residual = (d.gpt ? 7 : 6) * d.tokens_r * d.h;
  ops->Memory("norm 1", 4 * d.tokens_r * d.h);
  ops->Weight("qkv", OpPass::kForward, d.tokens, (d.h + 2 * d.kv) / d.t, d.h);
  if (!d.gpt) ops->Memory("rotary", 4 * d.tokens * (d.h + d.kv) / d.t);
  AttentionOps(d, flash, /*backward=*/false, ops);
  ops->Weight("proj", OpPass::kForward, d.tokens, d.h, d.h / d.t);
  ops->Memory("residual 1", residual);
  ops->Memory("norm 2", 4 * d.tokens_r * d.h);
  ops->Weight("mlp up", OpPass::kForward, d.tokens, UpWidth(d), d.h);
  ops->Memory("activation", (d.gpt ? 4 : 6) * d.tokens * d.f / d.t);
  ops->Weight("mlp down", OpPass::kForward, d.tokens, d.h, d.f / d.t);
  ops->Memory("residual 2", residual);
}

}  // namespace

std::vector<ModelOp> LayerOps(const TransformerSpec& spec, const TrainingSetup& setup) {
  const Dims d = DimsOf(spec, setup);
  const bool flash = setup.flash_attention;
  OpList ops(setup);
  LayerForwardOps(d, flash, &ops);

  ops.Tag(OpPass::kBackwardInput, "recompute ");
  if (setup.recompute == Recompute::kFull) {
    LayerForwardOps(d, flash, &ops);
  } else if (setup.recompute == Recompute::kSelective) {
    AttentionOps(d, flash, /*backward=*/false, &ops);
  }
  ops.Tag(OpPass::kBackwardInput);
  // The gradient add of the residual stream, and GPT's dropout backward.
  const double residual = (d.gpt ? 6 + 5 : 6) * d.tokens_r * d.h;
  ops.Memory("residual 2", residual);
  ops.Weight("mlp down", OpPass::kBackwardInput, d.tokens, d.h, d.f / d.t);
  ops.Memory("activation", (d.gpt ? 6 : 10) * d.tokens * d.f / d.t);
  ops.Weight("mlp up", OpPass::kBackwardInput, d.tokens, UpWidth(d), d.h);
  ops.Memory("norm 2", 6 * d.tokens_r * d.h);
  ops.Memory("residual 1", residual);
  ops.Weight("proj", OpPass::kBackwardInput, d.tokens, d.h, d.h / d.t);
  AttentionOps(d, flash, /*backward=*/true, &ops);
  if (!d.gpt) ops.Memory("rotary", 4 * d.tokens * (d.h + d.kv) / d.t);
  ops.Weight("qkv", OpPass::kBackwardInput, d.tokens, (d.h + 2 * d.kv) / d.t, d.h);
  ops.Memory("norm 1", 6 * d.tokens_r * d.h);

  ops.Tag(OpPass::kBackwardWeight);
  ops.Weight("mlp down", OpPass::kBackwardWeight, d.tokens, d.h, d.f / d.t);
  ops.Weight("mlp up", OpPass::kBackwardWeight, d.tokens, UpWidth(d), d.h);
  ops.Weight("proj", OpPass::kBackwardWeight, d.tokens, d.h, d.h / d.t);
  ops.Weight("qkv", OpPass::kBackwardWeight, d.tokens, (d.h + 2 * d.kv) / d.t, d.h);
  if (d.gpt) {
    // Each bias gradient reads its output's gradient once.
    ops.Memory("bias grads", 2 * d.tokens * ((d.h + 2 * d.kv) / d.t + d.f / d.t + 2 * d.h));
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
    const double rate = gpu.matmul_flops_per_s * gpu.matmul_efficiency;
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

}  // namespace

std::vector<PassSeconds> StagePassSeconds(const TransformerSpec& spec, const TrainingSetup& setup,
                                          const std::vector<StageModel>& stages,
                                          const GpuModel& gpu, double efficiency) {
  std::vector<PassSeconds> seconds;
  if (efficiency > 0) {
    const double rate = gpu.matmul_flops_per_s * efficiency;
    for (const StageModel& stage : stages) {
      seconds.push_back({stage.forward_flops / rate, stage.backward_input_flops / rate,
                         stage.backward_weight_flops / rate});
    }
    return seconds;
  }
  const PassSeconds layer = SumOps(LayerOps(spec, setup), gpu);
  const PassSeconds embedding = SumOps(EmbeddingOps(spec, setup), gpu);
  const PassSeconds head = SumOps(HeadOps(spec, setup), gpu);
  for (const StageModel& stage : stages) {
    PassSeconds total;
    AddScaled(layer, stage.layers, &total);
    if (stage.embedding) AddScaled(embedding, 1, &total);
    if (stage.lm_head) AddScaled(head, 1, &total);
    seconds.push_back(total);
  }
  return seconds;
}

std::string_view OpPassName(OpPass pass) { return NameOf(kOpPasses, pass); }

std::string_view KernelKindName(KernelKind kind) { return NameOf(kKernelKinds, kind); }

}  // namespace ppsim
