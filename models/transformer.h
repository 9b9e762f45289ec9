// The analytic cost model of a decoder-only transformer, dense or mixture-of-experts: FLOPs,
// activation and static memory per virtual stage, for models and GPUs not yet run.
//
// Two layer families, told apart by the MLP: GELU is GPT-style (LayerNorm, biases on every linear
// layer, learned position embeddings, dropout after attention, MLP and embedding); SwiGLU is
// Llama-style (RMSNorm, no biases, rotary positions, no dropout).
//
// Per layer and microbatch (b sequences of length s, hidden h, a heads, FFN f, k KV heads, KV width
// h_kv = kd, d = h/a by default), only the matmuls, as Narayanan et al. 2021 (arXiv 2104.04473) and
// the zero-bubble paper (Qi et al. 2024, arXiv 2401.10241, Table 1) count them:
//   forward FLOPs       QKV 2bsh(h + 2h_kv), output 2bsh^2 (with an explicit head_dim d, h_q = ad
//                       in place of h in the attention's widths: QKV 2bsh(h_q + 2h_kv), output
//                       2bs h_q h, core 4bs^2 h_q, activations Q and the context 2sbh_q each), MLP
//                       4bshf (GELU) or 6bshf (SwiGLU), attention scores and context 4bs^2h (all a
//                       query heads, no causal halving). A GPT layer (f = 4h, k = a) is 24bsh^2 +
//                       4bs^2h.
//   backward for inputs the forward's weight matmuls again (gradient w.r.t. inputs) plus twice the
//                       attention FLOPs (scores and context have no weights).
//   backward for weights the forward's weight matmuls again (gradient w.r.t. weights).
//   recompute           full: a whole forward added to the backward for inputs; selective: the
//                       attention scores and context (4bs^2h) added.
// Norms, softmax, biases and other element-wise work are not counted, nor flash attention's own
// recomputation inside its backward. The embedding lookup (and its scatter-add gradient) is counted
// as 0 FLOPs; the LM head is a matmul of 2bshV forward, the same again for inputs and for weights
// (the loss itself is element-wise, not counted). These are the model FLOPs (MFU, --efficiency);
// time comes from the per-op cost model (models/op_costs.h), which also counts element-wise work.
//
// All FLOPs, activations, parameters and messages are per GPU of a tensor-parallel group of t.
// Activations (bytes of 16-bit tensors, except the FP8 linear inputs below; Korthikanti et al.
// 2022, "Reducing Activation Recomputation in Large Transformer Models", arXiv 2205.05198, Sec. 4
// and Table 2). For a GPT layer: sbh(34 + 5as/h) without flash attention, 34sbh with it or with
// selective recompute, 2sbh with full recompute (the layer input only); with tensor parallelism t:
// sbh(10 + 24/t + 5as/(ht)) without sequence parallelism, everything / t with it. The same
// breakdown gives other shapes: the replicated part (without sequence parallelism) is the two norm
// inputs and outputs, 8sbh, plus GPT's two dropout masks, 2sbh; the part divided by t is Q 2sbh,
// K and V 4sbh_kv, the attention output 2sbh and the MLP, 4sbf (GELU: GeLU input, second matmul
// input) or 6sbf (SwiGLU: gate and up outputs, their product); the attention scores (without flash
// attention or selective recompute) are 5as^2b (softmax output, dropout mask and output) for GPT,
// 2as^2b (softmax output) for Llama. Flash attention's softmax statistics (4abs bytes) are ignored.
// M_W, the part of M_B kept from I until W (the zero-bubble paper's M_W): each weight matmul's
// input and its output's gradient, 32sbh for a GPT layer (Qi et al. Table 1). Per GPU, the inputs
// of QKV and of the MLP and the output gradients of the attention projection and of the MLP, 8sbh,
// are replicated without sequence parallelism; the rest, 2sb(h + 2h_kv) + 2sbh + 4sbf (GELU) or
// 6sbf (SwiGLU), is divided by t: a GPT layer needs sbh(8 + 24/t), or 32sbh/t with sequence
// parallelism. M_W <= M_B; with full recompute M_W is capped at M_B (the layer input), which
// undercounts what I rematerializes for W.
// The embedding belongs to the first stage of a pipeline (activation: GPT's dropout mask, sbh), the
// final norm, LM head and loss to its last (activation: norm and head inputs 4sbh, and the logits
// in fp32 for the loss, 4sbV/t, Korthikanti et al. Sec. 4.3; M_W: the head's input 2sbh and its
// output's 16-bit gradient 2sbV/t); the sbh terms are / t with sequence parallelism. A GPU holds a
// vocabulary shard of ceil(V/t) columns (the vocabulary is not padded).
//
// Multi-head latent attention (MLA, DeepSeek-V2, arXiv 2405.04434, Sec. 2.1; shapes in
// models/model.proto) replaces QKV by its projections: forward FLOPs 2bs(h q_lora + q_lora a(n + r)
// + h(kv_lora + r) + kv_lora a(n + v) + a v h) (without q_lora: 2bs h a(n + r) for the queries),
// the attention core 2bs^2 a(n + r + v) (QK^T over n + r channels, PV over v). Its activations,
// per token: Q and K 2a(n + r) each, V and the context 2av each (divided by t, in place of MHA's
// 2h + 4h_kv + 2h), and its latents with the norms' tokens (/ t with sequence parallelism only):
// q_a's output and its norm's 4 q_lora, kv_a's output 2(kv_lora + r) and its norm's 2 kv_lora.
// M_W: q_b's (or q's) output gradient 2a(n + r), kv_b's 2a(n + v), the projection's input 2av (/
// t), and the latents' as many bytes again (q_a's and kv_a's output gradients, q_b's and kv_b's
// inputs).
//
// Mixture of experts (a model with experts; Megatron-core's MoE layer with its dropless all-to-all
// token dispatcher and expert tensor parallelism 1: every expert whole on one GPU). Layers
// [first_dense_layers, layers) are MoE layers: attention as in a dense layer, then a router and
// experts instead of the MLP. Per microbatch T_g = bs/(c t) tokens enter a MoE layer on each GPU
// (with t > 1 sequence parallelism is required, as Megatron-LM asserts, and each GPU routes its
// own shard, so the routed experts need no tensor-parallel collective). Routing is assumed
// balanced: each of a GPU's E/e experts receives T_g k e/E tokens, T_g k in all, from the e GPUs
// of its expert-parallel group; no capacity factor, no token dropped (Megatron's dropless
// default). Expert parallelism e (--ep) changes neither FLOPs nor activations, only which experts
// a GPU holds and the all-to-alls (StageModel::dispatch_bytes).
//   FLOPs (model FLOPs: the activated work)  router 2bshE (counted with the attention part), k
//                       routed experts and the shared ones, each an MLP of f_e per token (SwiGLU
//                       6bshf_e, GELU 4bshf_e), in place of the dense MLP; I and W as for a dense
//                       layer (the weight matmuls again each).
//   activations (M_B)   in place of the dense MLP's, per token of T_g: the router's fp32
//                       probabilities and its 1-byte routing map 5E; the received tokens (the
//                       grouped fc1's input) 2kh; fc1's outputs and the activation's, SwiGLU 6kf_e
//                       (GELU 4kf_e); the unpermutation's input (the expert outputs, kept for the
//                       probabilities' gradient) 2kh; the shared experts as a dense MLP of
//                       f_s = shared x f_e, SwiGLU 6f_s (GELU 4f_s). The norm before the router
//                       (its input and output) is in the replicated part as for a dense layer.
//   M_W                 the router logits' gradient 2E; fc1's input 2kh and output gradient
//                       SwiGLU 4kf_e (GELU 2kf_e); fc2's input 2kf_e and output gradient 2kh; the
//                       shared experts' as the dense MLP's, SwiGLU 6f_s (GELU 4f_s).
//   parameters          per GPU, a MoE layer's attention, norms and shared experts / t (the shared
//                       experts are tensor-parallel like the dense MLP), its router whole, and
//                       E/e whole routed experts. ZeRO-1 shards the dense state over dp x cp and
//                       the experts' over the expert-data-parallel group dp x t x c / e, whose
//                       GPUs hold the same experts (their gradients are synchronised over it).
//   collectives         the attention's tensor-parallel pair as in a dense layer, and the MLP's
//                       pair only for the shared experts.
//
// Recomputation by module (Megatron-core's selective recompute_modules, transformer_config.py;
// --recompute selective is core_attn, its default list). Each module drops from M_B, per layer on
// one GPU (T = sb tokens, T_r = T/t with sequence parallelism else T, T_g = T/t routed tokens;
// widths per GPU), and adds to I its forward ops again (models/op_costs.h, "recompute <op>"):
//   core_attn       the attention scores without flash attention (above); with flash attention
//                   nothing. I: the attention core's forward (4bs^2h model FLOPs).
//   layernorm       the two norms' outputs, 4 T_r h bytes in 16 bits (in an fp8 run norm 1's and a
//                   dense layer's norm 2's are FP8 inputs, counted as such). I: norm 1 and norm 2.
//   mla_up_proj     MLA's Q, K and V, T(2a(n + r) x 2 + 2av). I: q_b and kv_b (2T(q_lora a(n +
//                   r) + kv_lora a(n + v)) FLOPs) and the rotary embedding.
//   mlp             a dense layer's MLP intermediates (SwiGLU 6Tf, GELU 4Tf; its input is norm 2's
//                   output, kept). I: its forward (6Thf or 4Thf FLOPs) and its TP collective pair.
//   moe             a MoE layer's router, routed and shared experts' tensors (above). I: the router
//                   and the experts' forward (its all-to-alls are not repeated with ep > 1).
//   moe_act         the routed experts' activation output, 2 T_g k f_e. I: the activation.
//   shared_experts  the shared experts' intermediates, 6 T f_s (SwiGLU). I: their forward and TP
//                   pair.
// Modules add up; moe covers moe_act and shared_experts. M_W (what W needs) is unchanged, as I
// rematerializes it, and capped at M_B.
// Full recompute's methods (Megatron's recompute_method with recompute_num_layers N): block, the
// first N layers of each virtual stage recomputed (the layer input each) and the others keeping
// everything; uniform, the stage's layers in groups of N, each keeping its input only: ceil(L/N)
// x 2sbh bytes (/ t with sequence parallelism), every layer's forward again in I. The transient of
// a recomputed layer or group (its activations during its own backward) is not counted.
// Activations per precision (--dtype fp8, mxfp8: Transformer Engine's FP8 linear layers, which save
// their input quantized, column-wise only, for the weight gradient; TransformerEngine
// transformer_engine/pytorch/module/linear.py and layernorm_linear.py): the inputs of QKV (MLA:
// the down projections and q_b, kv_b: the norms' outputs), of the attention projection (the
// context), of fc1 (a dense layer's norm 2 output; the experts' permuted tokens) and of fc2 (the
// activation's output) are 1 byte per value (MXFP8: 33/32, a scale byte per 32 values); the rest
// stays 16-bit: the norms' inputs (the residual stream, which LayerNormLinear saves as given),
// Q, K, V and the softmax statistics of flash attention (16-bit without FP8 attention), the
// SwiGLU/GeLU inputs (Megatron's bias_swiglu saves them as given), a MoE layer's norm 2 output
// (the router is a 16-bit linear), the unpermutation's input and the router's probabilities.
#ifndef PPSIM_MODELS_TRANSFORMER_H_
#define PPSIM_MODELS_TRANSFORMER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/embedded.h"
#include "base/locator.h"
#include "base/parallel_layout.h"
#include "base/status.h"
#include "config/config_file.h"
#include "models/model.pb.h"
#include "models/stage_costs.h"

