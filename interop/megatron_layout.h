// Megatron-LM's custom pipeline layout, `--pipeline-model-parallel-layout`
// (megatron/core/transformer/pipeline_parallel_layer_layout.py, PipelineParallelLayerLayout):
// which layers each virtual pipeline stage holds, as a string such as
// "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL" (Megatron-Bridge's Llama 3 70B, PP 8 x VP 5).
//
// The language, as Megatron parses it (parse_str_to_list): commas are dropped (cosmetic); then each
// "(X)*n" whose X holds no ')' is unrolled to n copies of X, left to right; then each "c*n" to n
// copies of the one character c; then '|' separates stages and every other character is a layer:
// E the embedding, L the loss (LM head), t a decoder (transformer) layer, m an MTP layer. Stage i
// of the list is virtual stage i = vpp x PP + pp (rank pp's vpp-th stage), which is ppsim's
// numbering of an interleaved schedule's virtual stages. The checks are Megatron's
// (validate_layer_layout): the stages a multiple of PP; in layer order (virtual stages in order)
// E first and L last, each exactly once; as many t as the model's layers and m as its MTP layers;
// no decoder after an MTP layer; MTP layers all in one stage, the last virtual stage of its rank.
#ifndef PPSIM_INTEROP_MEGATRON_LAYOUT_H_
#define PPSIM_INTEROP_MEGATRON_LAYOUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ppsim {

struct MegatronLayout {
  int32_t virtual_stages_per_rank = 0;  // the stages / PP
  // Per virtual stage, in Megatron's (and ppsim's) order: its decoder layers and its MTP layers.
  // The embedding is on stage 0 and the loss on the last stage.
  std::vector<int32_t> decoder_layers;
  std::vector<int32_t> mtp_layers;
};

// The most layers and stage separators a layout may unroll to, checked before anything is built.
inline constexpr int64_t kMaxMegatronLayoutSymbols = 1'000'000;

// Parses and checks `text` for `pp` pipeline ranks and a model of `num_layers` decoder layers and
// `mtp_layers` MTP layers. Messages start with `where` (e.g. "--megatron:
// --pipeline-model-parallel-layout"): InvalidInput for a character that is no layer, an unrolling
// longer than kMaxMegatronLayoutSymbols, and each failed check, with what is valid.
Status ParseMegatronLayout(std::string_view text, int32_t pp, int32_t num_layers,
                           int32_t mtp_layers, const std::string& where, MegatronLayout* layout);

}  // namespace ppsim

#endif  // PPSIM_INTEROP_MEGATRON_LAYOUT_H_
