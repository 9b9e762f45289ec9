// Megatron's recomputation modules and methods: names, and their checks against a model
// (models/transformer.h).
#include <algorithm>
#include <string>

#include "base/names.h"
#include "models/module_list.h"
#include "models/transformer.h"

namespace ppsim {
namespace {

// Megatron-core's names (transformer_config.py, recompute_modules), in RecomputeModule's order.
constexpr NamedValue<uint32_t> kRecomputeModules[] = {
    {"core_attn", kRecomputeCoreAttn},
    {"mlp", kRecomputeMlp},
    {"moe", kRecomputeMoe},
    {"moe_act", kRecomputeMoeAct},
    {"layernorm", kRecomputeLayernorm},
    {"mla_up_proj", kRecomputeMlaUpProj},
    {"shared_experts", kRecomputeSharedExperts},
};
constexpr NamedValue<RecomputeMethod> kRecomputeMethods[] = {
    {"uniform", RecomputeMethod::kUniform},
    {"block", RecomputeMethod::kBlock},
};

}  // namespace

Status ParseRecomputeModules(std::string_view what, std::string_view text, uint32_t* modules) {
  return ParseModuleList(kRecomputeModules, what, text, modules);
}

std::string RecomputeModulesName(uint32_t modules) {
  return ModuleListName(kRecomputeModules, modules);
}

Status ParseRecomputeMethod(std::string_view what, std::string_view text, RecomputeMethod* method) {
  return ParseNamed(kRecomputeMethods, "method", what, text, method, /*ignore_case=*/true);
}

std::string_view RecomputeMethodName(RecomputeMethod method) {
  return method == RecomputeMethod::kAll ? "" : NameOf(kRecomputeMethods, method);
}

uint32_t RecomputeModulesOf(const TrainingSetup& setup) {
  if (setup.recompute != Recompute::kSelective) return 0;
  return setup.recompute_modules != 0 ? setup.recompute_modules : kRecomputeCoreAttn;
}

// Megatron's combinations (TransformerConfig.__post_init__): modules with selective granularity,
// mla_up_proj with MLA, the MoE modules with experts; a method and N >= 1 with full.
Status CheckRecomputeSetup(const TransformerSpec& spec, const TrainingSetup& setup,
                           const Locator& where) {
  const uint32_t m = setup.recompute_modules;
  if (m != 0 && setup.recompute != Recompute::kSelective) {
    return where.Invalid("recompute_modules", "applies to selective recomputation (" +
                                                  where.Name("recompute") + " selective), not " +
                                                  std::string(RecomputeName(setup.recompute)) +
                                                  "; full recomputes whole layers");
  }
  auto refuse = [&](std::string_view module, const std::string& why) {
    return where.Invalid("recompute_modules", std::string(module) + " " + why);
  };
  if ((m & kRecomputeMlaUpProj) && !spec.mla) {
    return refuse("mla_up_proj", "needs multi-head latent attention; " + spec.name +
                                     " has none (valid: core_attn, mlp, layernorm" +
                                     (spec.moe() ? ", moe, moe_act, shared_experts)" : ")"));
  }
  if ((m & (kRecomputeMoe | kRecomputeMoeAct)) && !spec.moe()) {
    return refuse(m & kRecomputeMoe ? "moe" : "moe_act",
                  "needs a model with experts; " + spec.name +
                      " is dense (valid: core_attn, mlp, layernorm" +
                      (spec.mla ? ", mla_up_proj)" : ")"));
  }
  if ((m & kRecomputeSharedExperts) && spec.shared_experts == 0) {
    return refuse("shared_experts", "needs shared experts; " + spec.name + " has none");
  }
  if (setup.recompute_method != RecomputeMethod::kAll) {
    if (setup.recompute != Recompute::kFull) {
      return where.Invalid("recompute_method", "applies to " + where.Name("recompute") +
                                                   " full only, as Megatron asserts");
    }
    if (setup.recompute_num_layers < 1) {
      return where.Invalid("recompute_num_layers", "must be at least 1 with " +
                                                       where.Name("recompute_method") + "; got " +
                                                       std::to_string(setup.recompute_num_layers));
    }
  } else if (setup.recompute_num_layers != 0) {
    return where.Invalid("recompute_num_layers",
                         "needs " + where.Name("recompute_method") + " uniform or block");
  }
  return Status();
}

}  // namespace ppsim
