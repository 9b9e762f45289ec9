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
  for (TaskId t : graph.topological_order) {
    const Task& task = graph.tasks[t];
    double duration = task.duration_s;  // compute; 0 for a wait
    if (task.kind == TaskKind::kTransfer || task.kind == TaskKind::kAllReduce) {
      const TaskGpus gpus = GpusOf(task, platform);
      duration = platform.UncontendedTransferTime(gpus.src, gpus.dst, task.bytes);
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
