#include "experiments/run.h"

#include <fstream>
#include <sstream>

#include "schedules/registry.h"
#include "schedules/schedule_text.h"

namespace ppsim {
namespace {

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status LoadScheduleFile(const RunSpec& spec, Schedule* schedule) {
  std::ifstream in(spec.schedule_file, std::ios::binary);
  if (!in) {
    return Status::InvalidInput("--schedule-file: cannot read '" + spec.schedule_file +
                                "'; give a readable text-IR or torch CSV file");
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  Status status = EndsWith(spec.schedule_file, ".csv")
                      ? ParseScheduleTorchCsv(buffer.str(), spec.schedule_file, schedule)
                      : ParseScheduleText(buffer.str(), spec.schedule_file, schedule);
  if (!status.ok()) return status;
  if (spec.params.num_ranks != 0 && spec.params.num_ranks != schedule->num_ranks) {
    return Status::InvalidInput("--pp: " + std::to_string(spec.params.num_ranks) + " ranks, but " +
                                spec.schedule_file + " has " +
                                std::to_string(schedule->num_ranks));
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
                ": microbatch " + std::to_string(j) + " is out of range; --microbatches " +
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
      return Status::InvalidInput("--stage-to-rank: " + std::to_string(spec.stage_to_rank.size()) +
                                  " ranks for the " + std::to_string(schedule->num_stages) +
                                  " stages of " + spec.schedule_file +
                                  "; give one rank per stage");
    }
    schedule->stage_to_rank = spec.stage_to_rank;
  }
  status = CheckSchedule(*schedule);
  if (!status.ok()) return Status::InvalidInput(spec.schedule_file + ": " + status.message());
  return Status();
}

}  // namespace

Status BuildSchedule(const RunSpec& spec, Schedule* schedule, std::string* label) {
  if (!spec.schedule_file.empty()) {
    *label = spec.schedule_file;
    return LoadScheduleFile(spec, schedule);
  }
  const ScheduleInfo* info = FindSchedule(spec.schedule_name);
  if (info == nullptr) {
    return Status::InvalidInput("--schedule: unknown schedule '" + spec.schedule_name +
                                "'; valid: " + ScheduleNames());
  }
  *label = std::string(info->name);
  return GenerateSchedule(info->name, spec.params, schedule);
}

Status PrepareRun(const RunSpec& spec, PreparedRun* run) {
  run->spec = spec;
  Status status = BuildSchedule(spec, &run->schedule, &run->label);
  if (!status.ok()) return status;
  status = BuildStageCosts(spec.costs, run->schedule.num_stages, &run->costs);
  if (!status.ok()) return status;
  status = CheckCostsCoverSchedule(run->costs, run->schedule);
  if (!status.ok()) return status;
  status = MakePlatform(spec.platform, spec.platform_options, run->schedule.num_ranks,
                        &run->platform);
  if (!status.ok()) return status;
  return CompileTaskGraph(run->schedule, run->costs, &run->graph);
}

Status ExecuteRun(const PreparedRun& run, RunResult* result) {
  Timeline timeline;
  Status status = Execute(run.spec.engine, run.graph, run.platform, &timeline);
  if (!status.ok()) return status;
  result->spec = run.spec;
  result->label = run.label;
  result->num_ranks = run.schedule.num_ranks;
  result->num_stages = run.schedule.num_stages;
  result->num_microbatches = run.schedule.num_microbatches;
  result->platform = run.platform.name;
  result->metrics = ComputeMetrics(run.schedule, run.costs, run.graph, timeline);
  return Status();
}

}  // namespace ppsim
