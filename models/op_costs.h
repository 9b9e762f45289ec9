// The per-op cost model: F, I and W of a transformer stage built from the kernels they run, each
// timed on a GPU by a roofline.
//
// Ops per layer and microbatch on one GPU of the tensor-parallel group (T = b·s tokens, b·s/c with
// context parallelism c; T_r = T/t with sequence parallelism, else T: the tokens of the replicated
// region; e = 2 bytes per 16-bit element). Element-wise byte counts are of Megatron-LM's kernels
// (fused where Megatron fuses):
//   F  norm 1            LayerNorm / RMSNorm: read x, write y                     4·T_r·h
//      qkv               GEMM T x (h + 2h_kv)/t x h
//      rotary (Llama)    read and write Q and K                                   4·T·(h + h_kv)/t
//      attention         flash attention (causal: (s+1)/(2s) of the s^2 scores are computed)
//                        4·b·(a/t)·d·s^2·(s+1)/(2s) FLOPs (/c with context parallelism, whose
//                        load-balanced chunks give each GPU 1/c of them), reads Q, K, V, writes O;
//                        or without
//                        flash attention (unfused, all s^2 scores) the score GEMM, the fused
//                        scale-mask-softmax (read and write 2 bytes per score), GPT's attention
//                        dropout (read 2, write 2 and a 1-byte mask) and the context GEMM
//      proj              GEMM T x h x h/t
//      residual 1        bias-dropout-add (GPT: read 2 + 2, write 2, mask 1) 7·T_r·h; add 6·T_r·h
//      norm 2                                                                     4·T_r·h
//      mlp up            GEMM T x f/t x h (SwiGLU: gate and up, 2f/t)
//      activation        GeLU: read, write 4·T·f/t; SwiGLU: read gate and up, write 6·T·f/t
//      mlp down          GEMM T x h x f/t
//      residual 2        as residual 1
//   I  every GEMM's input gradient (dY·W^T, the same FLOPs), the backward of every element-wise op
//      (norm: read x and dy, write dx, 6·T_r·h; residual: the gradient add 6·T_r·h, and GPT's
//      dropout backward, read dy and mask, write dx, 5·T_r·h; GeLU: read x and dy, write dx,
//      6·T·f/t; SwiGLU: read gate, up and dy, write both gradients, 10·T·f/t; rotary as forward),
//      the attention backward (flash: 5 of the s^2·d GEMMs where the forward has 2, so 2.5 x its
//      FLOPs, reading Q, K, V, O, dO and writing dQ, dK, dV; unfused: the two GEMMs of each score
//      GEMM, dropout backward 5 and softmax backward 6 bytes per score), and the recomputation:
//      selective repeats the attention's forward, full the layer's whole forward.
//   W  every GEMM's weight gradient (X^T·dY, the same FLOPs) accumulated into the fp32 main
//      gradient (Megatron's gradient-accumulation fusion: read and write 4 bytes per weight; 2 + 2
//      with 16-bit gradients), and GPT's bias gradients (a read of each output gradient).
// MLA (multi-head latent attention, models/model.proto) replaces qkv by q down (q_a: GEMM
// T_r x q_lora x h, on the tokens of the replicated region, as Megatron-core runs the down
// projections unsplit on the sequence-parallel shard), q norm (4·T_r·q_lora), q up (q_b: GEMM
// T x a(n + r)/t x q_lora; without q_lora one GEMM T x a(n + r)/t x h), kv down (kv_a: T_r x
// (kv_lora + r) x h), kv norm (4·T_r·kv_lora), kv up (kv_b: T x a(n + v)/t x kv_lora); rotary reads
// and writes the queries' rotary channels and the shared key's, 4·T·(a/t)·r + 4·T_r·r; the
// attention core has qk_head n + r and v_head v ((n + r + v)·b·(a/t)·s(s+1)/c causal flash FLOPs);
// proj is T x h x a·v/t. I and W hold each GEMM's gradients and the norms' backward (6 bytes per
// element).
// A MoE layer (T_g = T_r routed tokens per GPU, k = top-k, E experts, e = --ep; balanced routing,
// models/transformer.h): after norm 2, the router GEMM T_g x E x h and its softmax and top-k
// (11·T_g·E bytes: read the 16-bit logits, write and read the fp32 scores, write a 1-byte routing
// map); permute 4·T_g·k·h (each token read once per expert and written); the routed experts as
// grouped GEMMs of batch E/e, m = T_g·k·e/E tokens each: expert fc1 m x f_e (SwiGLU 2f_e) x h,
// expert activation (as the MLP's, on T_g·k tokens of f_e), expert fc2 m x h x f_e; unpermute
// 2·T_g·k·h + 2·T_g·h (read the k outputs, write their weighted sum); the shared experts as a
// tensor-parallel MLP of shared x f_e channels on the T gathered tokens ("shared up", ...).
// Backward: the unpermute's reads the gradient and the saved outputs (for the probabilities'
// gradient) and writes k gradients, 4·T_g·k·h + 2·T_g·h; the permute's adds the k copies,
// 2·T_g·k·h + 2·T_g·h; the router's softmax backward 10·T_g·E (read the fp32 scores and their
// gradients, write the logits' gradient). GPT-style experts' bias gradients read each routed
// copy's output gradients, 2·T_g·k·(f_e + h). Each op belongs to the layer's attention part or
// MLP part (LayerPart; a MoE layer's norm 2 and router are in its attention part, the part before
// the dispatch).
// The embedding (first stage): a gather, read and written 4·T·h, GPT's position add and dropout
// 7·T_r·h; its W: the scatter-add of the gradient rows, read 2·T·h, accumulated in fp32 8·T·h
// (4·T·h with 16-bit gradients).
// The head (last stage): the final norm, the GEMM T x V/t x h, and Megatron's vocabulary-parallel
// cross-entropy in fp32: forward 30 bytes per logit (cast, max, subtract, exp, sum), backward 14
// (read the saved softmax, write the gradient, cast it to 16 bits).
//
// A GEMM of m x n x k (batch B) runs in tiles (NVIDIA, "Matrix Multiplication Background User's
// Guide", DU-09799-001, Feb 2023, Sec. 2.3 and 3: 256 x 128 tiles are cuBLAS's most efficient;
// tile and wave quantization): ceil(m/256)·ceil(n/128)·B tiles (or the transposed tiling, if it
// needs fewer waves) in waves of one tile per SM; its compute time is waves x SMs x 256·128·2k
// FLOPs at the GPU's peak x matmul efficiency, its memory time its operands' and result's bytes at
// the HBM bandwidth x memory efficiency, and it takes the longer. Attention takes the longer of its
// FLOPs at the 16-bit peak x attention efficiency and its bytes; element-wise ops their bytes.
// With fp8 (Megatron-LM with Transformer Engine's FP8 recipe) the layers' linear GEMMs run at the
// FP8 peak x gpu.matmul_efficiency_fp8 with 1-byte operands; GEMMs outside Transformer Engine's
// linear modules stay 16-bit (the LM head, Megatron's tensor_parallel.ColumnParallelLinear; the MoE
// router; the unfused attention's batched GEMMs), as does flash attention. Transformer Engine
// quantizes each FP8 GEMM's inputs with cast-transpose kernels (read 2 bytes, write the FP8 copy
// and its transpose, 1 + 1: 4 bytes per element): in the forward the inputs that no fused kernel
// writes in FP8 ("proj input", "mlp down input", a MoE layer's expert and shared-expert inputs;
// the norms before qkv and mlp up write FP8 themselves, TE's LayerNormLinear), and in the
// backward every linear GEMM's output gradient before its dgrad ("<name> grad fp8 cast"). The
// weights' casts are once per iteration (TE's is_first_microbatch) and are not counted.
// With --tp-comm-overlap (Transformer Engine's userbuffers), the GEMMs whose TP collective runs
// beside them with the 'pipeline' and 'bulk' methods (proj and mlp down forward, qkv and mlp up
// dgrad and wgrad) run on the SMs the communication leaves: (sms - 16) / sms (TE's default
// num_sm 16; 'ring_exchange', the other GEMMs', uses copy engines and 1 SM: none lost).
// The GPU's constants (SMs, the three efficiencies) are per GPU, in the cluster's gpu block
// (platforms/cluster.proto), with their sources there.
#ifndef PPSIM_MODELS_OP_COSTS_H_
#define PPSIM_MODELS_OP_COSTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "models/transformer.h"

