// What a run reports: makespan, bubbles and activation memory, from an executed timeline.
//
// Definitions (also in README.md):
//   busy(r)               sum of rank r's compute durations
//   span(r)               rank r's first compute start to its last compute end
//   makespan              earliest start to latest end of any task (compute or transfer)
//   bubble_over_makespan  1 - sum(busy) / (ranks * makespan)
//   bubble_over_ideal     (ranks * makespan - sum(busy)) / sum(busy)     (Megatron's (p-1)/m)
//   stage_bubble_rate     (S - busy(r*)) / S, S = the largest span, r* the (first) rank with it
//                         (the zero-bubble paper's bubble rate)
//   peak activation(r)    running maximum of live activation bytes in r's order: F adds M_B
//                         when it starts; I frees M_B - M_W, W frees M_W, B frees M_B when they end.
//   static memory(r)      sum of the static bytes (parameters, gradients, optimizer state) of r's
//                         stages; peak memory = static + peak activation; oom = peak > capacity.
#ifndef PPSIM_SIM_METRICS_H_
#define PPSIM_SIM_METRICS_H_

#include <cstdint>
#include <vector>

#include "models/stage_costs.h"
#include "schedules/schedule.h"
#include "sim/engine.h"
#include "sim/task_graph.h"

namespace ppsim {

struct RankMetrics {
  int32_t rank = 0;
  double busy_s = 0;
  double span_s = 0;
  double idle_in_span_s = 0;  // span - busy
  double first_start_s = 0;
  double last_end_s = 0;
  int64_t peak_activation_bytes = 0;
  double peak_activation_time_s = 0;  // when the peak was first reached
  int64_t static_memory_bytes = 0;
  int64_t peak_memory_bytes = 0;      // static + peak activation
  int64_t memory_capacity_bytes = 0;  // 0: unlimited
  bool oom = false;                   // peak_memory_bytes > memory_capacity_bytes
};

// Live activation bytes of a rank from `time_s` on.
struct MemorySample {
  double time_s = 0;
  int64_t live_activation_bytes = 0;
};

struct RunMetrics {
  double makespan_s = 0;
  double bubble_over_makespan = 0;
  double bubble_over_ideal = 0;
  double stage_bubble_rate = 0;
  size_t num_compute_tasks = 0;
  size_t num_transfer_tasks = 0;
  int64_t transfer_bytes = 0;
  std::vector<RankMetrics> ranks;
  int32_t oom_ranks = 0;
  // Per rank, every change of live activation bytes in time order (for traces and plots).
  std::vector<std::vector<MemorySample>> memory_timeline;
};

// `memory_capacity_bytes` is each GPU's memory (0: unlimited, nothing is out of memory).
RunMetrics ComputeMetrics(const Schedule& schedule, const StageCosts& costs,
                          const TaskGraph& graph, const Timeline& timeline,
                          int64_t memory_capacity_bytes = 0);

// Peak live activation bytes of each rank, from its order alone (a rank runs one op at a time).
std::vector<int64_t> PeakActivationBytes(const Schedule& schedule, const StageCosts& costs);

}  // namespace ppsim

#endif  // PPSIM_SIM_METRICS_H_
