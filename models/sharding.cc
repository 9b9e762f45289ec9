// The sharding options' checks (ZeRO stages, HSDP's shard group, the reshard policy) and which
// parameters shard with which (models/transformer.h).
#include <string>

#include "models/transformer.h"

namespace ppsim {

bool ExpertsShardAsDense(const TrainingSetup& setup) {
  return setup.zero_stage >= 2 && setup.layout.ep == 1 && setup.layout.tp == 1;
}

Status CheckSharding(const TransformerSpec& spec, const TrainingSetup& setup,
                     const Locator& where) {
  if (setup.zero_stage < 0 || setup.zero_stage > 3) {
    return where.Invalid(
        "zero", std::to_string(setup.zero_stage) + " is not a ZeRO stage; valid: 0, 1, 2, 3");
  }
  if (setup.zero_stage >= 2 && spec.moe() && !ExpertsShardAsDense(setup)) {
    return where.Invalid("zero", std::to_string(setup.zero_stage) + " with the routed experts of " +
                                     spec.name + " and " + where.Name("ep") + " " +
                                     std::to_string(setup.layout.ep) + ", " + where.Name("tp") +
                                     " " + std::to_string(setup.layout.tp) +
                                     " is not modelled (their expert-data-parallel sharding); "
                                     "valid with experts: 0, 1, or 2 and 3 with ep 1 and tp 1");
  }
  if (setup.dp_shard != 0 && setup.zero_stage != 3) {
    return where.Invalid("dp_shard", "shards parameters with " + where.Name("zero") +
                                         " 3 only; give " + where.Name("zero") + " 3");
  }
  if (setup.dp_shard < 0 || (setup.dp_shard > 0 && setup.layout.dp % setup.dp_shard != 0)) {
    return where.Invalid("dp_shard", std::to_string(setup.dp_shard) + " does not divide " +
                                         where.Name("dp") + " " + std::to_string(setup.layout.dp) +
                                         "; give a divisor of it (HSDP: shard over S, replicate "
                                         "over dp / S)");
  }
  if (setup.reshard_after_forward != TrainingSetup::Reshard::kDefault && setup.zero_stage != 3) {
    return where.Invalid("reshard_after_forward", "applies with " + where.Name("zero") + " 3 only");
  }
  return Status();
}

}  // namespace ppsim