namespace ppsim {

struct TransformerSpec {
  std::string name;
  int32_t layers = 0;
  int64_t hidden = 0;
  int64_t ffn_hidden = 0;
  int32_t heads = 0;
  int32_t kv_heads = 0;
  int64_t vocab = 0;
  bool tied_embeddings = false;
  bool swiglu = false;  // Llama-style layer (see above); false: GPT-style with GELU.
  int64_t seq_len = 0;  // The model's default sequence length (GPT: its learned positions).
  // The norms (two per layer and the final one): RMSNorm, a weight of h; otherwise LayerNorm, a
  // weight and a bias. Only their parameters differ: their element-wise work is counted alike.
  bool rmsnorm = false;
  // Multi-head attention: channels per head d (hidden / heads unless the file gave head_dim), Q/K/V
  // biases in a SwiGLU layer (Qwen2: a d + 2 k d parameters), per-head RMSNorms of the queries and
  // keys (Qwen3: 2 d parameters; their element-wise work and activations are not counted).
  // head_dim 0 (a spec built in code): hidden / heads.
  int64_t head_dim = 0;
  bool qkv_bias = false;
  bool qk_norm = false;
  // What the model's source stated that ppsim does not model or ignores (a Hugging Face config's
  // ignored fields, "MTP layers not modelled"), one sentence each, for the run's assumptions.
  std::vector<std::string> notes;

