// Context parallelism's communication types (Megatron's --cp-comm-type): names, and their checks
// against a model (models/transformer.h).
#include <string>

#include "base/names.h"
#include "models/stage_costs.h"
#include "models/transformer.h"

namespace ppsim {
namespace {
constexpr NamedValue<CpCommType> kCpCommTypes[] = {
    {"p2p", CpCommType::kP2p},
    {"a2a", CpCommType::kA2a},
    {"allgather", CpCommType::kAllGather},
    {"a2a+p2p", CpCommType::kA2aP2p},
};
}  // namespace

// The cp_comm_type checks of CheckTrainingSetup: a2a splits the heads (and the KV heads) of a
// tensor-parallel shard over the c GPUs; the serial exchanges run before the compute, which MoE
// layers' all-to-all parts replace (not modelled together).
Status CheckCpCommType(const TransformerSpec& spec, const TrainingSetup& setup,
                       const Locator& where) {
  const int64_t c = setup.layout.cp;
  const bool hierarchical = setup.cp_comm_type == CpCommType::kA2aP2p;
  if (hierarchical && (setup.cp_a2a_size < 1 || c % setup.cp_a2a_size != 0)) {
    return where.Invalid(
        "cp_a2a_size",
        (setup.cp_a2a_size < 1 ? std::string("missing or < 1")
                               : std::to_string(setup.cp_a2a_size) + " does not divide " +
                                     where.Name("cp") + " " + std::to_string(c)) +
            "; a2a+p2p needs the inner all-to-all group's size A, a divisor of "
            "cp (the outer ring has cp / A GPUs)");
  }
  if (!hierarchical && setup.cp_a2a_size != 0) {
    return where.Invalid("cp_a2a_size",
                         "applies with " + where.Name("cp_comm_type") + " a2a+p2p only");
  }
  if (c == 1 || setup.cp_comm_type == CpCommType::kP2p) return Status();
  const int64_t t = setup.layout.tp;
  const int64_t a2a = hierarchical ? setup.cp_a2a_size : c;  // the GPUs the heads scatter over
  if ((setup.cp_comm_type == CpCommType::kA2a || hierarchical) &&
      ((spec.heads / t) % a2a != 0 || (spec.kv_heads / t) % a2a != 0)) {
    const std::string field = hierarchical ? "cp_a2a_size" : "cp";
    return where.Invalid("cp_comm_type", std::string(CpCommTypeName(setup.cp_comm_type)) +
                                             " scatters each GPU's heads over " +
                                             where.Name(field) + " " + std::to_string(a2a) + ": " +
                                             std::to_string(a2a) + " must divide the " +
                                             std::to_string(spec.heads / t) + " heads and the " +
                                             std::to_string(spec.kv_heads / t) +
                                             " KV heads per tensor-parallel GPU of " + spec.name);
  }
  if (setup.layout.ep > 1) {
    return where.Invalid("cp_comm_type", std::string(CpCommTypeName(setup.cp_comm_type)) +
                                             " with expert parallelism is not modelled yet; "
                                             "use p2p");
  }
  return Status();
}

// Megatron's a2a+p2p (Transformer Engine's AttnFuncWithCPAndQKVOA2A on the inner group inside
// AttnFuncWithCPAndKVP2P on the outer): after the all-to-all each GPU holds heads / A of the
// A sb tokens of its inner group, so the K and V blocks it passes round the outer ring are as
// large as its own K and V before it.
void CpHierarchicalBytes(const TrainingSetup& setup, int64_t qkvo, int64_t kv_block,
                         int64_t recomputed, int32_t layers, StageModel* stage) {
  const int64_t a = setup.cp_a2a_size;
  const int64_t outer = setup.layout.cp / a;
  const int64_t a2a = qkvo * (a - 1) / a;
  stage->cp_a2a_forward_bytes = layers * a2a;
  stage->cp_a2a_backward_bytes = (layers + recomputed) * a2a;
  const int64_t forward = (outer - 1) * kv_block;
  stage->cp_forward_bytes = layers * forward;
  stage->cp_backward_bytes = layers * 2 * forward + recomputed * forward;
}

void AddCpA2aCosts(const TrainingSetup& setup, const StageModel& stage, StageCosts* costs) {
  if (setup.cp_comm_type != CpCommType::kA2aP2p) return;
  costs->cp_a2a_size = setup.cp_a2a_size;
  costs->cp_a2a_forward_bytes.push_back(stage.cp_a2a_forward_bytes);
  costs->cp_a2a_backward_bytes.push_back(stage.cp_a2a_backward_bytes);
}

Status ParseCpCommType(std::string_view what, std::string_view text, CpCommType* type) {
  return ParseNamed(kCpCommTypes, "value", what, text, type, /*ignore_case=*/false);
}

std::string_view CpCommTypeName(CpCommType type) { return NameOf(kCpCommTypes, type); }

}  // namespace ppsim
