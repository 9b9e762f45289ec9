// Megatron's fine-grained activation offloading: module names, checks and bytes
// (models/offload.h).
#include "models/offload.h"

#include "base/names.h"
#include "models/layer_parts.h"
#include "models/module_list.h"

namespace ppsim {
namespace {

// Megatron-core's names (TransformerConfig.offload_modules), in its documentation's order.
constexpr NamedValue<uint32_t> kOffloadModules[] = {
    {"attn_norm", kOffloadAttnNorm}, {"qkv_linear", kOffloadQkvLinear},
    {"core_attn", kOffloadCoreAttn}, {"attn_proj", kOffloadAttnProj},
    {"mlp_norm", kOffloadMlpNorm},   {"expert_fc1", kOffloadExpertFc1},
    {"moe_act", kOffloadMoeAct},
};

}  // namespace

Status ParseOffloadModules(std::string_view what, std::string_view text, uint32_t* modules) {
  return ParseModuleList(kOffloadModules, what, text, modules);
}

std::string OffloadModulesName(uint32_t modules) {
  return ModuleListName(kOffloadModules, modules);
}

Status CheckOffloadSetup(const TransformerSpec& spec, const TrainingSetup& setup,
                         const Locator& where) {
  const uint32_t m = setup.offload_modules;
  if (m == 0) return Status();
  auto refuse = [&](const std::string& why) { return where.Invalid("offload_modules", why); };
  if (setup.recompute == Recompute::kFull) {
    return refuse("offloads module inputs that " + where.Name("recompute") +
                  " full does not keep (a layer keeps its input only); valid: recompute none or "
                  "selective");
  }
  if ((m & kOffloadAttnProj) && !(m & kOffloadCoreAttn)) {
    return refuse(
        "attn_proj needs core_attn too, as Megatron requires (attn_proj's input is "
        "core_attn's output, which core_attn's backward needs)");
  }
  if ((m & (kOffloadExpertFc1 | kOffloadMoeAct)) && !spec.moe()) {
    return refuse(std::string(m & kOffloadExpertFc1 ? "expert_fc1" : "moe_act") +
                  " needs a model with experts; " + spec.name +
                  " is dense (valid: attn_norm, qkv_linear, core_attn, attn_proj, mlp_norm)");
  }
  const uint32_t recomputed = RecomputeModulesOf(setup);
  if ((m & (kOffloadExpertFc1 | kOffloadMoeAct)) && (recomputed & kRecomputeMoe)) {
    return refuse(std::string(m & kOffloadExpertFc1 ? "expert_fc1" : "moe_act") +
                  " cannot be offloaded while the moe recompute module drops the whole MoE "
                  "layer's activations, as Megatron asserts; remove one of them");
  }
  if ((m & kOffloadQkvLinear) && (recomputed & kRecomputeLayernorm)) {
    return refuse(
        "qkv_linear moves norm 1's output, which the layernorm recompute module "
        "drops; remove one of them");
  }
  if ((m & kOffloadCoreAttn) && (recomputed & kRecomputeMlaUpProj)) {
    return refuse(
        "core_attn moves MLA's Q, K and V, which the mla_up_proj recompute module "
        "drops; remove one of them");
  }
  return Status();
}

int64_t LayerOffloadBytes(const TransformerSpec& spec, const TrainingSetup& setup, LayerKind kind) {
  const uint32_t m = setup.offload_modules;
  if (m == 0) return 0;
  const LayerParts p = LayerActivationParts(spec, setup, kind);
  int64_t bytes = 0;
  if (m & kOffloadAttnNorm) bytes += p.norm_inputs / 2;
  if (m & kOffloadQkvLinear) bytes += p.attn_norm_output;
  if (m & kOffloadCoreAttn) bytes += p.qkv;
  if (m & kOffloadAttnProj) bytes += p.context;
  if (m & kOffloadMlpNorm) bytes += p.norm_inputs / 2;
  if (kind == LayerKind::kMoe) {
    if (m & kOffloadExpertFc1) bytes += p.expert_fc1_input;
    if (m & kOffloadMoeAct) bytes += p.moe_act_input;
  }
  return bytes;
}

int64_t StageOffloadBytes(const TransformerSpec& spec, const TrainingSetup& setup,
                          const StageModel& stage) {
  if (setup.offload_modules == 0) return 0;
  return (stage.layers - stage.moe_layers) * LayerOffloadBytes(spec, setup, LayerKind::kDense) +
         stage.moe_layers * LayerOffloadBytes(spec, setup, LayerKind::kMoe);
}

}  // namespace ppsim