  // Multi-head latent attention (model.proto; SwiGLU models only; kv_heads == heads); false:
  // multi-head attention with kv_heads key/value heads.
  bool mla = false;
  int64_t q_lora_rank = 0;  // 0: a plain query projection
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;

  // Mixture of experts (model.proto): E = experts routed experts (0: dense), k = experts_per_token
  // of them per token, shared_experts more for every token, each an MLP of expert_ffn_hidden
  // (f_e); layers [first_dense_layers, layers) are MoE layers, the others dense.
  int32_t experts = 0;
  int32_t experts_per_token = 0;
  int32_t shared_experts = 0;
  int64_t expert_ffn_hidden = 0;
  int32_t first_dense_layers = 0;
  bool router_bias = false;
  // Multi-token prediction modules on the last stage (model.proto mtp_layers); 0: none.
  int32_t mtp_layers = 0;

  bool moe() const { return experts > 0; }
  int32_t MoeLayers() const { return moe() ? layers - first_dense_layers : 0; }
  int32_t DenseLayers() const { return layers - MoeLayers(); }
  // Whether global layer `layer` (0-based) is a MoE layer.
  bool IsMoeLayer(int32_t layer) const { return moe() && layer >= first_dense_layers; }

  // Parameters of one dense transformer layer (attention, the MLP of ffn_hidden, two norms; with
  // GPT's biases and LayerNorm weights and biases, or Llama's RMSNorm weights), of the embedding
  // (vocab x hidden, plus seq_len x hidden learned positions for GPT), of the LM head (vocab x
  // hidden, 0 when tied), and of the whole model (layers with every expert, embedding, head, final
  // norm).
  int64_t LayerParameters() const;
  int64_t EmbeddingParameters() const;
  int64_t HeadParameters() const;
  int64_t TotalParameters() const;
  // MoE layers: one expert (an MLP of expert_ffn_hidden: SwiGLU 3hf_e, GELU 2hf_e + f_e + h), the
  // router (E x h, + E with router_bias), a whole MoE layer (attention, norms, router, E routed and
  // the shared experts), and what one token uses of it (k routed experts instead of E).
  int64_t ExpertParameters() const;
  int64_t RouterParameters() const;
  int64_t MoeLayerParameters() const;
  int64_t MoeLayerActivatedParameters() const;
  // What one token uses: every dense layer, each MoE layer's activated parameters, the embedding,
  // the head and the final norm (TotalParameters for a dense model); and the same without the input
  // embedding (EmbeddingParameters), DeepSeek's convention (its V3 weights' README: "36.6B
  // activated parameters, including 0.9B for the output head").
  int64_t ActivatedParameters() const;
  int64_t ActivatedParametersWithoutEmbedding() const;
  // The multi-token prediction modules' own parameters (TotalParameters leaves them out, as
  // DeepSeek-V3's 671B does): per module a transformer layer (MoE in a MoE model), the 2h x h
  // projection and three norms (hidden state, embedding, final); the embedding and the head are
  // the model's (models/multi_token_prediction.cc).
  int64_t MtpParameters() const;
};

// The attention's tensor widths over all heads (per GPU: / t): queries and keys of qk_head_dim
// channels per head, values and the context (the output projection's input) of v_head_dim. MHA:
// queries h, keys and values h_kv = h/a x kv_heads, context h, head dims h/a; MLA: queries and
// keys a(nope + rope), values and context a v.
struct AttentionWidths {
  int64_t query = 0, key = 0, value = 0, context = 0;
  int64_t qk_head_dim = 0, v_head_dim = 0;
};
AttentionWidths AttentionWidthsOf(const TransformerSpec& spec);

// The presets: model files, models/presets/NAME.textproto, compiled into the program
// (TransformerPresetFiles) and read by ReadTransformerPresetFile, all on first use. In the order
// `ppsim model --list` prints them; FindTransformerPreset matches names case-insensitively and
// returns null when there is none.
const std::vector<TransformerSpec>& TransformerPresets();
const TransformerSpec* FindTransformerPreset(std::string_view name);
std::string TransformerPresetNames();  // "gpt3-1.5b, ..., llama3-405b, ..." for messages

// OK when every preset file loaded; otherwise Internal with ReadTransformerPresetFile's messages
// (a bug in this build, never the user's), and the presets above lack the files that failed.
Status TransformerPresetsStatus();

// The preset files, in the order of TransformerPresets(): "presets/NAME.textproto" (generated by
// ppsim_embed from models/CMakeLists.txt's list).
EmbeddedFiles TransformerPresetFiles();

// Reads one preset file as TransformerPresets does: ParseConfig, then TransformerFromProto. Its
// name must be the file's. Internal when the file does not load, "the model preset NAME does not
// load (a bug in this build of ppsim):" then the reader's messages, one per line, located in the
// file ("models/presets/NAME.textproto:LINE:COL: field: ...").
Status ReadTransformerPresetFile(const EmbeddedFile& file, TransformerSpec* spec);

// A model read from a file (model.proto), with defaults applied (ffn_hidden 4h, kv_heads = heads,
// head_dim hidden / heads; name: locations.Where("name"), the file) and checked: mlp, norm and
// tied_embeddings given (no default is assumed for them; each missing one is reported, "FILE:
// mlp: missing; give GELU (GPT's layer: ...) or SWIGLU (...)"), layers, hidden, heads, vocab and
// seq_len at least 1, ffn_hidden, kv_heads and head_dim not negative, heads divide hidden (without
// head_dim), kv_heads divide heads. Every error is reported, one per line, as "FILE:LINE:COL:
// field: what is wrong", e.g. "m.yaml:3:9: heads: 48 does not divide hidden 4096". On error *spec
// is unspecified.
Status TransformerFromProto(const proto::TransformerModel& model, const ConfigLocations& locations,
                            TransformerSpec* spec);

// kFp8: Transformer Engine's FP8 (Hopper and later: E4M3/hybrid, per-tensor or blockwise
// scaling); kMxfp8: Blackwell's MXFP8 (1 byte per value and one E8M0 scale byte per block of 32;
// the GPU's gpu.mxfp8 capability, platforms/cluster.proto), its GEMMs at the FP8 peak.
enum class Dtype { kBf16, kFp16, kFp8, kMxfp8 };
enum class Recompute { kNone, kSelective, kFull };
// Either FP8 recipe: the linear layers' GEMMs in 8 bits (models/op_costs.h).
inline bool IsFp8(Dtype dtype) { return dtype == Dtype::kFp8 || dtype == Dtype::kMxfp8; }

// Megatron-core's selective recomputation modules (TransformerConfig.recompute_modules, a bit
// each): what a layer discards in the forward and recomputes in the backward for inputs (I).
// See "Recomputation by module" below for the bytes and ops of each.
enum RecomputeModule : uint32_t {
  kRecomputeCoreAttn = 1,
  kRecomputeMlp = 2,
  kRecomputeMoe = 4,
  kRecomputeMoeAct = 8,
  kRecomputeLayernorm = 16,
  kRecomputeMlaUpProj = 32,
  kRecomputeSharedExperts = 64,
};
// Megatron's recompute_method with full granularity: kAll (ppsim's default: every layer
// recomputed, one checkpoint per layer), kUniform (groups of recompute_num_layers layers, each
// group's input kept), kBlock (the first recompute_num_layers layers of each virtual stage
// recomputed, the others keep everything).
enum class RecomputeMethod { kAll, kUniform, kBlock };

// "bf16", "fp16", "fp8" / "none", "selective", "full" (any case); messages start with `what`
// (where the value was written): "--dtype: unknown value 'fp32'; valid: bf16, fp16, fp8".
Status ParseDtype(std::string_view what, std::string_view text, Dtype* dtype);
Status ParseRecompute(std::string_view what, std::string_view text, Recompute* recompute);
std::string_view DtypeName(Dtype dtype);
std::string_view RecomputeName(Recompute recompute);
// Bytes of one element of a tensor passed between stages (2 for bf16/fp16, 1 for fp8/mxfp8).
int64_t DtypeBytes(Dtype dtype);
// "core_attn,mlp,..." (Megatron's names, comma- or space-separated, each once) into a mask of
// RecomputeModule; messages start with `what`: "--recompute-modules: unknown module 'attn';
// valid: core_attn, mlp, moe, moe_act, layernorm, mla_up_proj, shared_experts". Empty: error.
Status ParseRecomputeModules(std::string_view what, std::string_view text, uint32_t* modules);
// The mask's names in the order above, comma-separated ("core_attn,moe_act").
std::string RecomputeModulesName(uint32_t modules);
// "uniform", "block" (kAll has no Megatron name: "").
Status ParseRecomputeMethod(std::string_view what, std::string_view text, RecomputeMethod* method);
std::string_view RecomputeMethodName(RecomputeMethod method);

// Context parallelism's communication, Megatron-core's --cp-comm-type with Transformer Engine's
// attention (transformer_engine/pytorch/attention: AttnFuncWithCPAndKVP2P, ...KVAllGather,
// ...QKVOA2A). Per layer and GPU, with t = tp, c = cp, sb = s b / c this GPU's tokens, widths in
// elements and 16-bit activations:
//   kP2p: ring attention, overlapped with the attention: the forward passes K and V
//     (2 sb (k + v) / t bytes) around the ring c - 1 times; the backward passes K, V and their
//     gradients, twice that (plus a forward's worth when recomputing).
//   kAllGather: K and V all-gathered before the attention (a ring all-gather: each GPU sends
//     (c - 1) x its block, the bytes of kP2p's forward) and, in the backward, gathered again and
//     their gradients reduce-scattered (kP2p's backward bytes); not overlapped: the attention
//     waits for them.
//   kA2a (DeepSpeed-Ulysses): all-to-alls of Q (2 sb q / t bytes per GPU), K and V
//     (2 sb k / t, 2 sb v / t) before the attention (heads scattered, sequence gathered) and of
//     the output (2 sb q / t) after it; in the backward the same for the gradients (dO before,
//     dQ, dK, dV after); (c - 1) / c of each leaves the GPU. Not overlapped. Needs c to divide
//     the heads / t and the KV heads / t.
// The engines run a kAllGather or kA2a exchange as each GPU sending its bytes to its ring
// successor before the task's compute (StageCosts::cp_serial): for the all-to-all, each GPU's
// c - 1 flows of 1/c each leave through its one port or NIC and the c - 1 it receives enter
// through one, so on NVSwitch nodes and one-NIC-per-GPU fabrics with equal route latencies this is
// its time; what differs (routes of different latency) is not modelled.
//   kA2aP2p (hierarchical, Megatron's --hierarchical-context-parallel-sizes A B, A B = c): kA2a
//     inside each inner group of A consecutive context-parallel GPUs (Megatron-core's
//     create_hierarchical_groups: level 0 the CP ranks j..j + A - 1, level 1 those j mod A
//     apart), (A - 1) / A of Q, K, V, O (and of dO, dQ, dK, dV) leaving each GPU, serial; then
//     kP2p's ring over the B outer GPUs, alongside the attention: B - 1 steps of K and V of
//     heads / A for A sb tokens, the same bytes as the GPU's own K and V (2 sb (k + v) / t).
//     Needs A to divide the heads / t and the KV heads / t. The engines run the inner exchange
//     as a PartKind::kCpA2a part (each GPU to its successor in its inner group) before the
//     compute, then the ring (slice j to slice j + A) alongside it.
enum class CpCommType { kP2p, kAllGather, kA2a, kA2aP2p };
// "p2p", "allgather", "a2a", "a2a+p2p". Messages start with `what`.
Status ParseCpCommType(std::string_view what, std::string_view text, CpCommType* type);
std::string_view CpCommTypeName(CpCommType type);

struct TrainingSetup {
  int64_t seq_len = 0;          // s
  int64_t microbatch_size = 1;  // b
  Dtype dtype = Dtype::kBf16;
  // The parallel degrees (base/parallel_layout.h). For the model: tensor parallelism t = tp
  // (divides heads, kv_heads, ffn); context parallelism c = cp: each GPU of a rank's group holds
  // s/c of every sequence (2c chunks, GPU j the j-th and the (2c - 1 - j)-th, so that causal
  // attention is balanced) and ring attention passes K and V around the c GPUs (Megatron-core with
  // Transformer Engine); data parallelism dp; expert parallelism e = ep (a model with routed
  // experts): each MoE layer's experts are sharded over e GPUs of a stage's dp x tp x cp GPUs
  // (Megatron-core's expert groups, with expert tensor parallelism 1: every expert whole on one
  // GPU); tokens reach them by all-to-alls. pp is the schedule's ranks.
  ParallelLayout layout;
  int32_t GpusPerRank() const { return layout.GpusPerRank(); }
  bool sequence_parallel = false;  // Megatron's sequence parallelism (with tp > 1)
  Recompute recompute = Recompute::kNone;
  // With kSelective: the modules recomputed (RecomputeModule bits); 0 means core_attn, Megatron's
  // default list (RecomputeModulesOf).
  uint32_t recompute_modules = 0;
  // With kFull: which layers (RecomputeMethod) and N, recompute_num_layers (>= 1 unless kAll).
  RecomputeMethod recompute_method = RecomputeMethod::kAll;
  int32_t recompute_num_layers = 0;
  // Megatron's fine-grained activation offloading (--offload-modules): OffloadModule bits, 0 none
  // (models/offload.h).
  uint32_t offload_modules = 0;
  bool flash_attention = true;
  CpCommType cp_comm_type = CpCommType::kP2p;  // with cp > 1
  // With kA2aP2p: A, the inner (all-to-all) group's size; cp / A GPUs form the outer ring.
  int32_t cp_a2a_size = 0;
  // ZeRO stage: 0; 1 shards the optimizer state over dp x cp (Megatron's distributed optimizer);
  // 2 the gradients too; 3 everything, as FSDP2 (torchtitan's fully_shard) does: see
  // ShardedMemory below.
  int32_t zero_stage = 0;
  // ZeRO-3: the data-parallel replicas each parameter is sharded over, S (HSDP: shard over S,
  // replicate over dp / S); 0: dp. REQUIRES S divides dp.
  int32_t dp_shard = 0;
  // ZeRO-3: whether a unit's 16-bit parameters are freed after its forward and gathered again for
  // its backward (FSDP2's reshard_after_forward). Default: torchtitan's "default" policy, on
  // without pipeline parallelism (pp 1) and off with it.
  enum class Reshard { kDefault, kOn, kOff };
  Reshard reshard_after_forward = Reshard::kDefault;
  bool ReshardAfterForward() const {
    return reshard_after_forward == Reshard::kDefault ? layout.pp == 1
                                                      : reshard_after_forward == Reshard::kOn;
  }
  // ZeRO-2: the gradient bucket in flight (--grad-bucket); 0: the stage's gradients are one bucket.
  int64_t grad_bucket_bytes = 0;
  // Main gradients in fp32 (Megatron-LM's default for 16-bit training,
  // --accumulate-allreduce-grads-in-fp32), else in the parameters' 16 bits.
  bool fp32_grads = true;
  // Bytes per parameter kept on every GPU of the data-parallel group, and bytes sharded over it
  // with ZeRO-1 (Megatron's distributed optimizer); -1: the precision recipe's (RecipeBytes).
  int64_t replicated_bytes_per_param = -1;
  int64_t sharded_bytes_per_param = -1;
};

// The cp_comm_type checks of CheckTrainingSetup (models/context_parallel.cc): a2a needs cp to
// divide the heads and KV heads per tensor-parallel GPU, a2a+p2p A to (and A to divide cp, A and
// cp / A >= 1); a2a, allgather and a2a+p2p are not modelled with expert parallelism. Messages
// start at the cp_comm_type field (cp_a2a_size's at that field).
Status CheckCpCommType(const TransformerSpec& spec, const TrainingSetup& setup,
                       const Locator& where);
// The sharding fields (models/sharding.cc): zero 0 to 3; 2 and 3 with routed experts only when
// they shard as dense parameters (ExpertsShardAsDense); dp_shard with zero 3 only, dividing dp;
// reshard_after_forward with zero 3 only. Part of CheckTrainingSetup.
Status CheckSharding(const TransformerSpec& spec, const TrainingSetup& setup, const Locator& where);
// With ZeRO-2/3, ep 1 and tp 1 every GPU holds every expert and the experts' group is the dense
// parameters' (dp x cp): they shard, and are reduced and gathered, with them (torchtitan's FSDP of
// a MoE model without expert parallelism: each block one FSDP unit, experts included).
bool ExpertsShardAsDense(const TrainingSetup& setup);

// The recomputation fields against the model, as Megatron's TransformerConfig checks them:
// modules only with selective ("--recompute-modules: applies to selective recomputation ..."),
// mla_up_proj with MLA, moe and moe_act with experts, shared_experts with shared experts (each
// refusal names the valid modules); a method only with full, and N >= 1 with it. Part of
// CheckTrainingSetup (messages start where the field was written).
Status CheckRecomputeSetup(const TransformerSpec& spec, const TrainingSetup& setup,
                           const Locator& where);

// The modules a setup recomputes: its recompute_modules with kSelective (core_attn when 0), none
// otherwise.
uint32_t RecomputeModulesOf(const TrainingSetup& setup);

// Bytes per parameter of mixed-precision Adam as Megatron-LM's distributed-optimizer guide gives
// them (docs/source/api-guide/dist_optimizer.md, "theoretical number of bytes per parameter"):
// 16-bit parameters with fp32 gradients 18 = 6 + 12/d (parameter 2 and gradient 4 on every GPU;
// fp32 main parameter, Adam's two moments 12, sharded with ZeRO-1), 16-bit gradients 20 =
// 4 + 16/d (the fp32 main gradient joins the sharded state). Values given override both.
struct ParamBytes {
  int64_t replicated = 0;
  int64_t sharded = 0;
};
ParamBytes RecipeBytes(const TrainingSetup& setup);
// The gradients' bytes per parameter on every GPU: 4 with fp32 gradients, else 2.
int64_t GradientBytesPerParameter(const TrainingSetup& setup);

// Checks a setup against a model (positive sizes; tp divides heads, kv_heads, ffn_hidden and the
// shared experts' channels; zero_stage 0 to 3, 2 and 3 without routed experts; dp_shard
// dividing dp and only with zero 3, as reshard_after_forward; replicated bytes per parameter at
// least the gradients' (bytes_per_param); 2cp divides seq_len, and cp > 1 needs flash attention; a
// MoE model with tp > 1 needs sequence parallelism, as Megatron-core asserts; ep at least 1, above
// 1 only for a model with experts, dividing the experts and the dp x tp x cp GPUs of a stage);
// messages start where the field was written (fields tp, cp, seq_len, microbatch_size, dp, zero,
// dp_shard, reshard_after_forward, ep): "--tp: 3 does not divide the 32 heads of llama3-8b",
// "--zero: 4 is not a ZeRO stage; valid: 0, 1, 2, 3", "--ep: 3 does not divide the 8 experts of
// mixtral-8x7b". The other functions below REQUIRE a setup that passes.
Status CheckTrainingSetup(const TransformerSpec& spec, const TrainingSetup& setup,
                          const Locator& where);

// A dense layer (the MLP of ffn_hidden) or a MoE layer (router and experts; a model with experts).
enum class LayerKind { kDense, kMoe };

// One transformer layer for one microbatch on one GPU of the tensor-parallel group.
struct LayerCosts {
  double forward_flops = 0;
  double backward_input_flops = 0;
  double backward_weight_flops = 0;
  int64_t activation_bytes = 0;    // M_B
  int64_t activation_w_bytes = 0;  // M_W
};
LayerCosts TransformerLayerCosts(const TransformerSpec& spec, const TrainingSetup& setup,
                                 LayerKind kind = LayerKind::kDense);

// A layer's model FLOPs per pass split into its attention part (the attention's matmuls and core,
// and a MoE layer's router) and its MLP part (the MLP, or the routed and shared experts), on one
// GPU per microbatch; I without a full recompute's forward (selective recompute's attention core
// is in I's attention part). Parts of LayerCosts's sums.
struct LayerPartFlops {
  double forward_attention = 0;
  double forward_mlp = 0;
  double input_attention = 0;
  double input_mlp = 0;
  double weight_attention = 0;
  double weight_mlp = 0;
};
LayerPartFlops TransformerLayerPartFlops(const TransformerSpec& spec, const TrainingSetup& setup,
                                         LayerKind kind);

// How layers go to the stages of one pipeline.
struct LayerSplit {
  std::vector<int32_t> layers_per_stage;  // Explicit (--layers-per-stage); empty: even split.
  bool embedding_as_layer = false;        // Megatron's account-for-embedding-in-pipeline-split
  bool loss_as_layer = false;             // Megatron's account-for-loss-in-pipeline-split
};

// Layers of each of `num_stages` stages (all virtual stages of one pipeline, in order). An even
// split gives the first (slots mod stages) stages one slot more, where slots are the layers plus
// one for each of the embedding and the loss counted as a layer; that layer slot is then taken
// from the first (embedding) or last (loss) stage, as Megatron's
// --account-for-{embedding,loss}-in-pipeline-split do (the zero-bubble paper's 22 layers on 8
// stages: 2, 3, 3, 3, 3, 3, 3, 2).
// Every stage needs a slot ("--pp: 8 stages for the 6 layers of NAME; each stage needs at least
// one"). An explicit list must have one entry per stage, each at least 0, and sum to the model's
// layers ("--layers-per-stage: 3 entries for 4 stages; give one per stage", "--layers-per-stage:
// the entries sum to 30; the model has 32 layers"); it cannot be combined with the two options.
// Messages start where pp or layers_per_stage was written.
Status SplitLayers(const TransformerSpec& spec, int32_t num_stages, const LayerSplit& split,
                   const Locator& where, std::vector<int32_t>* layers_per_stage);

// One virtual stage of one pipeline, per GPU of the tensor-parallel group.
struct StageModel {
  int32_t layers = 0;
  // Of them, MoE layers: stage i of a pipeline holds its global layers [start, start + layers) in
  // order, the first first_dense_layers of the model dense. 0 for a dense model.
  int32_t moe_layers = 0;
  // Of them, recomputed whole (--recompute full: all, or the first N with the block method), and
  // the MoE layers among those.
  int32_t recomputed_layers = 0;
  int32_t recomputed_moe_layers = 0;
  bool embedding = false;  // the pipeline's first stage
  bool lm_head = false;    // the pipeline's last stage (LM head and loss)
  // Held by this GPU: its share (/ t, rounded up) of the layers, the embedding, the final norm and
  // the head. With tied embeddings the last stage of a pipeline of several stages holds its own
  // copy of the embedding for the head, as Megatron does (kept in sync by an all-reduce). A MoE
  // layer's attention, norms and shared experts are shared over t like a dense layer's; its
  // router is whole on every GPU (replicated over the tensor-parallel group, as Megatron-core's);
  // its routed experts are expert_parameters.
  int64_t parameters = 0;
  // The routed experts among them: E/e whole experts per MoE layer (expert tensor parallelism 1).
  int64_t expert_parameters = 0;
  double forward_flops = 0;
  double backward_input_flops = 0;
  double backward_weight_flops = 0;
  int64_t activation_bytes = 0;
  int64_t activation_w_bytes = 0;
  // The boundary tensor of the rank, s * b * h * DtypeBytes, every stage. With --tp t the
  // platform splits it over the group's t GPUs (each sends its sequence-parallel shard, or
  // Megatron's scatter-gather slice without sequence parallelism).
  int64_t message_bytes = 0;
  // This GPU's gradients (4 bytes per parameter, or 2 with 16-bit gradients; part of
  // static_bytes): what the data-parallel all-reduce moves. All of them, the experts' included.
  int64_t gradient_bytes = 0;
  // The routed experts' part of gradient_bytes, synchronised over the expert-data-parallel group
  // (the dp x tp x cp / e GPUs holding the same experts) instead of the data-parallel replicas.
  int64_t expert_gradient_bytes = 0;
  // Parameters, gradients and optimizer state: RecipeBytes per parameter, the sharded part
  // divided (rounded up) with ZeRO-1 by dp x cp, and the routed experts' by the
  // expert-data-parallel group dp x tp x cp / e. static_bytes = weight_bytes + gradient_bytes +
  // optimizer_state_bytes: the weights are the replicated bytes less the gradients' (2 per
  // parameter with the recipe's), the optimizer state is the sharded part.
  int64_t static_bytes = 0;
  int64_t weight_bytes = 0;
  int64_t optimizer_state_bytes = 0;
  // ZeRO-2 and 3 (ShardedMemory): the gradients each GPU reduce-scatters, the stage's whole
  // (gradient_bytes then holds its shard and what is in flight); 0: gradient_bytes.
  int64_t gradient_sync_bytes = 0;
  // ZeRO-3: the stage's FSDP units (torchtitan's fully_shard calls: the embedding, each layer, the
  // final norm with the head) and the 16-bit parameters one GPU gathers for all of them.
  int32_t fsdp_units = 0;
  int64_t fsdp_gather_bytes = 0;
  // Adam's step on this GPU's parameters (its 1/dp shard with ZeRO-1): per parameter it reads the
  // fp32 main gradient, main parameter and two moments (16 bytes) and writes the main parameter,
  // the moments and the 16-bit parameter (14): 30 bytes; with 16-bit gradients the main gradient
  // is first made from the 16-bit one (2 read, 4 written): 36. HBM-bound, so its time is these
  // bytes over the GPU's HBM bandwidth.
  int64_t optimizer_step_bytes = 0;
  // Tensor-parallel collectives (t > 1), as Megatron-LM's tensor-parallel layers issue them, each
  // of the whole s x b x h activation S in 16 bits, in ring steps (2(t - 1) per all-reduce, t - 1
  // per reduce-scatter or all-gather) of S/t bytes per GPU: per layer, F all-reduces the attention
  // and MLP outputs and I the gradients of their inputs (with sequence parallelism each becomes a
  // reduce-scatter and an all-gather: the same steps); full recompute repeats the forward's in I;
  // the vocabulary-parallel embedding all-reduces its output in F (sequence parallelism:
  // reduce-scatters it, and all-gathers its gradient in I); the head's input is all-reduced in I
  // (sequence parallelism: all-gathered in F, reduce-scattered and gathered again in I). The
  // cross-entropy's all-reduces of per-token scalars are not counted. With context parallelism
  // the tensor-parallel groups are the c slices of the rank's group, each on its s/c tokens. With
  // sequence parallelism
  // the backward all-gathers QKV's and the MLP's inputs again for their weight gradients
  // (Megatron keeps only the shard).
  int32_t tp_forward_steps = 0;
  int32_t tp_backward_steps = 0;
  int64_t tp_step_bytes = 0;
  // Context parallelism (c > 1): the bytes each GPU sends to the next of the c GPUs of its ring
  // attention in F and in I: per layer, F passes its K and V blocks c - 1 times (4(s/c)b h_kv/t
  // bytes each); the backward passes them again and their gradients back (twice F); recompute
  // (full or selective: the attention runs again) repeats F's in I.
  int64_t cp_forward_bytes = 0;
  int64_t cp_backward_bytes = 0;
  // a2a+p2p: the inner all-to-alls' bytes each GPU sends in F and in I (cp_* above: the outer
  // ring's).
  int64_t cp_a2a_forward_bytes = 0;
  int64_t cp_a2a_backward_bytes = 0;
  // Per MoE layer (0 without): the bytes this GPU sends in the token dispatch all-to-all to its
  // expert-parallel group (itself included), T_g k h x DtypeBytes, and in the combine, T_g k h x 2
  // (16-bit), with T_g = bs/(c t) the layer's tokens on this GPU (models/transformer.h, MoE).
  int64_t dispatch_bytes = 0;
  int64_t combine_bytes = 0;
};

// The stages of one pipeline with `layers_per_stage` layers each: the embedding on the first, the
// final norm, LM head and loss on the last. REQUIRES: CheckTrainingSetup(spec, setup) is OK.
// Hierarchical context parallelism (CpCommType::kA2aP2p, models/context_parallel.cc): sets a
// stage's inner all-to-all bytes (cp_a2a_*: (A - 1) / A of `qkvo`, the GPU's Q, K, V and O, each
// way, per layer and once more per `recomputed` layer) and its outer ring's (cp_*: B - 1 of
// `kv_block` in F, twice that in I, plus F's per recomputed layer), for `layers` layers.
void CpHierarchicalBytes(const TrainingSetup& setup, int64_t qkvo, int64_t kv_block,
                         int64_t recomputed, int32_t layers, StageModel* stage);
// Appends a stage's inner all-to-all bytes to `costs` and sets its inner group size (a2a+p2p
// only; nothing otherwise).
void AddCpA2aCosts(const TrainingSetup& setup, const StageModel& stage, StageCosts* costs);
// The last stage's multi-token prediction modules beyond their transformer layers (which
// BuildStageModels counts among the stage's layers), models/multi_token_prediction.cc: per module
// the 2h -> h projection and the shared head (forward, input and weight gradients: 2 sb 2h h / t
// and 2 sb h V/t FLOPs each), their kept activations (12 sb h' + 4 sb V/t bytes; W's 6 sb h' +
// 2 sb V/t; h' = h/t with sequence parallelism) and parameters (2h^2 + 3 norms, plus the
// embedding when the stage lacks it and the embeddings are untied) added to `parameters` (before
// the split over t). Nothing unless stage->lm_head and spec.mtp_layers > 0.
void AddMtpCosts(const TransformerSpec& spec, const TrainingSetup& setup, int64_t sb,
                 int64_t h_per_gpu, int64_t vocab_shard, StageModel* stage, int64_t* parameters);

std::vector<StageModel> BuildStageModels(const TransformerSpec& spec, const TrainingSetup& setup,
                                         const std::vector<int32_t>& layers_per_stage);

// The model's costs of every stage, every field of StageCosts the model knows (flags and
// profiles override single fields: models/stage_costs.h OverrideStageCosts): durations (F, I, W and
// B = I + W, one entry of `seconds` per stage: models/op_costs.h); activations, messages, static
// memory and gradients (the routed experts' apart when the model has any); the optimizer step's
// HBM bytes (its seconds come with the platform); with ZeRO-1 over more than one GPU (dp x cp > 1)
// the dense parameters' gather; with tp > 1 the tensor-parallel collectives, with cp > 1 ring
// attention's bytes; with ep > 1 each stage's MoE layers: their number, one layer's parts (from
// seconds' moe_layer), whether full recompute reruns the forward, and the all-to-all bytes (with
// ep 1 the experts are all local, there is no all-to-all, and moe stays empty: F, I and W hold
// the experts' work). overlap_s stays empty. REQUIRES: seconds.size() == stages.size().
struct PassSeconds;
StageCosts ModelStageCosts(const std::vector<StageModel>& stages,
                           const std::vector<PassSeconds>& seconds, const TrainingSetup& setup);

}  // namespace ppsim

#endif  // PPSIM_MODELS_TRANSFORMER_H_
