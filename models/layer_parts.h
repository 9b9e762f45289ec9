// A layer's saved tensors split by what can drop or move them: recomputation modules
// (models/recompute.cc, via LayerActivationBytes in models/transformer.cc) and activation offload
// modules (models/offload.cc). Internal to models/.
#ifndef PPSIM_MODELS_LAYER_PARTS_H_
#define PPSIM_MODELS_LAYER_PARTS_H_

#include <cstdint>

#include "models/transformer.h"

namespace ppsim {

// A layer's saved tensors by the module that can drop them (models/transformer.h, "Recomputation
// by module"), in bytes on one GPU; tensors that Transformer Engine's FP8 linear layers save as
// their input are counted in the run's precision. The *_input / *_output fields name parts of
// the sums above them that an offload module moves (models/offload.h).
struct LayerParts {
  int64_t norm_inputs = 0;       // the two norms' inputs (the residual stream), 16-bit, half each
  int64_t norm_outputs = 0;      // the two norms' outputs (layernorm)
  int64_t attn_norm_output = 0;  // of norm_outputs: norm 1's, QKV's input (qkv_linear)
  int64_t dropout_masks = 0;
  int64_t latents = 0;           // MLA's q_a/kv_a outputs and their norms' outputs
  int64_t qkv = 0;               // Q, K and V (mla_up_proj recomputes MLA's)
  int64_t context = 0;           // the attention's output, the projection's input
  int64_t scores = 0;            // without flash attention (core_attn)
  int64_t mlp = 0;               // a dense layer's MLP intermediates (mlp)
  int64_t moe = 0;               // a MoE layer's router, routed and shared experts (moe)
  int64_t moe_act = 0;           // of moe: the routed experts' activation output (moe_act)
  int64_t shared = 0;            // of moe: the shared experts' intermediates (shared_experts)
  int64_t expert_fc1_input = 0;  // of moe: the permuted tokens, grouped fc1's input
  int64_t moe_act_input = 0;     // of moe: fc1's outputs, the activation's input
  int64_t weight_grad = 0;       // M_W before the cap
};

// The parts of one layer of `kind` on one GPU (models/transformer.h's activation formulas).
LayerParts LayerActivationParts(const TransformerSpec& spec, const TrainingSetup& setup,
                                LayerKind kind);

}  // namespace ppsim

#endif  // PPSIM_MODELS_LAYER_PARTS_H_
