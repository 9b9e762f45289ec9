// Megatron-core's fine-grained activation offloading (--fine-grained-activation-offloading with
// --offload-modules; megatron/core/pipeline_parallel/fine_grained_activation_offload.py and
// TransformerConfig.offload_modules): each listed module's input, saved for the backward, is
// copied to host memory after the module's forward and copied back before its backward.
//
// Modules and the bytes each moves per layer on one GPU (models/layer_parts.h; T_r = sb/t tokens
// with sequence parallelism else sb, widths per GPU):
//   attn_norm   the input layernorm's input (the residual stream), 2 T_r h
//   qkv_linear  QKV's input (norm 1's output; MLA: the down projections'), T_r h in the run's
//               linear-input precision (2 bytes, FP8 1)
//   core_attn   Q, K and V (MHA/GQA 2sb(h_q + 2h_kv)/t; MLA's up-projected ones)
//   attn_proj   the projection's input (the attention's context); needs core_attn (Megatron
//               raises otherwise: core_attn's backward needs its output)
//   mlp_norm    the pre-MLP layernorm's input (the residual stream), 2 T_r h
//   expert_fc1  a MoE layer's permuted tokens, the grouped fc1's input, T_g k h (in precision)
//   moe_act     a MoE layer's fc1 outputs, the activation's input, SwiGLU 4 T_g k f_e (GELU 2)
// expert_fc1 and moe_act apply to MoE layers only (a dense layer's MLP has no offload module).
// Not modelled: fused_group_mlp, gdp_qkv (unknown names), --min-offloaded-tensor-size,
// --activation-offload-fraction, --delta-offload-bytes-across-pp-ranks.
#ifndef PPSIM_MODELS_OFFLOAD_H_
#define PPSIM_MODELS_OFFLOAD_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "base/locator.h"
#include "base/status.h"
#include "models/transformer.h"

namespace ppsim {

enum OffloadModule : uint32_t {
  kOffloadAttnNorm = 1,
  kOffloadQkvLinear = 2,
  kOffloadCoreAttn = 4,
  kOffloadAttnProj = 8,
  kOffloadMlpNorm = 16,
  kOffloadExpertFc1 = 32,
  kOffloadMoeAct = 64,
};

// A list of Megatron's names separated by commas or spaces ("core_attn,attn_proj") into
// OffloadModule bits. Errors start with `what`: "--offload-modules: unknown module 'attn'; valid:
// attn_norm, qkv_linear, ..."; a name listed twice; an empty list.
Status ParseOffloadModules(std::string_view what, std::string_view text, uint32_t* modules);
// "core_attn,attn_proj": the names of the bits set, in the table's order.
std::string OffloadModulesName(uint32_t modules);

// Checks setup.offload_modules against the model and the recomputation, as Megatron's
// TransformerConfig does and where the same bytes would be both dropped and moved: attn_proj
// without core_attn; expert_fc1 or moe_act on a dense model or with the moe recompute module;
// qkv_linear with the layernorm module (norm 1's output is dropped); core_attn with mla_up_proj
// (MLA's Q, K, V are dropped); any module with --recompute full (a layer keeps its input only).
// Messages name where offload_modules was written.
Status CheckOffloadSetup(const TransformerSpec& spec, const TrainingSetup& setup,
                         const Locator& where);

// The bytes the modules move per microbatch for one layer of `kind` on one GPU.
int64_t LayerOffloadBytes(const TransformerSpec& spec, const TrainingSetup& setup, LayerKind kind);
// For a stage: its dense layers' and its MoE layers' sum.
int64_t StageOffloadBytes(const TransformerSpec& spec, const TrainingSetup& setup,
                          const StageModel& stage);

}  // namespace ppsim

#endif  // PPSIM_MODELS_OFFLOAD_H_
