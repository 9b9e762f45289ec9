// PrepareRun's platform phase (experiments/run_phases.h).
#include "experiments/run_phases.h"
#include "platforms/cluster.h"

namespace ppsim {

Status PreparePlatform(PreparedRun* run) {
  const RunSpec& spec = run->spec;
  const Locator& where = *spec.where;
  ParallelLayout layout = spec.training.layout;
  layout.pp = run->schedule.num_ranks;
  RETURN_IF_ERROR(BuildPlatform(spec.platform, layout, where, &run->platform));
  const PlatformSpec& platform = run->platform;
  const std::string xml = platform.xml_file;
  if (spec.fold_replicas.value_or(false) && !xml.empty()) {
    return where.Invalid("replicas",
                         "one needs a cluster (a preset or a cluster file): the "
                         "routes of the XML platform " +
                             xml + " are known to SimGrid only; use " + where.Name("replicas") +
                             " all");
  }
  if (spec.training.layout.ep > 1 && !xml.empty()) {
    return where.Invalid("ep",
                         "needs a cluster (a preset or a cluster file): its all-to-alls "
                         "follow the cluster's routes; " +
                             xml + " is a SimGrid XML platform");
  }
  if (spec.comm_sms > 0 && spec.comm_sms >= platform.gpu.sms) {
    return where.Invalid("comm_sms", std::to_string(spec.comm_sms) + " SMs of the " +
                                         platform.gpu.name + "'s " +
                                         std::to_string(platform.gpu.sms) + "; valid: 0 to " +
                                         std::to_string(std::max(0, platform.gpu.sms - 1)));
  }
  if (spec.engine == EngineKind::kCriticalPath && !xml.empty()) {
    return where.Invalid("engine",
                         "critical-path needs a cluster (a preset or a cluster file); "
                         "the routes of the XML platform " +
                             xml + " are known to SimGrid only; use " + where.Name("engine") +
                             " simgrid");
  }
  return Status();
}

}  // namespace ppsim
