// The critical-path engine: one pass over the DAG in topological order. With no contention a
// task starts exactly when its last predecessor ends, so the longest path is the schedule.
#include "sim/engine.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

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
  const int32_t gpus = graph.layout.tp * graph.layout.cp;
  // The longest of a ring's links, all moving `bytes` at once.
  auto ring_time = [&](const Task& task, int64_t bytes, bool attention) {
    double longest = 0;
    for (int32_t i = 0; i < gpus; ++i) {
      const TaskGpus link = attention
                                ? CpRingLink(task, platform, graph.layout.tp, graph.layout.cp, i)
                                : RingLink(task, platform, graph.layout.tp, i);
      longest = std::max(longest, platform.UncontendedTransferTime(link.src, link.dst, bytes));
    }
    return longest;
  };
  if (!graph.part_begin.empty()) {
    timeline->part_start_s.assign(graph.part_begin.back(), 0.0);
    timeline->part_end_s.assign(graph.part_begin.back(), 0.0);
  }
  // All-to-alls: per replica and rank its flows, per rank each link's load (the same for every
  // part), per replica, rank and sizes the time.
  AllToAllFlowCache flows;
  std::map<int32_t, std::map<int32_t, int64_t>> loads;
  std::map<std::tuple<int32_t, int32_t, int64_t, int64_t>, double> seconds;
  auto all_to_all_time = [&](const Task& task, const TaskPart& part) {
    auto [time, fresh] =
        seconds.try_emplace({task.replica, task.rank, part.bytes, part.node_bytes}, 0.0);
    if (!fresh) return time->second;
    auto [load, added] = loads.try_emplace(task.rank);
    if (added) load->second = AllToAllLinkLoads(graph, platform, task.rank);
    time->second =
        AllToAllTime(graph, platform, flows.Of(graph, platform, task), load->second, part);
    return time->second;
  };
  // A program's parts in order: each after its stream's part before and its chunk's part before.
  // Returns the compute's end.
  auto run_program = [&](TaskId t, const TaskProgram& program) {
    const std::vector<int32_t> chunk_before = ChunkPredecessors(program);
    const size_t begin = graph.part_begin[t];
    double stream_free[2] = {start[t], start[t]};  // compute, communication
    double end = start[t];
    for (size_t i = 0; i < program.size(); ++i) {
      const TaskPart& part = program[i];
      const int s = part.kind == PartKind::kCompute ? 0 : 1;
      double at = stream_free[s];
      if (chunk_before[i] >= 0) at = std::max(at, timeline->part_end_s[begin + chunk_before[i]]);
      const double took = s == 0 ? part.duration_s : all_to_all_time(graph.tasks[t], part);
      timeline->part_start_s[begin + i] = at;
      timeline->part_end_s[begin + i] = at + took;
      stream_free[s] = at + took;
      end = std::max(end, at + took);
    }
    return end;
  };
  for (TaskId t : graph.topological_order) {
    const Task& task = graph.tasks[t];
    double duration = task.duration_s;  // compute; 0 for a wait
    if (task.kind == TaskKind::kTransfer || task.kind == TaskKind::kAllReduce) {
      duration = platform.UncontendedTransferTime(RouteOf(task, platform), task.bytes);
    } else if (task.kind == TaskKind::kCompute) {
      if (const TaskProgram* program = graph.ProgramOfTask(t)) {
        duration = run_program(t, *program) - start[t];
      }
      const double compute_s = duration;
      // Tensor-parallel rings after the compute (or alongside it), ring attention alongside it.
      if (rings && HasRing(graph, t)) {
        const double ring_start = graph.tp_comm_overlap ? start[t] : start[t] + compute_s;
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