namespace ppsim {

// The GPU as the op model times it.
struct GpuModel {
  double matmul_flops_per_s = 0;     // dense peak for the run's dtype
  double attention_flops_per_s = 0;  // dense 16-bit peak (attention runs in 16 bits)
  int32_t sms = 0;                   // 0: no tile or wave quantization
  double matmul_efficiency = 1;      // for the run's dtype
  // GEMMs kept in 16 bits in an fp8 run (ModelOp::sixteen_bit) run at the 16-bit peak (that of
  // attention_flops_per_s) x this.
  double matmul_16bit_efficiency = 1;
  // The share of the SMs left to GEMMs that TP communication overlaps (ModelOp::tp_overlapped):
  // (sms - 16) / sms with --tp-comm-overlap, else 1.
  double tp_overlapped_sm_share = 1;
  double attention_efficiency = 1;
  double memory_bytes_per_s = 0;  // HBM bandwidth
  double memory_efficiency = 1;
};

enum class OpPass { kForward, kBackwardInput, kBackwardWeight };
enum class KernelKind { kMatmul, kAttention, kMemory };
// Which part of a layer an op belongs to: the attention part (norms, attention, residual 1, a MoE
// layer's router: what runs before the token dispatch) or the MLP part (the MLP, or the routed
// and shared experts with the token permutation, and residual 2: what runs from the dispatch to
// the combine, the unpermutation and residual add after the combine included). Embedding and head
// ops are in no layer.
enum class LayerPart { kNone, kAttention, kMlp };

struct ModelOp {
  std::string name;  // "qkv", "attention", "norm 1", "recompute mlp up", ...
  OpPass pass = OpPass::kForward;
  KernelKind kind = KernelKind::kMemory;
  LayerPart part = LayerPart::kNone;
  bool recompute = false;      // a recomputed forward op, run in I
  bool sixteen_bit = false;    // a GEMM kept in 16 bits in an fp8 run
  bool tp_overlapped = false;  // a GEMM TE overlaps with a TP collective on 16 SMs (tp > 1)
  // GEMM shape (kMatmul): batch of m x n results, inner dimension k.
  int64_t m = 0, n = 0, k = 0, batch = 1;
  double flops = 0;  // executed
  double bytes = 0;  // HBM traffic
};

// The ops of one layer (dense, or MoE: a model with experts), of the embedding and of the head
// (final norm, LM head, loss), per microbatch on one GPU of the tensor-parallel group, in pass
// order. REQUIRES: CheckTrainingSetup.
std::vector<ModelOp> LayerOps(const TransformerSpec& spec, const TrainingSetup& setup,
                              LayerKind kind = LayerKind::kDense);
std::vector<ModelOp> EmbeddingOps(const TransformerSpec& spec, const TrainingSetup& setup);
std::vector<ModelOp> HeadOps(const TransformerSpec& spec, const TrainingSetup& setup);

struct OpTime {
  double seconds = 0;
  bool memory_bound = false;
  double quantization = 1;  // useful / computed tile area (kMatmul)
};
OpTime TimeOp(const ModelOp& op, const GpuModel& gpu);

struct PassSeconds {
  double forward_s = 0;
  double backward_input_s = 0;
  double backward_weight_s = 0;
  // A stage with MoE layers: one of them (all alike; models/stage_costs.h), by part (LayerPart),
  // part of the three sums; zeros otherwise.
  MoeLayerSeconds moe_layer;
};

// F, I and W of each stage: its dense and MoE layers' ops plus the embedding's and the head's
// where it has them; or, with `efficiency` > 0 (--efficiency), its model FLOPs
// (models/transformer.h) at the matmul peak x efficiency, element-wise work not counted (the MoE
// layer's parts likewise, from TransformerLayerPartFlops).
std::vector<PassSeconds> StagePassSeconds(const TransformerSpec& spec, const TrainingSetup& setup,
                                          const std::vector<StageModel>& stages,
                                          const GpuModel& gpu, double efficiency);

std::string_view OpPassName(OpPass pass);          // "F", "I", "W"
std::string_view KernelKindName(KernelKind kind);  // "matmul", "attention", "memory"
std::string_view LayerPartName(LayerPart part);    // "", "attention", "mlp"

}  // namespace ppsim

#endif  // PPSIM_MODELS_OP_COSTS_H_
