// Hugging Face model configs (a checkpoint's config.json, as transformers' PretrainedConfig saves
// it) read into ppsim's transformer (models/transformer.h), for `--model config.json`.
//
// Architectures (the first of "architectures", or else "model_type"): LlamaForCausalLM,
// MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM,
// Qwen3MoeForCausalLM, DeepseekV3ForCausalLM; any other is refused with that list. Every one is
// a SwiGLU, RMSNorm layer (hidden_act must be "silu"). What is read, from the model classes of
// huggingface/transformers (modeling_<type>.py):
//   hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, vocab_size: required.
//   num_key_value_heads (default: the heads), head_dim (default hidden / heads; Qwen3 and
//   Mistral-Nemo give it, and heads x head_dim may differ from hidden), tie_word_embeddings
//   (default false, the classes' own default), rms_norm_eps (RMSNorm in every class).
//   The model's sequence length: rope_scaling.original_max_position_embeddings when given (the
//   pre-training context before a long-context extension: 8192 for Llama 3.1), else
//   max_position_embeddings (required then); a run's --seq-len overrides it.
//   Qwen2: biases on q, k and v (always). Qwen3 and Qwen3-MoE: the per-head q and k RMSNorms.
//   Llama, Qwen3, DeepSeek-V3: attention_bias and mlp_bias must be false (their biases on the
//   output projection and the MLP are not modelled).
//   Mixtral: num_local_experts, num_experts_per_tok; experts of intermediate_size, every layer.
//   Qwen3-MoE: num_experts, num_experts_per_tok, moe_intermediate_size; the dense layers (MLP of
//   intermediate_size) must come first: decoder_sparse_step 1 and mlp_only_layers [] or
//   [0, ..., k - 1]; no shared expert (shared_expert_intermediate_size 0 or absent).
//   DeepSeek-V3: multi-head latent attention (q_lora_rank, null for none; kv_lora_rank,
//   qk_nope_head_dim, qk_rope_head_dim, v_head_dim), n_routed_experts, num_experts_per_tok,
//   n_shared_experts, moe_intermediate_size, first_k_dense_replace, moe_layer_freq (must be 1),
//   the router's score correction bias (always), num_nextn_predict_layers the model's mtp_layers;
//   sliding windows are a stated assumption (attention is modelled full).
// Fields that do not change the cost (rope, dropout, initialisation, token ids, dtypes, routing
// scores and scaling, ...) and fields ppsim does not know are ignored and listed, one sentence
// each, in TransformerSpec::notes. Messages: "SOURCE: FIELD: what is wrong; what is valid"
// ("config.json: hidden_size: a string; give a whole number"), a JSON syntax error as
// "SOURCE:LINE:COL: ...".
#ifndef PPSIM_INTEROP_HF_CONFIG_H_
#define PPSIM_INTEROP_HF_CONFIG_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "models/transformer.h"

namespace ppsim {

// Whether `text` is meant as a Hugging Face config: a JSON object naming "architectures" or
// "model_type" at its top level, or text that does not parse as JSON but names either key (a
// damaged config.json then gets ReadHfConfig's message). Decided by content, not by file name.
bool LooksLikeHfConfig(std::string_view text);

// Reads `text` (from `source`, named in messages) into *spec, checked as a model file is
// (TransformerFromProto); its name is `source`. On error *spec is unspecified.
Status ReadHfConfig(std::string_view text, const std::string& source, TransformerSpec* spec);

}  // namespace ppsim

#endif  // PPSIM_INTEROP_HF_CONFIG_H_
