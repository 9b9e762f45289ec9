// The critical-path engine: one pass over the DAG in topological order. With no contention a
// task starts exactly when its last predecessor ends, so the longest path is the schedule.
#include "sim/engine.h"

#include <algorithm>

namespace ppsim {

Status RunCriticalPath(const TaskGraph& graph, const PlatformSpec& platform, Timeline* timeline) {
  const size_t n = graph.num_tasks();
  timeline->start_s.assign(n, 0.0);
  timeline->end_s.assign(n, 0.0);
  std::vector<double>& start = timeline->start_s;
  const bool rings = HasRings(graph);
  const bool cp_rings = HasCpRings(graph);
  if (rings) {
    timeline->ring_start_s.assign(graph.num_compute_tasks(), 0.0);
    timeline->ring_end_s.assign(graph.num_compute_tasks(), 0.0);
  }
  if (cp_rings) {
    timeline->cp_ring_start_s.assign(graph.num_compute_tasks(), 0.0);
    timeline->cp_ring_end_s.assign(graph.num_compute_tasks(), 0.0);
  }
  const int32_t gpus = graph.tp * graph.cp;
  // The longest of a ring's links, all moving `bytes` at once.
  auto ring_time = [&](const Task& task, int64_t bytes, bool attention) {
    double longest = 0;
    for (int32_t i = 0; i < gpus; ++i) {
      const TaskGpus link = attention ? CpRingLink(task, platform, graph.tp, graph.cp, i)
                                      : RingLink(task, platform, graph.tp, i);
      longest = std::max(longest, platform.UncontendedTransferTime(link.src, link.dst, bytes));
    }
    return longest;
  };
  for (TaskId t : graph.topological_order) {
    const Task& task = graph.tasks[t];
    double duration = task.duration_s;  // compute; 0 for a wait
    if (task.kind == TaskKind::kTransfer || task.kind == TaskKind::kAllReduce) {
      duration = platform.UncontendedTransferTime(RouteOf(task, platform), task.bytes);
    } else if (task.kind == TaskKind::kCompute) {
      // Tensor-parallel rings after the compute (or alongside it), ring attention alongside it.
      if (rings && HasRing(graph, t)) {
        const double ring_start = graph.tp_comm_overlap ? start[t] : start[t] + task.duration_s;
        timeline->ring_start_s[t] = ring_start;
        timeline->ring_end_s[t] = ring_start + ring_time(task, task.bytes, false);
        duration = std::max(duration, timeline->ring_end_s[t] - start[t]);
      }
      if (cp_rings && HasCpRing(graph, t)) {
        timeline->cp_ring_start_s[t] = start[t];
        timeline->cp_ring_end_s[t] = start[t] + ring_time(task, graph.cp_bytes[t], true);
        duration = std::max(duration, timeline->cp_ring_end_s[t] - start[t]);
      }
    }
    const double end = start[t] + duration;
    timeline->end_s[t] = end;
    for (TaskId next : boost::make_iterator_range(boost::adjacent_vertices(t, graph.dag))) {
      start[next] = std::max(start[next], end);
    }
  }
  return Status();
}

}  // namespace ppsim
