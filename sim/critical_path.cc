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
  if (rings) {
    timeline->ring_start_s.assign(graph.num_compute_tasks(), 0.0);
    timeline->ring_end_s.assign(graph.num_compute_tasks(), 0.0);
  }
  for (TaskId t : graph.topological_order) {
    const Task& task = graph.tasks[t];
    double duration = task.duration_s;  // compute; 0 for a wait
    if (task.kind == TaskKind::kTransfer || task.kind == TaskKind::kAllReduce) {
      const TaskGpus gpus = GpusOf(task, platform);
      duration = platform.UncontendedTransferTime(gpus.src, gpus.dst, task.bytes);
    } else if (rings && HasRing(graph, t)) {
      // The ring's links all move the same bytes at once; after the compute, or alongside it.
      double ring = 0;
      for (int32_t k = 0; k < graph.tp; ++k) {
        const TaskGpus link = RingLink(task, platform, graph.tp, k);
        ring = std::max(ring, platform.UncontendedTransferTime(link.src, link.dst, task.bytes));
      }
      const double ring_start = graph.tp_comm_overlap ? start[t] : start[t] + task.duration_s;
      timeline->ring_start_s[t] = ring_start;
      timeline->ring_end_s[t] = ring_start + ring;
      duration = std::max(task.duration_s, ring_start + ring - start[t]);
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
