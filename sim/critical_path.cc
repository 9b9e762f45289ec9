// The critical-path engine: one pass over the DAG in topological order. With no contention a
// task starts exactly when its last predecessor ends, so the longest path is the schedule.
#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "sim/engine.h"

namespace ppsim {
namespace {

class CriticalPath {
 public:
  CriticalPath(const TaskGraph& graph, const PlatformSpec& platform, Timeline* timeline)
      : graph_(graph),
        platform_(platform),
        timeline_(timeline),
        start_(timeline->start_s),
        gpus_(graph.layout.tp * graph.layout.cp) {
    timeline_->start_s.assign(graph.num_tasks(), 0.0);
    timeline_->end_s.assign(graph.num_tasks(), 0.0);
    if (!graph.part_begin.empty()) {
      timeline_->part_start_s.assign(graph.part_begin.back(), 0.0);
      timeline_->part_end_s.assign(graph.part_begin.back(), 0.0);
    }
  }

  void Run() {
    for (TaskId t : graph_.topological_order) {
      const Task& task = graph_.tasks[t];
      double duration = task.duration_s;  // compute; 0 for a wait
      if (task.kind == TaskKind::kTransfer || task.kind == TaskKind::kAllReduce) {
        const Route route = RouteOf(task, platform_);
        duration = platform_.UncontendedTransferTime(route, task.bytes);
        if (task.steps > 1) {
          duration += (task.steps - 1) * platform_.UncontendedTransferTime(route, 0);
        }
      } else if (task.kind == TaskKind::kHostCopy) {
        duration = HostCopySeconds(platform_, task.bytes);
      } else if (task.kind == TaskKind::kCompute) {
        if (const TaskProgram* program = graph_.ProgramOfTask(t)) {
          duration = RunProgram(t, *program);
        }
      }
      const double end = start_[t] + duration;
      timeline_->end_s[t] = end;
      for (TaskId next : boost::make_iterator_range(boost::adjacent_vertices(t, graph_.dag))) {
        start_[next] = std::max(start_[next], end);
      }
    }
  }

 private:
  // Runs compute task t's program; returns the task's duration: its compute (its MoE parts, or
  // its own duration) and its rings, tensor-parallel ones after the compute (or alongside it),
  // ring attention alongside it.
  double RunProgram(TaskId t, const TaskProgram& program) {
    const double start = start_[t];
    double duration = graph_.tasks[t].duration_s;
    if (HasMoeParts(program)) duration = RunMoeParts(t, program) - start;
    // A serial exchange (the other --cp-comm-types, a2a+p2p's inner all-to-alls) runs first; the
    // compute and the other rings after it.
    const int32_t cp = RingPartOf(program, PartKind::kCpRing);
    const int32_t a2a = RingPartOf(program, PartKind::kCpA2a);
    const int32_t serial = a2a >= 0 ? a2a : cp >= 0 && program[cp].serial ? cp : -1;
    const double before =
        serial >= 0 ? RingTime(graph_.tasks[t], program[serial].bytes, program[serial].kind) : 0;
    const double compute_s = duration;
    duration += before;
    for (size_t i = MoePartCount(program); i < program.size(); ++i) {
      const TaskPart& ring = program[i];
      const double ring_start = ring.kind == PartKind::kCpA2a ? start
                                : ring.kind == PartKind::kCpRing
                                    ? (ring.serial ? start : start + before)
                                : graph_.tp_comm_overlap ? start + before
                                                         : start + before + compute_s;
      const double ring_end = ring_start + RingTime(graph_.tasks[t], ring.bytes, ring.kind);
      timeline_->part_start_s[graph_.part_begin[t] + i] = ring_start;
      timeline_->part_end_s[graph_.part_begin[t] + i] = ring_end;
      duration = std::max(duration, ring_end - start);
    }
    return duration;
  }

  // A program's MoE parts in order: each after its stream's part before and its chunk's part
  // before. Returns the compute's end.
  double RunMoeParts(TaskId t, const TaskProgram& program) {
    const std::vector<int32_t> chunk_before = ChunkPredecessors(program);
    const size_t begin = graph_.part_begin[t];
    double stream_free[2] = {start_[t], start_[t]};  // compute, communication
    double end = start_[t];
    for (size_t i = 0; i < MoePartCount(program); ++i) {
      const TaskPart& part = program[i];
      const int s = part.kind == PartKind::kCompute ? 0 : 1;
      double at = stream_free[s];
      if (chunk_before[i] >= 0) at = std::max(at, timeline_->part_end_s[begin + chunk_before[i]]);
      const double took = s == 0 ? part.duration_s : AllToAllSeconds(graph_.tasks[t], part);
      timeline_->part_start_s[begin + i] = at;
      timeline_->part_end_s[begin + i] = at + took;
      stream_free[s] = at + took;
      end = std::max(end, at + took);
    }
    return end;
  }

  // The longest of a ring's links, all moving `bytes` at once.
  double RingTime(const Task& task, int64_t bytes, PartKind kind) const {
    double longest = 0;
    for (int32_t i = 0; i < gpus_; ++i) {
      const TaskGpus link =
          RingPartLink(task, platform_, graph_.layout, graph_.cp_a2a_size, kind, i);
      longest = std::max(longest, platform_.UncontendedTransferTime(link.src, link.dst, bytes));
    }
    return longest;
  }

  // An all-to-all part's time, per replica, rank and sizes computed once.
  double AllToAllSeconds(const Task& task, const TaskPart& part) {
    auto [time, fresh] =
        seconds_.try_emplace({task.replica, task.rank, part.bytes, part.node_bytes}, 0.0);
    if (!fresh) return time->second;
    auto [load, added] = loads_.try_emplace(task.rank);
    if (added) load->second = AllToAllLinkLoads(graph_, platform_, task.rank);
    time->second =
        AllToAllTime(graph_, platform_, flows_.Of(graph_, platform_, task), load->second, part);
    return time->second;
  }

  const TaskGraph& graph_;
  const PlatformSpec& platform_;
  Timeline* timeline_;
  std::vector<double>& start_;
  int32_t gpus_;  // of a rank
  // All-to-alls: per replica and rank its flows, per rank each link's load (the same for every
  // part), per replica, rank and sizes the time.
  AllToAllFlowCache flows_;
  std::map<int32_t, std::map<int32_t, int64_t>> loads_;
  std::map<std::tuple<int32_t, int32_t, int64_t, int64_t>, double> seconds_;
};

}  // namespace

Status RunCriticalPath(const TaskGraph& graph, const PlatformSpec& platform, Timeline* timeline) {
  CriticalPath(graph, platform, timeline).Run();
  return Status();
}

}  // namespace ppsim
