// Multi-token prediction (MTP) modules, DeepSeek-V3's (arXiv 2412.19437, Sec. 2.2) as Megatron-core
// builds them (megatron/core/transformer/multi_token_prediction.py: enorm, hnorm, eh_proj, one
// transformer layer, final_layernorm; the embedding and the output layer shared with the model),
// on the pipeline's last stage. Their transformer layers are costed as the stage's other layers
// (BuildStageModels counts them among the stage's layers); this file adds the rest.
#include <cstdint>

#include "models/transformer.h"

namespace ppsim {
namespace {
// One norm's parameters: RMSNorm a weight of h, LayerNorm a weight and a bias.
int64_t NormParameters(const TransformerSpec& spec) {
  return spec.rmsnorm ? spec.hidden : 2 * spec.hidden;
}
}  // namespace

int64_t TransformerSpec::MtpParameters() const {
  if (mtp_layers == 0) return 0;
  const int64_t layer = moe() ? MoeLayerParameters() : LayerParameters();
  return int64_t{mtp_layers} * (layer + 2 * hidden * hidden + 3 * NormParameters(*this));
}

void AddMtpCosts(const TransformerSpec& spec, const TrainingSetup& setup, int64_t sb,
                 int64_t h_per_gpu, int64_t vocab_shard, StageModel* stage, int64_t* parameters) {
  if (spec.mtp_layers == 0 || !stage->lm_head) return;
  const int64_t d = spec.mtp_layers;
  const double t = static_cast<double>(setup.layout.tp);
  const double tokens = static_cast<double>(sb);
  const double h = static_cast<double>(spec.hidden);
  // Per module: the projection of [norm(h_i); norm(emb(t_i+k))] (2h -> h) and the shared head
  // over the vocabulary, each a matmul whose backward computes input and weight gradients.
  const double projection = 2.0 * tokens * (2.0 * h) * h / t;
  const double head = 2.0 * tokens * h * static_cast<double>(vocab_shard);
  for (double* flops :
       {&stage->forward_flops, &stage->backward_input_flops, &stage->backward_weight_flops}) {
    *flops += static_cast<double>(d) * (projection + head);
  }
  // Kept for the backward (16-bit): the two norms' inputs (2 x 2 sb h), the projection's input
  // (2 sb 2h), the final norm's and the head's inputs (2 x 2 sb h) and the logits (4 sb V/t, as
  // the model's head); the weight gradients need the projection's and the head's inputs.
  stage->activation_bytes += d * (12 * sb * h_per_gpu + 4 * sb * vocab_shard);
  stage->activation_w_bytes += d * (6 * sb * h_per_gpu + 2 * sb * vocab_shard);
  // The projections and norms; the last stage holds the embedding too when it does not already
  // (Megatron's MTP stage builds one: pp > 1 with untied embeddings; tied, the head is it).
  *parameters += d * (2 * spec.hidden * spec.hidden + 3 * NormParameters(spec));
  if (!stage->embedding && !spec.tied_embeddings) *parameters += spec.vocab * spec.hidden;
}

}  // namespace ppsim
