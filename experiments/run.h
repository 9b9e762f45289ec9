// One simulation run, end to end: describe -> compile -> execute -> metrics.
#ifndef PPSIM_EXPERIMENTS_RUN_H_
#define PPSIM_EXPERIMENTS_RUN_H_

#include <string>

#include "models/stage_costs.h"
#include "platforms/platform.h"
#include "schedules/generator.h"
#include "schedules/schedule.h"
#include "schedules/status.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/task_graph.h"

namespace ppsim {

// Everything that defines a run, as the user gave it.
struct RunSpec {
  // Exactly one of schedule_name (a registry name) and schedule_file (text IR, or torch CSV when
  // the name ends in .csv) is set.
  std::string schedule_name;
  std::string schedule_file;
  // With schedule_file, num_ranks and num_microbatches are 0 unless the user gave them; then they
  // must match the file.
  ScheduleParams params;
  // With schedule_file: the rank of every stage; empty to infer it from the file.
  std::vector<RankIndex> stage_to_rank;
  CostText costs;
  std::string platform = "h100-node";
  PlatformOptions platform_options;
  EngineKind engine = EngineKind::kSimGrid;
};

// A run described, validated and compiled: ready to execute.
struct PreparedRun {
  RunSpec spec;
  std::string label;  // The schedule's name or file.
  Schedule schedule;
  StageCosts costs;
  PlatformSpec platform;
  TaskGraph graph;
};

struct RunResult {
  RunSpec spec;
  std::string label;
  int32_t num_ranks = 0;
  int32_t num_stages = 0;
  int32_t num_microbatches = 0;
  std::string platform;
  RunMetrics metrics;
};

// Generates (or reads) and checks the schedule alone; `label` is its name or file.
Status BuildSchedule(const RunSpec& spec, Schedule* schedule, std::string* label);

// Builds the schedule, costs and platform, checks them and compiles the task graph. Returns
// InvalidInput for bad input and Deadlock for an order that cannot execute; never touches SimGrid.
Status PrepareRun(const RunSpec& spec, PreparedRun* run);

// Executes a prepared run with its engine and computes its metrics.
Status ExecuteRun(const PreparedRun& run, RunResult* result);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_RUN_H_
