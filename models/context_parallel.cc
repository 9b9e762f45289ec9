// Context parallelism's communication types (Megatron's --cp-comm-type): names, and their checks
// against a model (models/transformer.h).
#include <string>

#include "base/names.h"
#include "models/transformer.h"

namespace ppsim {
namespace {
constexpr NamedValue<CpCommType> kCpCommTypes[] = {
    {"p2p", CpCommType::kP2p},
    {"a2a", CpCommType::kA2a},
    {"allgather", CpCommType::kAllGather},
};
}  // namespace

// The cp_comm_type checks of CheckTrainingSetup: a2a splits the heads (and the KV heads) of a
// tensor-parallel shard over the c GPUs; the serial exchanges run before the compute, which MoE
// layers' all-to-all parts replace (not modelled together).
Status CheckCpCommType(const TransformerSpec& spec, const TrainingSetup& setup,
                       const Locator& where) {
  const int64_t c = setup.layout.cp;
  if (c == 1 || setup.cp_comm_type == CpCommType::kP2p) return Status();
  const int64_t t = setup.layout.tp;
  if (setup.cp_comm_type == CpCommType::kA2a &&
      ((spec.heads / t) % c != 0 || (spec.kv_heads / t) % c != 0)) {
    return where.Invalid("cp_comm_type", "a2a scatters each GPU's heads over " + where.Name("cp") +
                                             " " + std::to_string(c) + ": " + std::to_string(c) +
                                             " must divide the " + std::to_string(spec.heads / t) +
                                             " heads and the " + std::to_string(spec.kv_heads / t) +
                                             " KV heads per tensor-parallel GPU of " + spec.name);
  }
  if (setup.layout.ep > 1) {
    return where.Invalid("cp_comm_type", std::string(CpCommTypeName(setup.cp_comm_type)) +
                                             " with expert parallelism is not modelled yet; "
                                             "use p2p");
  }
  return Status();
}

Status ParseCpCommType(std::string_view what, std::string_view text, CpCommType* type) {
  if (text == "a2a+p2p") {
    return Status::InvalidInput(std::string(what) +
                                ": a2a+p2p (hierarchical context parallelism) is not modelled "
                                "yet; valid: p2p, a2a, allgather");
  }
  return ParseNamed(kCpCommTypes, "value", what, text, type, /*ignore_case=*/false);
}

std::string_view CpCommTypeName(CpCommType type) { return NameOf(kCpCommTypes, type); }

}  // namespace ppsim
