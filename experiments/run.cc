#include "experiments/run.h"

#include "experiments/run_phases.h"

namespace ppsim {

bool FoldsReplicas(const RunSpec& spec) {
  return spec.fold_replicas.value_or(!spec.platform.platform.ends_with(".xml"));
}

std::vector<std::string> InputFiles(const RunSpec& spec) {
  std::vector<std::string> files;
  for (const std::string& path : {spec.schedule_file, spec.profile_file, spec.model,
                                  spec.platform.platform, spec.platform.calibration_file}) {
    if (!path.empty()) files.push_back(path);
  }
  return files;
}

double TpStepLatencyS(const PlatformSpec& platform) {
  const int32_t first = platform.GpuOf(0, 0, 0);
  return platform.UncontendedTransferTime(first, first + 1, 0);
}

RunMemory RunMemoryOf(const RunSpec& spec, const PlatformSpec& platform, const StageCosts& costs) {
  RunMemory memory;
  memory.capacity_bytes =
      spec.memory_limit_bytes > 0 ? spec.memory_limit_bytes : platform.gpu.memory_bytes;
  // The default reserve applies when the run counts memory at all.
  bool counts_memory = false;
  for (int64_t bytes : costs.static_bytes) counts_memory = counts_memory || bytes > 0;
  for (int64_t bytes : costs.activation_bytes) counts_memory = counts_memory || bytes > 0;
  // The run's own reserve, else its calibration's, else the default.
  memory.reserve.fixed_bytes = spec.memory_reserve_bytes >= 0 ? spec.memory_reserve_bytes
                               : platform.calibrated_memory_reserve_bytes >= 0
                                   ? platform.calibrated_memory_reserve_bytes
                               : counts_memory ? kDefaultMemoryReserveBytes
                                               : 0;
  memory.reserve.activation_fraction = spec.activation_overhead >= 0 ? spec.activation_overhead
                                       : counts_memory ? kDefaultActivationOverhead
                                                       : 0;
  return memory;
}

Status PrepareRun(const RunSpec& request, PreparedRun* run, bool compile) {
  *run = PreparedRun();
  RETURN_IF_ERROR(PrepareWorkload(request, run));
  RETURN_IF_ERROR(PrepareSchedule(run));
  RETURN_IF_ERROR(PrepareModel(run));
  RETURN_IF_ERROR(PreparePlatform(run));
  RETURN_IF_ERROR(PrepareCosts(run));
  RETURN_IF_ERROR(CheckWorkload(*run));
  RETURN_IF_ERROR(PrepareExpertRouting(run));
  return compile ? CompletePreparedRun(run) : Status();
}

Status CompletePreparedRun(PreparedRun* run) {
  RETURN_IF_ERROR(PrepareParallelism(run));
  return CompileRun(run);
}

Status ExecuteRun(const PreparedRun& run, RunResult* result, Timeline* timeline_out,
                  SimGridProcess process, bool link_figures) {
  Timeline own;
  Timeline& timeline = timeline_out != nullptr ? *timeline_out : own;
  RETURN_IF_ERROR(Execute(run.spec.engine, run.graph, run.platform, &timeline, process));
  result->spec = run.spec;
  result->label = run.label;
  result->num_ranks = run.schedule.num_ranks;
  result->num_stages = run.schedule.num_stages;
  result->num_microbatches = run.schedule.num_microbatches;
  result->platform = run.platform.name;
  const RunMemory memory = RunMemoryOf(run.spec, run.platform, run.costs);
  result->metrics = ComputeMetrics(run.schedule, run.costs, run.graph, timeline,
                                   memory.capacity_bytes, memory.reserve);
  if (link_figures) ComputeLinkMetrics(run.graph, run.platform, timeline, &result->metrics);
  result->model = run.model;
  result->model_notes = run.transformer.notes;
  result->model_flops = run.model_flops;
  result->hardware_flops = run.hardware_flops;
  result->gpu = run.gpu;
  result->layers_per_stage = run.layers_per_stage;
  const TrainingSetup& t = run.spec.training;
  result->gpus = int64_t{run.schedule.num_ranks} * t.GpusPerRank() * t.layout.dp;
  result->replicas_simulated = run.graph.num_replicas;
  result->collectives = run.collectives;
  result->sequences_per_iteration =
      int64_t{run.schedule.num_microbatches} * t.microbatch_size * t.layout.dp;
  result->seq_len = run.seq_len;
  const double iteration_s = result->metrics.makespan_s;
  if (iteration_s > 0) {
    const double peak = static_cast<double>(result->gpus) * PeakFlopsPerS(run.platform, t.dtype);
    if (peak > 0) {
      result->mfu = run.model_flops / (iteration_s * peak);
      result->hfu = run.hardware_flops / (iteration_s * peak);
    }
    result->samples_per_s = static_cast<double>(result->sequences_per_iteration) / iteration_s;
    result->tokens_per_s =
        static_cast<double>(result->sequences_per_iteration * result->seq_len) / iteration_s;
  }
  if (run.spec.train_tokens > 0 && result->tokens_per_s > 0) {
    result->time_to_train_s = static_cast<double>(run.spec.train_tokens) / result->tokens_per_s;
    result->gpu_hours = result->time_to_train_s / 3600 * static_cast<double>(result->gpus);
    if (run.spec.gpu_hour_cost >= 0) result->cost = result->gpu_hours * run.spec.gpu_hour_cost;
  }
  return Status();
}

}  // namespace ppsim
