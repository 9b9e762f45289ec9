#include "experiments/run.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "base/escape.h"
#include "base/files.h"
#include "base/names.h"
#include "models/profile.h"
#include "config/units.h"
#include "schedules/one_stage_per_rank.h"
#include "schedules/registry.h"
#include "interop/torch_schedule_csv.h"
#include "schedules/schedule_text.h"
#include "schedules/zb_auto.h"

namespace ppsim {
namespace {

Status LoadScheduleFile(const RunSpec& spec, Schedule* schedule) {
  const Locator& where = *spec.where;
  std::string text;
  if (::access(spec.schedule_file.c_str(), R_OK) != 0) {
    return where.Invalid("schedule_file", "cannot read '" + Printable(spec.schedule_file) +
                                              "'; give a readable text-IR or torch CSV file");
  }
  // A schedule of a million actions is about 8 MB of text.
  constexpr int64_t kMaxScheduleFileBytes = 64 << 20;
  RETURN_IF_ERROR(ReadFile(spec.schedule_file, &text, kMaxScheduleFileBytes, "schedule"));
  RETURN_IF_ERROR(spec.schedule_file.ends_with(".csv")
                      ? ParseScheduleTorchCsv(text, spec.schedule_file, schedule)
                      : ParseScheduleText(text, spec.schedule_file, schedule));
  if (spec.params.num_ranks != 0 && spec.params.num_ranks != schedule->num_ranks) {
    return where.Invalid("pp", std::to_string(spec.params.num_ranks) + " ranks, but " +
                                   spec.schedule_file + " has " +
                                   std::to_string(schedule->num_ranks));
  }
  if (spec.global_batch > 0 && spec.params.num_microbatches != schedule->num_microbatches) {
    return where.Invalid(
        "global_batch",
        "makes " + std::to_string(spec.params.num_microbatches) + " microbatches (of " +
            where.Name("microbatch_size") + " " + std::to_string(spec.training.microbatch_size) +
            " on " + where.Name("dp") + " " + std::to_string(spec.training.layout.dp) + "), but " +
            spec.schedule_file + " has " + std::to_string(schedule->num_microbatches));
  }
  if (spec.params.num_microbatches != 0) {
    // The file's microbatches must be exactly 0..m-1: report the first one out of range where it
    // stands; missing ones are reported by CheckSchedule.
    for (int32_t rank = 0; rank < schedule->num_ranks; ++rank) {
      const auto& order = schedule->orders[rank];
      for (size_t index = 0; index < order.size(); ++index) {
        for (int k = 0; k < order[index].num_ops(); ++k) {
          const int32_t j = order[index].op(k).microbatch.value();
          if (j >= spec.params.num_microbatches) {
            return Status::InvalidInput(
                spec.schedule_file + ": " + DescribeActionAt(rank, index, order[index]) +
                ": microbatch " + std::to_string(j) + " is out of range; " +
                where.Name("microbatches") + " " +
                std::to_string(spec.params.num_microbatches) + " allows 0.." +
                std::to_string(spec.params.num_microbatches - 1));
          }
        }
      }
    }
    schedule->num_microbatches = spec.params.num_microbatches;
  }
  if (!spec.stage_to_rank.empty()) {
    if (static_cast<int32_t>(spec.stage_to_rank.size()) != schedule->num_stages) {
      return where.Invalid("stage_to_rank", std::to_string(spec.stage_to_rank.size()) +
                                                " ranks for the " +
                                                std::to_string(schedule->num_stages) +
                                                " stages of " + spec.schedule_file +
                                                "; give one rank per stage");
    }
    schedule->stage_to_rank = spec.stage_to_rank;
  }
  const Status status = CheckSchedule(*schedule);
  if (!status.ok()) return Status::InvalidInput(spec.schedule_file + ": " + status.message());
  return Status();
}

// Whether replica 0 stands for all (RunSpec::fold_replicas): by default on a cluster, not on a
// SimGrid XML platform (whose routes ppsim cannot splice).
bool FoldsReplicas(const RunSpec& spec) {
  return spec.fold_replicas.value_or(!spec.platform.platform.ends_with(".xml"));
}

// DeepSeek's node-limited routing (--moe-node-limit M) on `platform`: the expert-parallel group of
// a rank spans N nodes of P GPUs each (P the node's GPUs when N > 1, so that every GPU has a peer of
// its index on each other node); a token's k experts lie on min(M, N) of them, chosen uniformly,
// so it crosses the network to each other node with probability min(M, N)/N, once, and its k
// copies arrive at the expert GPUs over NVLink (sim/task_graph.h Parallelism). Sets each MoE
// stage's node bytes: T h x bytes per element x min(M, N)/N, T h x bytes = dispatch (combine)
// bytes / k.
Status ApplyNodeLimit(const RunSpec& spec, const TransformerSpec& model,
                      const PlatformSpec& platform, StageCosts* costs) {
  const Locator& where = *spec.where;
  const int32_t gpus = spec.training.GpusPerRank();
  const int32_t ep = spec.training.layout.ep;
  const int32_t members = spec.training.layout.dp * gpus;  // of each rank
  // Every group of every rank: the same number of nodes, each whole when there are several.
  int32_t nodes = 0;
  for (int32_t rank = 0; rank < platform.layout.pp; ++rank) {
    for (int32_t base = 0; base < members; base += ep) {
      std::map<int32_t, int32_t> per_node;
      for (int32_t m = base; m < base + ep; ++m) {
        ++per_node[platform.NodeOf(ExpertMemberGpu(platform, rank, m, gpus))];
      }
      const int32_t spanned = static_cast<int32_t>(per_node.size());
      for (const auto& [node, count] : per_node) {
        if ((spanned > 1 && count != platform.gpus_per_node) || (nodes > 0 && spanned != nodes)) {
          return where.Invalid(
              "moe_node_limit",
              "needs every expert-parallel group within one node or of whole nodes, as many for "
              "each group (a GPU of each index on every node of its group); --ep " +
                  std::to_string(ep) + " puts " + std::to_string(count) + " of node " +
                  std::to_string(node) + "'s " + std::to_string(platform.gpus_per_node) +
                  " GPUs in a group of rank " + std::to_string(rank) + " spanning " +
                  std::to_string(spanned) + " nodes (valid: --ep within a node or a multiple "
                  "of " + std::to_string(platform.gpus_per_node) + ", contiguous placement)");
        }
      }
      nodes = spanned;
    }
  }
  const int64_t chosen = std::min(spec.moe_node_limit, nodes);
  const int64_t k = model.experts_per_token;
  for (MoeStage& stage : costs->moe) {
    stage.group_nodes = nodes;
    stage.node_dispatch_bytes = (stage.dispatch_bytes * chosen + k * nodes - 1) / (k * nodes);
    stage.node_combine_bytes = (stage.combine_bytes * chosen + k * nodes - 1) / (k * nodes);
  }
  return Status();
}

// InvalidInput when a run of this size would compile into more than spec.max_tasks tasks.
Status CheckRunSize(const RunSpec& spec, double stages, double microbatches, double actions) {
  const TrainingSetup& t = spec.training;
  const double tasks = TaskCountBound(stages, microbatches, actions, t.layout.dp, t.layout.tp,
                                      spec.p2p_mode, t.layout.cp, FoldsReplicas(spec));
  if (tasks <= static_cast<double>(spec.max_tasks)) return Status();
  const Locator& where = *spec.where;
  const ScheduleParams& p = spec.params;
  std::string sizes;
  auto size = [&](std::string_view field, int64_t value, bool given) {
    if (!given) return;
    sizes += (sizes.empty() ? where.Where(field) : ", " + where.Name(field)) + " " +
             std::to_string(value);
  };
  if (!spec.schedule_file.empty()) sizes = where.Where("schedule_file") + " " + spec.schedule_file;
  size("pp", p.num_ranks, spec.schedule_file.empty());
  size("microbatches", p.num_microbatches, spec.schedule_file.empty());
  size("stages_per_rank", p.stages_per_rank, p.stages_per_rank > 0);
  size("dp", t.layout.dp, t.layout.dp > 1);
  size("tp", t.layout.tp, t.layout.tp > 1);
  size("cp", t.layout.cp, t.layout.cp > 1);
  char text[160];
  std::snprintf(text, sizeof(text), ": %.1e tasks (about %s); the limit is %.1e tasks (",
                tasks, HumanBytes(tasks * kBytesPerTask).c_str(),
                static_cast<double>(spec.max_tasks));
  return Status::InvalidInput(sizes + text + where.Name("max_tasks") + ")");
}

}  // namespace

std::vector<std::string> InputFiles(const RunSpec& spec) {
  std::vector<std::string> files;
  for (const std::string& path : {spec.schedule_file, spec.profile_file, spec.model,
                                  spec.platform.platform}) {
    if (!path.empty()) files.push_back(path);
  }
  return files;
}

Status BuildSchedule(const RunSpec& spec, Schedule* schedule, std::string* label) {
  if (!spec.schedule_file.empty()) {
    *label = spec.schedule_file;
    return LoadScheduleFile(spec, schedule);
  }
  const ScheduleInfo* info = FindSchedule(spec.schedule_name);
  if (info == nullptr) {
    std::vector<std::string> names;
    for (const ScheduleInfo& schedule_info : AllSchedules()) names.emplace_back(schedule_info.name);
    return spec.where->Invalid("schedule", UnknownName("schedule", spec.schedule_name, names));
  }
  *label = std::string(info->name);
  return GenerateSchedule(info->name, spec.params, schedule);
}

double PeakFlopsPerS(const PlatformSpec& platform, Dtype dtype) {
  return dtype == Dtype::kFp8 ? platform.gpu.dense_fp8_flops_per_s
                              : platform.gpu.dense_bf16_flops_per_s;
}

Status CheckDtypeOnGpu(const PlatformSpec& platform, Dtype dtype, const Locator& where) {
  if (PeakFlopsPerS(platform, dtype) > 0) return Status();
  return where.Invalid("dtype", std::string(DtypeName(dtype)) + " needs a GPU with that "
                                "precision; " + platform.gpu.name + " of " + platform.name +
                                " has no peak for it (gpu.dense_fp8); use bf16 or " +
                                where.Name("set") + " gpu.dense_fp8=...");
}

double ModelFlopsPerIteration(const std::vector<StageModel>& stages, const Schedule& schedule,
                              int32_t tp, int32_t dp, bool hardware) {
  double flops = 0;
  for (size_t stage = 0; stage < stages.size(); ++stage) {
    const Pipeline pipeline = [&] {
      for (const Pipeline& p : schedule.AllPipelines()) {
        if (static_cast<int32_t>(stage) >= p.first_stage &&
            static_cast<int32_t>(stage) <= p.last_stage) {
          return p;
        }
      }
      return Pipeline{};  // unreachable: the pipelines cover every stage
    }();
    const int32_t microbatches = pipeline.last_microbatch - pipeline.first_microbatch + 1;
    const StageModel& m = stages[stage];
    const double per_microbatch =
        hardware ? m.forward_flops + m.backward_input_flops + m.backward_weight_flops
                 : 3 * m.forward_flops;
    flops += per_microbatch * microbatches * tp * dp;
  }
  return flops;
}

GpuModel GpuModelOf(const PlatformSpec& platform, Dtype dtype) {
  GpuModel gpu;
  gpu.matmul_flops_per_s = PeakFlopsPerS(platform, dtype);
  gpu.attention_flops_per_s = platform.gpu.dense_bf16_flops_per_s;
  gpu.sms = platform.gpu.sms;
  gpu.matmul_efficiency = platform.gpu.matmul_efficiency;
  gpu.attention_efficiency = platform.gpu.attention_efficiency;
  gpu.memory_bytes_per_s = platform.gpu.memory_bandwidth_bytes_per_s;
  gpu.memory_efficiency = platform.gpu.memory_efficiency;
  return gpu;
}

std::vector<PassSeconds> ModelStageSeconds(const RunSpec& spec, const TransformerSpec& model,
                                           const TrainingSetup& setup,
                                           const PlatformSpec& platform,
                                           const std::vector<StageModel>& stages) {
  return StagePassSeconds(model, setup, stages, GpuModelOf(platform, setup.dtype),
                          spec.efficiency);
}

Status LoadModel(const RunSpec& spec, TransformerSpec* model) {
  if (const TransformerSpec* preset = FindTransformerPreset(spec.model)) {
    *model = *preset;
  } else if (spec.model.find('.') != std::string::npos) {
    proto::TransformerModel message;
    ConfigLocations locations;
    RETURN_IF_ERROR(ReadConfigFile(spec.model, &message, &locations));
    RETURN_IF_ERROR(TransformerFromProto(message, locations, model));
    if (model->name.empty()) model->name = spec.model;
  } else {
    std::vector<std::string> names;
    for (const TransformerSpec& preset : TransformerPresets()) names.push_back(preset.name);
    return spec.where->Invalid(
        "model", UnknownName("model", spec.model, names,
                             "or a model file (.textproto, .json, .yaml)"));
  }
  return Status();
}

namespace {

// --global-batch: the microbatches it makes, checked against --microbatches when that is given.
Status ApplyGlobalBatch(RunSpec* spec) {
  const Locator& where = *spec->where;
  int64_t sequences = spec->global_batch;
  const std::string given = std::to_string(spec->global_batch) +
                            (spec->global_batch_in_tokens ? " tokens" : " sequences");
  if (spec->global_batch_in_tokens) {
    int64_t seq_len = spec->training.seq_len;
    if (seq_len == 0 && !spec->model.empty()) {
      TransformerSpec model;
      RETURN_IF_ERROR(LoadModel(*spec, &model));
      seq_len = model.seq_len;
    }
    if (seq_len == 0) {
      return where.Invalid("global_batch", given + " need a sequence length to count sequences; "
                                           "give " + where.Name("seq_len") + " or " +
                                           where.Name("model"));
    }
    if (sequences % seq_len != 0) {
      return where.Invalid("global_batch", given + " are not a whole number of " +
                                               std::to_string(seq_len) + "-token sequences");
    }
    sequences /= seq_len;
  }
  const int64_t per_microbatch = int64_t{spec->training.microbatch_size} * spec->training.layout.dp;
  const std::string split = where.Name("dp") + " " + std::to_string(spec->training.layout.dp) +
                            " x " + where.Name("microbatch_size") + " " +
                            std::to_string(spec->training.microbatch_size);
  if (sequences % per_microbatch != 0) {
    return where.Invalid("global_batch", std::to_string(sequences) +
                                             " sequences are not a multiple of " + split + " = " +
                                             std::to_string(per_microbatch));
  }
  const int64_t microbatches = sequences / per_microbatch;
  if (microbatches < 1 || microbatches > std::numeric_limits<int32_t>::max()) {
    return where.Invalid("global_batch", std::to_string(sequences) + " sequences over " + split +
                                             " make " + std::to_string(microbatches) +
                                             " microbatches; valid: 1 to 2147483647");
  }
  ScheduleParams& params = spec->params;
  if (params.num_microbatches != 0 && params.num_microbatches != microbatches) {
    return where.Invalid("global_batch", std::to_string(sequences) + " sequences over " + split +
                                             " make " + std::to_string(microbatches) +
                                             " microbatches, but " +
                                             where.Name("microbatches") + " says " +
                                             std::to_string(params.num_microbatches));
  }
  params.num_microbatches = static_cast<int32_t>(microbatches);
  return Status();
}

// The stages as the zero-bubble scheduler sees them (schedules/zb_auto.h), for a schedule found
// from costs (ZB-1p, ZB-2p, ZB-auto): F, I and W in nanoseconds; T_comm towards the next stage,
// the uncontended transfer of the boundary message (a GPU's share of it with tp or cp) from rank
// s to rank s + 1 of replica 0; M_B and M_W; and the limit: K x p x M_B for --memory-limit Kp,
// else the activations that fit beside the stage's static bytes and the reserve in the GPU's
// memory (no limit when the memory is not bounded).
Status ZeroBubbleStagesOf(const RunSpec& spec, const PreparedRun& run, const ScheduleInfo& info,
                          std::vector<ZeroBubbleStage>* stages) {
  const Locator& where = *spec.where;
  const StageCosts& costs = run.costs;
  const std::string name(info.name);
  if (spec.activation_limit_p > 0 && info.name != "ZB-auto") {
    return where.Invalid("memory_limit",
                         std::to_string(spec.activation_limit_p) + "p limits ZB-auto's "
                         "activations; " + name + " takes a size (the GPU's memory)");
  }
  if (costs.backward_input_s.empty() || costs.backward_weight_s.empty()) {
    return where.Invalid("i", name + " splits the backward into I and W; give " +
                                  where.Name("i") + " and " + where.Name("w") + ", not only " +
                                  where.Name("b"));
  }
  bool any_activation = false;
  for (int64_t bytes : costs.activation_bytes) any_activation = any_activation || bytes > 0;
  if (!any_activation) {
    return where.Invalid("activation", name + " places forwards as memory allows and needs each "
                                       "stage's activation bytes M_B; give " +
                                           where.Name("model") + ", a profile with activation, "
                                           "or " + where.Name("activation") + " (and " +
                                           where.Name("activation_w") + ")");
  }
  if (!run.platform.xml_file.empty()) {
    return where.Invalid("schedule", name + " times the boundary transfers on a cluster (a "
                                     "preset or a cluster file); the routes of the XML platform " +
                                         run.platform.xml_file + " are known to SimGrid only");
  }
  const RunMemory memory = RunMemoryOf(spec, run.platform, costs);
  const int32_t p = run.schedule.num_ranks;
  const int64_t group = spec.training.GpusPerRank();
  auto ticks = [](double seconds) { return std::llround(seconds * 1e9); };
  stages->assign(p, ZeroBubbleStage());
  for (int32_t s = 0; s < p; ++s) {
    ZeroBubbleStage& stage = (*stages)[s];
    stage.forward_ticks = ticks(costs.forward_s[s]);
    stage.backward_input_ticks = ticks(costs.backward_input_s[s]);
    stage.backward_weight_ticks = ticks(costs.backward_weight_s[s]);
    if (s + 1 < p) {
      const int64_t bytes = costs.message_bytes.empty() ? 0 : costs.message_bytes[s];
      stage.transfer_ticks = ticks(run.platform.UncontendedTransferTime(
          run.platform.GpuOf(0, s, 0), run.platform.GpuOf(0, s + 1, 0), (bytes + group - 1) / group));
    }
    stage.activation_bytes = costs.activation_bytes[s];
    stage.activation_w_bytes = costs.activation_w_bytes.empty() ? 0 : costs.activation_w_bytes[s];
    if (info.name != "ZB-auto") {
      // ZB-1p and ZB-2p set their own limits (p x M_B, 2p x M_B); out of memory is the run's to
      // report, as for any schedule.
    } else if (spec.activation_limit_p > 0) {
      stage.limit_bytes = int64_t{spec.activation_limit_p} * p * stage.activation_bytes;
    } else if (memory.capacity_bytes == 0) {
      stage.limit_bytes = std::numeric_limits<int64_t>::max() / 4;
    } else {
      const int64_t static_bytes = costs.static_bytes.empty() ? 0 : costs.static_bytes[s];
      stage.limit_bytes = MaxLiveActivationBytes(static_bytes, memory.capacity_bytes,
                                                 memory.reserve);
      if (stage.limit_bytes < stage.activation_bytes) {
        return where.Invalid(
            "memory_limit",
            name + " cannot place a forward on stage " + std::to_string(s) + ": " +
                HumanBytes(static_cast<double>(memory.capacity_bytes)) + " of GPU memory leaves " +
                HumanBytes(static_cast<double>(std::max<int64_t>(stage.limit_bytes, 0))) +
                " for activations beside " + HumanBytes(static_cast<double>(static_bytes)) +
                " of parameters, gradients and optimizer state and the reserve, but one "
                "microbatch holds " + HumanBytes(static_cast<double>(stage.activation_bytes)) +
                "; valid: a limit that leaves at least that, or a multiple of p x M_B (1p)");
      }
    }
  }
  return Status();
}

}  // namespace

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
  memory.reserve.fixed_bytes = spec.memory_reserve_bytes >= 0 ? spec.memory_reserve_bytes
                               : counts_memory                ? kDefaultMemoryReserveBytes
                                                              : 0;
  memory.reserve.activation_fraction = spec.activation_overhead >= 0 ? spec.activation_overhead
                                       : counts_memory ? kDefaultActivationOverhead
                                                       : 0;
  return memory;
}

