// PrepareRun's first phases: the workload and the schedule (experiments/run_phases.h).
#include <unistd.h>

#include <cstdio>
#include <limits>

#include "base/escape.h"
#include "base/files.h"
#include "base/names.h"
#include "config/units.h"
#include "experiments/run_phases.h"
#include "interop/torch_schedule_csv.h"
#include "schedules/one_stage_per_rank.h"
#include "schedules/registry.h"
#include "schedules/schedule_text.h"

namespace ppsim {
namespace {

// The file's microbatches must be exactly 0..m-1 when the request gives m: the first one out of
// range is reported where it stands (missing ones by CheckSchedule).
Status CheckFileMicrobatches(const RunSpec& spec, const Schedule& schedule) {
  const Locator& where = *spec.where;
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    const auto& order = schedule.orders[rank];
    for (size_t index = 0; index < order.size(); ++index) {
      for (int k = 0; k < order[index].num_ops(); ++k) {
        const int32_t j = order[index].op(k).microbatch.value();
        if (j < spec.microbatches) continue;
        return Status::InvalidInput(
            spec.schedule_file + ": " + DescribeActionAt(rank, index, order[index]) +
            ": microbatch " + std::to_string(j) + " is out of range; " +
            where.Name("microbatches") + " " + std::to_string(spec.microbatches) + " allows 0.." +
            std::to_string(spec.microbatches - 1));
      }
    }
  }
  return Status();
}

// What the request says of a schedule file must match the file.
Status CheckFileAgainstRequest(const RunSpec& spec, Schedule* schedule) {
  const Locator& where = *spec.where;
  const int32_t pp = spec.training.layout.pp;
  if (pp != 0 && pp != schedule->num_ranks) {
    return where.Invalid("pp", std::to_string(pp) + " ranks, but " + spec.schedule_file + " has " +
                                   std::to_string(schedule->num_ranks));
  }
  if (spec.global_batch > 0 && spec.microbatches != schedule->num_microbatches) {
    return where.Invalid(
        "global_batch",
        "makes " + std::to_string(spec.microbatches) + " microbatches (of " +
            where.Name("microbatch_size") + " " + std::to_string(spec.training.microbatch_size) +
            " on " + where.Name("dp") + " " + std::to_string(spec.training.layout.dp) + "), but " +
            spec.schedule_file + " has " + std::to_string(schedule->num_microbatches));
  }
  if (spec.microbatches != 0) {
    RETURN_IF_ERROR(CheckFileMicrobatches(spec, *schedule));
    schedule->num_microbatches = spec.microbatches;
  }
  if (!spec.stage_to_rank.empty()) {
    if (static_cast<int32_t>(spec.stage_to_rank.size()) != schedule->num_stages) {
      return where.Invalid("stage_to_rank",
                           std::to_string(spec.stage_to_rank.size()) + " ranks for the " +
                               std::to_string(schedule->num_stages) + " stages of " +
                               spec.schedule_file + "; give one rank per stage");
    }
    schedule->stage_to_rank = spec.stage_to_rank;
  }
  return Status();
}

Status LoadScheduleFile(const RunSpec& spec, Schedule* schedule) {
  const Locator& where = *spec.where;
  if (::access(spec.schedule_file.c_str(), R_OK) != 0) {
    return where.Invalid("schedule_file", "cannot read '" + Printable(spec.schedule_file) +
                                              "'; give a readable text-IR or torch CSV file");
  }
  // A schedule of a million actions is about 8 MB of text.
  constexpr int64_t kMaxScheduleFileBytes = 64 << 20;
  std::string text;
  RETURN_IF_ERROR(ReadFile(spec.schedule_file, &text, kMaxScheduleFileBytes, "schedule"));
  RETURN_IF_ERROR(spec.schedule_file.ends_with(".csv")
                      ? ParseScheduleTorchCsv(text, spec.schedule_file, schedule)
                      : ParseScheduleText(text, spec.schedule_file, schedule));
  RETURN_IF_ERROR(CheckFileAgainstRequest(spec, schedule));
  const Status status = CheckSchedule(*schedule);
  if (!status.ok()) return Status::InvalidInput(spec.schedule_file + ": " + status.message());
  return Status();
}

// InvalidInput when a run of this size would compile into more than spec.max_tasks tasks.
Status CheckRunSize(const RunSpec& spec, double stages, double microbatches, double actions) {
  const ParallelLayout& layout = spec.training.layout;
  const double tasks = TaskCountBound(stages, microbatches, actions, layout.dp, layout.tp,
                                      spec.p2p_mode, layout.cp, FoldsReplicas(spec)) +
                       // activation offload: at most an offload and a reload per forward
                       (spec.training.offload_modules != 0
                            ? 2 * stages * microbatches * (FoldsReplicas(spec) ? 1 : layout.dp)
                            : 0);
  if (tasks <= static_cast<double>(spec.max_tasks)) return Status();
  const Locator& where = *spec.where;
  std::string sizes;
  auto size = [&](std::string_view field, int64_t value, bool given) {
    if (!given) return;
    sizes += (sizes.empty() ? where.Where(field) : ", " + where.Name(field)) + " " +
             std::to_string(value);
  };
  const bool named = spec.schedule_file.empty();
  if (!named) sizes = where.Where("schedule_file") + " " + spec.schedule_file;
  size("pp", layout.pp, named);
  size("microbatches", spec.microbatches, named);
  size("stages_per_rank", spec.stages_per_rank, spec.stages_per_rank > 0);
  size("dp", layout.dp, layout.dp > 1);
  size("tp", layout.tp, layout.tp > 1);
  size("cp", layout.cp, layout.cp > 1);
  char text[160];
  std::snprintf(text, sizeof(text), ": %.1e tasks (about %s); the limit is %.1e tasks (", tasks,
                HumanBytes(tasks * kBytesPerTask).c_str(), static_cast<double>(spec.max_tasks));
  return Status::InvalidInput(sizes + text + where.Name("max_tasks") + ")");
}

// The sequences of `global_batch` (or its tokens over the model's or the request's sequence
// length), or InvalidInput at global_batch.
Status GlobalBatchSequences(const RunSpec& spec, int64_t* sequences) {
  const Locator& where = *spec.where;
  *sequences = spec.global_batch;
  if (!spec.global_batch_in_tokens) return Status();
  const std::string given = std::to_string(spec.global_batch) + " tokens";
  int64_t seq_len = spec.training.seq_len;
  if (seq_len == 0 && !spec.model.empty()) {
    TransformerSpec model;
    RETURN_IF_ERROR(LoadModel(spec, &model));
    seq_len = model.seq_len;
  }
  if (seq_len == 0) {
    return where.Invalid("global_batch", given +
                                             " need a sequence length to count sequences; "
                                             "give " +
                                             where.Name("seq_len") + " or " + where.Name("model"));
  }
  if (*sequences % seq_len != 0) {
    return where.Invalid("global_batch", given + " are not a whole number of " +
                                             std::to_string(seq_len) + "-token sequences");
  }
  *sequences /= seq_len;
  return Status();
}

}  // namespace

