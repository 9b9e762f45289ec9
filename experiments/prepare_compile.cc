// PrepareRun's last phases: the parallel plans and the compiled task graph
// (experiments/run_phases.h).
#include <cmath>
#include <cstdio>

#include "experiments/run_phases.h"
#include "sim/collective_plans.h"

namespace ppsim {
namespace {

// Expert parallelism's programs fit the task budget, and folded groups line up with the ranks.
Status CheckExpertParallelism(const PreparedRun& run, const Parallelism& parallelism) {
  const RunSpec& spec = run.spec;
  const Locator& where = *spec.where;
  const int32_t gpus = spec.training.GpusPerRank();
  const int32_t ep = spec.training.layout.ep;
  // Folded, an experts' ring step stands for its group's members through a spliced route that
  // takes its predecessor's GPU of the rank to be its own: exact when the groups line up with the
  // ranks' GPUs.
  if (parallelism.fold_replicas && ep % gpus != 0 && gpus % ep != 0) {
    return where.Invalid("ep", std::to_string(ep) + " with " + std::to_string(gpus) +
                                   " GPUs per rank (tp x cp): with replicas folded the "
                                   "expert-parallel groups must divide or be a multiple of them; "
                                   "use " +
                                   where.Name("replicas") + " all");
  }
  // Each part of a program is recorded like a task (at most a forward's rest and 4 parts per MoE
  // layer, twice with full recomputation, in each of an action's two ops), and each flow of an
  // all-to-all is an activity of the simulation (a GPU's sends and, folded, its receives to and
  // from e - 1 peers; the links' loads walk every member's e - 1 routes once per rank).
  int32_t most = 0;
  for (const MoeStage& stage : run.costs.moe) most = std::max(most, stage.layers);
  const double dp = parallelism.fold_replicas ? 1 : spec.training.layout.dp;  // compiled
  const double parts = static_cast<double>(run.schedule.NumActions()) * dp * 2 * (1 + 8 * most);
  const double flows =
      parts / 2 * gpus * 2.0 * (ep - 1) +
      static_cast<double>(run.schedule.num_ranks) * spec.training.layout.dp * gpus * (ep - 1);
  if (parts + flows <= static_cast<double>(spec.max_tasks)) return Status();
  char text[200];
  std::snprintf(text, sizeof(text),
                "the MoE layers' parts and all-to-all flows come to about %.3g; the limit is %.3g",
                parts + flows, static_cast<double>(spec.max_tasks));
  return where.Invalid("ep", std::string(text) + " (" + where.Name("max_tasks") + ")");
}

// Gradient buckets need a cluster, and their rings fit the task budget.
Status CheckGradientBuckets(const PreparedRun& run, const Parallelism& parallelism) {
  const RunSpec& spec = run.spec;
  const Locator& where = *spec.where;
  if (!run.platform.xml_file.empty()) {
    return where.Invalid("grad_bucket",
                         "needs a cluster platform (a bucket's readiness is a "
                         "timer on a host ppsim adds to the cluster); " +
                             run.platform.xml_file + " is a SimGrid XML platform");
  }
  // Each bucket adds a ring per GPU of a group: checked before anything is allocated.
  double buckets = 0;
  for (int32_t stage = 0; stage < run.costs.num_stages(); ++stage) {
    const int64_t bytes = run.costs.DenseGradientBytes(stage);
    buckets += std::ceil(static_cast<double>(bytes) / static_cast<double>(spec.grad_bucket_bytes));
  }
  const ParallelLayout& layout = spec.training.layout;
  const double dp = parallelism.fold_replicas ? 1 : layout.dp;  // compiled
  const double members = layout.dp * layout.cp;                 // of each gradient ring
  const double tasks = buckets * (layout.tp * CollectiveTasksBound(members) * dp * layout.cp + dp);
  if (members <= 1 || tasks <= static_cast<double>(spec.max_tasks)) return Status();
  char text[200];
  std::snprintf(text, sizeof(text),
                "%.0f buckets of the stages' gradients make about %.3g all-reduce tasks; the "
                "limit is %lld",
                buckets, tasks, static_cast<long long>(spec.max_tasks));
  return where.Invalid(
      "grad_bucket", std::string(text) + " (" + where.Name("max_tasks") + "); give larger buckets");
}

}  // namespace

Status PrepareParallelism(PreparedRun* run) {
  const RunSpec& spec = run->spec;
  Parallelism& parallelism = run->parallelism;
  parallelism = Parallelism();
  parallelism.layout = run->platform.layout;
  parallelism.p2p_mode = spec.p2p_mode;
  parallelism.tp_comm_overlap = spec.tp_comm_overlap;
  parallelism.grad_bucket_bytes = spec.grad_bucket_bytes;
  parallelism.fold_replicas = FoldsReplicas(spec);
  parallelism.node_limited_routing = spec.moe_node_limit > 0;
  if (spec.comm_sms > 0) {
    const double sms = run->platform.gpu.sms;
    parallelism.overlap_compute_slowdown = sms / (sms - spec.comm_sms);
  }
  if (!run->costs.moe.empty()) RETURN_IF_ERROR(CheckExpertParallelism(*run, parallelism));
  if (spec.grad_bucket_bytes > 0) RETURN_IF_ERROR(CheckGradientBuckets(*run, parallelism));
  if (spec.training.layout.tp > 1 && run->platform.xml_file.empty()) {
    parallelism.tp_step_latency_s = TpStepLatencyS(run->platform);
  }
  return PlanCollectives(run->schedule, run->costs, run->platform, spec.training.layout.cp,
                         spec.grad_bucket_bytes,
                         spec.collective_algorithm ? &*spec.collective_algorithm : nullptr,
                         *spec.where, &parallelism, &run->collectives);
}

Status CompileRun(PreparedRun* run) {
  const Status compiled =
      CompileTaskGraph(run->schedule, run->costs, run->parallelism, &run->graph);
  if (compiled.code() == StatusCode::kInvalidInput) {
    // The only input the compiler refuses: an order the p2p mode cannot run.
    return run->spec.where->Invalid("p2p_mode", compiled.message());
  }
  return compiled;
}

}  // namespace ppsim