Status BuildModelStages(const RunSpec& spec, const Schedule& schedule,
                        std::vector<StageModel>* stages, TransformerSpec* model,
                        TrainingSetup* setup_out) {
  RETURN_IF_ERROR(LoadModel(spec, model));
  TrainingSetup& setup = *setup_out;
  setup = spec.training;
  if (setup.seq_len == 0) setup.seq_len = model->seq_len;
  RETURN_IF_ERROR(CheckTrainingSetup(*model, setup, *spec.where));
  stages->clear();
  for (const Pipeline& pipeline : schedule.AllPipelines()) {
    std::vector<int32_t> layers;
    RETURN_IF_ERROR(SplitLayers(*model, pipeline.last_stage - pipeline.first_stage + 1,
                                spec.layer_split, *spec.where, &layers));
    for (const StageModel& stage : BuildStageModels(*model, setup, layers)) {
      stages->push_back(stage);
    }
  }
  return Status();
}

Status PrepareRun(const RunSpec& request, PreparedRun* run, bool compile) {
  RunSpec resolved = request;
  if (request.global_batch > 0) {
    RETURN_IF_ERROR(ApplyGlobalBatch(&resolved));
  }
  const RunSpec& spec = resolved;
  const Locator& where = *spec.where;
  run->spec = spec;
  const ScheduleParams& params = spec.params;
  if (spec.schedule_file.empty()) {
    // Before the schedule is generated (its actions take memory too), with what the request
    // says: a stage per rank unless given, a forward and a backward per stage and microbatch.
    // The schedule's own count is checked once it exists.
    const double stages = static_cast<double>(params.num_ranks) *
                          (params.stages_per_rank > 0 ? params.stages_per_rank : 1);
    const double microbatches = static_cast<double>(params.num_microbatches);
    RETURN_IF_ERROR(CheckRunSize(spec, stages, microbatches, 2 * stages * microbatches));
  }
  // A schedule found from costs (ZB-1p, ...) is generated once the costs are known; until then
  // it is its shape: a stage per rank, and F, I and W per stage and microbatch.
  const ScheduleInfo* from_costs = nullptr;
  if (spec.schedule_file.empty()) {
    const ScheduleInfo* info = FindSchedule(spec.schedule_name);
    if (info != nullptr && info->needs_costs) from_costs = info;
  }
  if (spec.activation_limit_p > 0 && from_costs == nullptr) {
    return where.Invalid("memory_limit",
                         std::to_string(spec.activation_limit_p) + "p limits ZB-auto's "
                         "activations; other schedules take a size (the GPU's memory)");
  }
  Status status;
  if (from_costs != nullptr) {
    run->label = std::string(from_costs->name);
    status = StartOneStagePerRank(from_costs->name, params, &run->schedule);
  } else {
    status = BuildSchedule(spec, &run->schedule, &run->label);
  }
  if (status.ok()) {
    const double actions = from_costs != nullptr
                               ? 3.0 * params.num_ranks * params.num_microbatches
                               : static_cast<double>(run->schedule.NumActions());
    status = CheckRunSize(spec, run->schedule.num_stages, run->schedule.num_microbatches, actions);
  }
  if (!status.ok()) return status;
  if (!spec.model.empty() && !spec.profile_file.empty()) {
    return where.Invalid("profile", "give " + where.Name("profile") + " or " +
                                        where.Name("model") + ", not both");
  }
  // The model's own checks (--tp divides the heads, ...) come before the platform's (--tp fits
  // in a node).
  std::vector<StageModel> stages;
  TransformerSpec model;
  TrainingSetup setup;
  if (!spec.model.empty()) {
    RETURN_IF_ERROR(BuildModelStages(spec, run->schedule, &stages, &model, &setup));
  }
  ParallelLayout layout = spec.training.layout;
  layout.pp = run->schedule.num_ranks;
  RETURN_IF_ERROR(BuildPlatform(spec.platform, layout, where, &run->platform));
  if (spec.fold_replicas.value_or(false) && !run->platform.xml_file.empty()) {
    return where.Invalid("replicas", "one needs a cluster (a preset or a cluster file): the "
                                     "routes of the XML platform " + run->platform.xml_file +
                                     " are known to SimGrid only; use " + where.Name("replicas") +
                                     " all");
  }
  if (spec.training.layout.ep > 1 && !run->platform.xml_file.empty()) {
    return where.Invalid("ep", "needs a cluster (a preset or a cluster file): its all-to-alls "
                               "follow the cluster's routes; " + run->platform.xml_file +
                               " is a SimGrid XML platform");
  }
  if (spec.comm_sms > 0 && spec.comm_sms >= run->platform.gpu.sms) {
    return where.Invalid("comm_sms", std::to_string(spec.comm_sms) + " SMs of the " +
                                         run->platform.gpu.name + "'s " +
                                         std::to_string(run->platform.gpu.sms) +
                                         "; valid: 0 to " +
                                         std::to_string(std::max(0, run->platform.gpu.sms - 1)));
  }
  if (spec.engine == EngineKind::kCriticalPath && !run->platform.xml_file.empty()) {
    return where.Invalid("engine", "critical-path needs a cluster (a preset or a cluster file); "
                                   "the routes of the XML platform " + run->platform.xml_file +
                                   " are known to SimGrid only; use " + where.Name("engine") +
                                   " simgrid");
  }
  Profile profile;
  StageCosts model_costs;  // with --model
  bool has_profile = false;
  bool profile_from_model = false;
  if (!spec.profile_file.empty()) {
    RETURN_IF_ERROR(ReadProfile(spec.profile_file, &profile));
    has_profile = true;
  } else if (!spec.model.empty()) {
    RETURN_IF_ERROR(CheckDtypeOnGpu(run->platform, spec.training.dtype, where));
    model_costs = StageModelsToCosts(
        stages, ModelStageSeconds(spec, model, setup, run->platform, stages), setup);
    profile = ProfileFromCosts(model_costs, where.Name("model") + " " + spec.model);
    has_profile = true;
    profile_from_model = true;
    run->model = model.name;
    run->model_flops = ModelFlopsPerIteration(stages, run->schedule, spec.training.GpusPerRank(),
                                              spec.training.layout.dp);
    if (spec.training.recompute != Recompute::kNone) {
      run->hardware_flops = ModelFlopsPerIteration(
          stages, run->schedule, spec.training.GpusPerRank(), spec.training.layout.dp,
          /*hardware=*/true);
    }
    run->seq_len = setup.seq_len;
    run->gpu = GpuModelOf(run->platform, spec.training.dtype);
    for (const StageModel& stage : stages) run->layers_per_stage.push_back(stage.layers);
  }
  // Costs per rank share (flags, or a measured profile) are split over the stages.
  RankShares shares;
  const bool per_share = spec.costs_per == CostsPer::kRank &&
                         (spec.costs.any() || (has_profile && !profile_from_model));
  if (per_share) {
    RETURN_IF_ERROR(RankSharesOf(run->schedule, where, &shares));
  }
  RETURN_IF_ERROR(BuildStageCosts(spec.costs, has_profile ? &profile : nullptr,
                                  run->schedule.num_stages, where, &run->costs,
                                  per_share ? &shares : nullptr,
                                  /*profile_per_stage=*/profile_from_model));
  if (from_costs != nullptr) {
    std::vector<ZeroBubbleStage> zero_bubble_stages;
    RETURN_IF_ERROR(ZeroBubbleStagesOf(spec, *run, *from_costs, &zero_bubble_stages));
    ScheduleParams with_costs = params;
    with_costs.stage_costs = &zero_bubble_stages;
    status = GenerateSchedule(from_costs->name, with_costs, &run->schedule);
    if (!status.ok()) return where.Invalid("schedule", status.message());
  }
  RETURN_IF_ERROR(CheckCostsCoverSchedule(run->costs, run->schedule, where));
  if (profile_from_model) {
    // The MoE layers' parts and all-to-alls are the model's (with --ep > 1), and the experts'
    // gradients, reduced over their expert-data-parallel groups. Durations given instead of the
    // model's would not hold the parts the engines run (--overlap still replaces a pair's).
    if (!model_costs.moe.empty()) {
      for (const auto& [field, given] :
           {std::pair{"f", !spec.costs.forward_s.empty()},
            std::pair{"i", !spec.costs.backward_input_s.empty()},
            std::pair{"w", !spec.costs.backward_weight_s.empty()},
            std::pair{"b", !spec.costs.backward_s.empty()}}) {
        if (given) {
          return where.Invalid(field,
                               "replaces the model's durations, whose MoE parts and "
                               "all-to-alls " +
                                   where.Name("ep") + " " +
                                   std::to_string(spec.training.layout.ep) +
                                   " simulates; give them with " + where.Name("ep") +
                                   " 1, or leave them to the model");
        }
      }
    }
    run->costs.moe = model_costs.moe;
    bool experts = false;
    for (const StageModel& stage : stages) experts = experts || stage.expert_gradient_bytes > 0;
    if (experts) {
      for (const StageModel& stage : stages) {
        run->costs.expert_gradient_bytes.push_back(stage.expert_gradient_bytes);
      }
    }
    // The optimizer step is the model's (profiles give none).
    for (const StageModel& stage : stages) {
      run->costs.optimizer_step_bytes.push_back(stage.optimizer_step_bytes);
      if (spec.training.zero_stage == 1 && spec.training.layout.dp * spec.training.layout.cp > 1) {
        // The dense parameters: the experts' are reduced over their own groups (sim/task_graph.h).
        run->costs.param_gather_bytes.push_back(2 * (stage.parameters - stage.expert_parameters));
      }
      if (spec.training.layout.tp > 1) {
        run->costs.tp_forward_steps.push_back(stage.tp_forward_steps);
        run->costs.tp_backward_steps.push_back(stage.tp_backward_steps);
        run->costs.tp_step_bytes.push_back(stage.tp_step_bytes);
      }
      if (spec.training.layout.cp > 1) {
        run->costs.cp_forward_bytes.push_back(stage.cp_forward_bytes);
        run->costs.cp_backward_bytes.push_back(stage.cp_backward_bytes);
      }
    }
  }
  if (run->seq_len == 0) run->seq_len = spec.training.seq_len;
  // Tokens of an iteration, counted in 64 bits.
  const double tokens = static_cast<double>(run->schedule.num_microbatches) *
                        static_cast<double>(spec.training.microbatch_size) *
                        spec.training.layout.dp *
                        static_cast<double>(std::max<int64_t>(run->seq_len, 1));
  if (tokens > static_cast<double>(kMaxCount)) {
    return where.Invalid("microbatch_size",
                         "the iteration's microbatches x sequences per microbatch x replicas x "
                         "sequence length come to more than 1e18 tokens");
  }
  if (spec.train_tokens > 0 && run->seq_len == 0) {
    return where.Invalid("train_tokens", "needs the tokens of an iteration; give " +
                                             where.Name("model") + " or " + where.Name("seq_len"));
  }
  if (spec.training.layout.dp > 1) {
    bool any = false;
    for (int64_t bytes : run->costs.gradient_bytes) any = any || bytes > 0;
    if (!any) {
      return where.Invalid("dp", std::to_string(spec.training.layout.dp) +
                                     " replicas all-reduce their gradients, but no stage has any; "
                                     "give " +
                                     where.Name("model") +
                                     ", a profile with grad_bytes, "
                                     "or " +
                                     where.Name("grad_bytes"));
    }
  }
  // The optimizer steps at the GPU's HBM bandwidth (none when the platform lists none).
  run->costs.optimizer_step_s.clear();
  const double hbm = run->platform.gpu.memory_bandwidth_bytes_per_s;
  if (hbm > 0) {
    for (int64_t bytes : run->costs.optimizer_step_bytes) {
      run->costs.optimizer_step_s.push_back(static_cast<double>(bytes) / hbm);
    }
  }
  if (spec.moe_node_limit > 0 && !run->costs.moe.empty()) {
    RETURN_IF_ERROR(ApplyNodeLimit(spec, model, run->platform, &run->costs));
  }
  if (!compile) return Status();
  Parallelism parallelism;
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
  if (!run->costs.moe.empty()) {
    const int32_t gpus = spec.training.GpusPerRank();
    const int32_t ep = spec.training.layout.ep;
    // Folded, an experts' ring step stands for its group's members through a spliced route that
    // takes its predecessor's GPU of the rank to be its own: exact when the groups line up with
    // the ranks' GPUs.
    if (parallelism.fold_replicas && ep % gpus != 0 && gpus % ep != 0) {
      return where.Invalid("ep", std::to_string(ep) + " with " + std::to_string(gpus) +
                                     " GPUs per rank (tp x cp): with replicas folded the "
                                     "expert-parallel groups must divide or be a multiple of them; "
                                     "use " + where.Name("replicas") + " all");
    }
    // Each part of a program is recorded like a task (at most a forward's rest and 4 parts per
    // MoE layer, twice with full recomputation, in each of an action's two ops), and each flow of
    // an all-to-all is an activity of the simulation (a GPU's sends and, folded, its receives to
    // and from e - 1 peers; the links' loads walk every member's e - 1 routes once per rank).
    int32_t most = 0;
    for (const MoeStage& stage : run->costs.moe) most = std::max(most, stage.layers);
    const double dp = parallelism.fold_replicas ? 1 : spec.training.layout.dp;  // compiled
    const double parts = static_cast<double>(run->schedule.NumActions()) * dp * 2 * (1 + 8 * most);
    const double flows =
        parts / 2 * gpus * 2.0 * (ep - 1) +
        static_cast<double>(run->schedule.num_ranks) * spec.training.layout.dp * gpus * (ep - 1);
    if (parts + flows > static_cast<double>(spec.max_tasks)) {
      char text[240];
      std::snprintf(text, sizeof(text),
                    "the MoE layers' parts and all-to-all flows come to about %.3g; the limit is "
                    "%.3g (--max-tasks)",
                    parts + flows, static_cast<double>(spec.max_tasks));
      return where.Invalid("ep", text);
    }
  }
  if (spec.grad_bucket_bytes > 0 && !run->platform.xml_file.empty()) {
    return where.Invalid("grad_bucket", "needs a cluster platform (a bucket's readiness is a "
                                        "timer on a host ppsim adds to the cluster); " +
                                            run->platform.xml_file + " is a SimGrid XML platform");
  }
  if (spec.grad_bucket_bytes > 0) {
    // Each bucket adds a ring per GPU of a group: checked before anything is allocated.
    double buckets = 0;
    for (int32_t stage = 0; stage < run->costs.num_stages(); ++stage) {
      const int64_t bytes = run->costs.DenseGradientBytes(stage);
      buckets +=
          std::ceil(static_cast<double>(bytes) / static_cast<double>(spec.grad_bucket_bytes));
    }
    const double dp = parallelism.fold_replicas ? 1 : spec.training.layout.dp;  // compiled
    const double members =
        spec.training.layout.dp * spec.training.layout.cp;  // of each gradient ring
    const double tasks = buckets * (spec.training.layout.tp * CollectiveTasksBound(members) * dp *
                                        spec.training.layout.cp +
                                    dp);
    if (members > 1 && tasks > static_cast<double>(spec.max_tasks)) {
      char text[200];
      std::snprintf(text, sizeof(text),
                    "%.0f buckets of the stages' gradients make about %.3g all-reduce tasks; "
                    "the limit is %lld (--max-tasks); give larger buckets",
                    buckets, tasks, static_cast<long long>(spec.max_tasks));
      return where.Invalid("grad_bucket", text);
    }
  }
  if (spec.training.layout.tp > 1 && run->platform.xml_file.empty()) {
    parallelism.tp_step_latency_s = TpStepLatencyS(run->platform);
  }
  RETURN_IF_ERROR(PlanCollectives(run->schedule, run->costs, run->platform, spec.training.layout.cp,
                                  spec.grad_bucket_bytes,
                                  spec.collective_algorithm ? &*spec.collective_algorithm : nullptr,
                                  where, &parallelism, &run->collectives));
  Status compiled = CompileTaskGraph(run->schedule, run->costs, parallelism, &run->graph);
  if (compiled.code() == StatusCode::kInvalidInput) {
    // The schedule cannot run with the p2p mode.
    return where.Invalid("p2p_mode", compiled.message());
  }
  return compiled;
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