ScheduleParams ScheduleParamsOf(const RunSpec& spec) {
  ScheduleParams params;
  params.num_ranks = spec.training.layout.pp;
  params.num_microbatches = spec.microbatches;
  params.stages_per_rank = spec.stages_per_rank;
  params.microbatch_group_size = spec.microbatch_group_size;
  params.moe_a2a_overlap = spec.moe_a2a_overlap;
  params.where = spec.where.get();
  return params;
}

Status PrepareWorkload(const RunSpec& request, PreparedRun* run) {
  run->spec = request;
  if (request.global_batch == 0) return Status();
  RunSpec& spec = run->spec;
  const Locator& where = *spec.where;
  int64_t sequences = 0;
  RETURN_IF_ERROR(GlobalBatchSequences(spec, &sequences));
  const int64_t per_microbatch = int64_t{spec.training.microbatch_size} * spec.training.layout.dp;
  const std::string split = where.Name("dp") + " " + std::to_string(spec.training.layout.dp) +
                            " x " + where.Name("microbatch_size") + " " +
                            std::to_string(spec.training.microbatch_size);
  if (sequences % per_microbatch != 0) {
    return where.Invalid("global_batch", std::to_string(sequences) +
                                             " sequences are not a multiple of " + split + " = " +
                                             std::to_string(per_microbatch));
  }
  const int64_t microbatches = sequences / per_microbatch;
  const std::string made = std::to_string(sequences) + " sequences over " + split + " make " +
                           std::to_string(microbatches) + " microbatches";
  if (microbatches < 1 || microbatches > std::numeric_limits<int32_t>::max()) {
    return where.Invalid("global_batch", made + "; valid: 1 to 2147483647");
  }
  if (spec.microbatches != 0 && spec.microbatches != microbatches) {
    return where.Invalid("global_batch", made + ", but " + where.Name("microbatches") + " says " +
                                             std::to_string(spec.microbatches));
  }
  spec.microbatches = static_cast<int32_t>(microbatches);
  return Status();
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
  return GenerateSchedule(info->name, ScheduleParamsOf(spec), schedule);
}

Status CheckScheduleSize(const RunSpec& spec) {
  if (!spec.schedule_file.empty()) return Status();
  // Before the schedule is generated (its actions take memory too), with what the request says:
  // a stage per rank unless given, a forward and a backward per stage and microbatch. The
  // schedule's own count is checked once it exists.
  const double stages = static_cast<double>(spec.training.layout.pp) *
                        (spec.stages_per_rank > 0 ? spec.stages_per_rank : 1);
  const double microbatches = spec.microbatches;
  return CheckRunSize(spec, stages, microbatches, 2 * stages * microbatches);
}

Status PrepareSchedule(PreparedRun* run) {
  const RunSpec& spec = run->spec;
  const Locator& where = *spec.where;
  const double ranks = spec.training.layout.pp;
  RETURN_IF_ERROR(CheckScheduleSize(spec));
  if (spec.schedule_file.empty()) {
    const ScheduleInfo* info = FindSchedule(spec.schedule_name);
    if (info != nullptr && info->needs_costs) run->from_costs = info;
  }
  if (spec.activation_limit_p > 0 && run->from_costs == nullptr) {
    return where.Invalid("memory_limit",
                         std::to_string(spec.activation_limit_p) +
                             "p limits ZB-auto's "
                             "activations; other schedules take a size (the GPU's memory)");
  }
  if (run->from_costs != nullptr) {
    // Generated from the costs (PrepareCosts); until then, its shape: a stage per rank, and F, I
    // and W per stage and microbatch.
    run->label = std::string(run->from_costs->name);
    RETURN_IF_ERROR(
        StartOneStagePerRank(run->from_costs->name, ScheduleParamsOf(spec), &run->schedule));
    return CheckRunSize(spec, run->schedule.num_stages, run->schedule.num_microbatches,
                        3.0 * ranks * spec.microbatches);
  }
  RETURN_IF_ERROR(BuildSchedule(spec, &run->schedule, &run->label));
  return CheckRunSize(spec, run->schedule.num_stages, run->schedule.num_microbatches,
                      static_cast<double>(run->schedule.NumActions()));
}

}  // namespace ppsim
