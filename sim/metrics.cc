#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace ppsim {
namespace {

// Bytes an op frees when it ends.
int64_t FreedAtEnd(const Op& op, const StageCosts& costs) {
  const int32_t s = op.stage.value();
  switch (op.kind) {
    case OpKind::kForward: return 0;
    case OpKind::kBackwardInput: return costs.activation_bytes[s] - costs.activation_w_bytes[s];
    case OpKind::kBackwardWeight: return costs.activation_w_bytes[s];
    case OpKind::kBackward: return costs.activation_bytes[s];
  }
  return 0;
}

// Walks one rank's order: calls allocated(index, live) after an action's forward allocations and
// freed(index, live) after its frees.
template <class Allocated, class Freed>
void WalkActivations(const std::vector<Action>& order, const StageCosts& costs,
                     Allocated allocated, Freed freed) {
  int64_t live = 0;
  for (size_t index = 0; index < order.size(); ++index) {
    live += ActivationAllocatedAtStart(order[index], costs);
    allocated(index, live);
    live -= ActivationFreedAtEnd(order[index], costs);
    freed(index, live);
  }
}

}  // namespace

int64_t MemoryReserve::BytesAt(int64_t activation_bytes) const {
  return fixed_bytes + FragmentationBytesAt(activation_bytes);
}

int64_t MemoryReserve::FragmentationBytesAt(int64_t activation_bytes) const {
  // Rounded up to a whole byte, so that the estimate errs towards out of memory.
  return static_cast<int64_t>(
      std::ceil(activation_fraction * static_cast<double>(activation_bytes)));
}

int64_t RankMemoryBytes(int64_t static_bytes, int64_t live_activation_bytes,
                        const MemoryReserve& reserve) {
  return static_bytes + live_activation_bytes + reserve.BytesAt(live_activation_bytes);
}

int64_t MaxLiveActivationBytes(int64_t static_bytes, int64_t capacity_bytes,
                               const MemoryReserve& reserve) {
  if (RankMemoryBytes(static_bytes, 0, reserve) > capacity_bytes) return -1;
  // RankMemoryBytes is non-decreasing in the live bytes: the largest that fits, by bisection.
  int64_t fits = 0;
  int64_t exceeds = capacity_bytes - static_bytes + 1;
  while (exceeds - fits > 1) {
    const int64_t mid = fits + (exceeds - fits) / 2;
    (RankMemoryBytes(static_bytes, mid, reserve) <= capacity_bytes ? fits : exceeds) = mid;
  }
  return fits;
}

int64_t ActivationAllocatedAtStart(const Action& action, const StageCosts& costs) {
  int64_t bytes = 0;
  for (int k = 0; k < action.num_ops(); ++k) {
    const Op& op = action.op(k);
    if (op.kind == OpKind::kForward) bytes += costs.activation_bytes[op.stage.value()];
  }
  return bytes;
}

int64_t ActivationFreedAtEnd(const Action& action, const StageCosts& costs) {
  int64_t bytes = 0;
  for (int k = 0; k < action.num_ops(); ++k) bytes += FreedAtEnd(action.op(k), costs);
  return bytes;
}

std::vector<int64_t> PeakActivationBytes(const Schedule& schedule, const StageCosts& costs) {
  std::vector<int64_t> peaks;
  for (const auto& order : schedule.orders) {
    int64_t peak = 0;
    WalkActivations(
        order, costs, [&](size_t, int64_t live) { peak = std::max(peak, live); },
        [](size_t, int64_t) {});
    peaks.push_back(peak);
  }
  return peaks;
}

std::vector<int64_t> StaticBytesPerRank(const Schedule& schedule, const StageCosts& costs) {
  std::vector<int64_t> static_bytes(schedule.num_ranks, 0);
  for (int32_t stage = 0; stage < static_cast<int32_t>(costs.static_bytes.size()); ++stage) {
    static_bytes[schedule.stage_to_rank[stage].value()] += costs.static_bytes[stage];
  }
  return static_bytes;
}

MemoryBreakdown MemoryBreakdownOf(const Schedule& schedule, const StageCosts& costs, int32_t rank,
                                  int64_t peak_activation_bytes, const MemoryReserve& reserve) {
  MemoryBreakdown b;
  int64_t static_bytes = 0;
  // A part's vector is empty when the costs did not split their static bytes.
  auto add = [&](const std::vector<int64_t>& part, int32_t stage, int64_t* sum) {
    if (!part.empty()) *sum += part[stage];
  };
  for (int32_t stage = 0; stage < static_cast<int32_t>(costs.static_bytes.size()); ++stage) {
    if (schedule.stage_to_rank[stage].value() != rank) continue;
    static_bytes += costs.static_bytes[stage];
    add(costs.weight_bytes, stage, &b.weights_bytes);
    add(costs.gradient_bytes, stage, &b.gradients_bytes);
    add(costs.optimizer_state_bytes, stage, &b.optimizer_state_bytes);
  }
  b.unsplit_static_bytes =
      static_bytes - b.weights_bytes - b.gradients_bytes - b.optimizer_state_bytes;
  b.activations_bytes = peak_activation_bytes;
  b.fragmentation_bytes = reserve.FragmentationBytesAt(peak_activation_bytes);
  b.fixed_reserve_bytes = reserve.fixed_bytes;
  return b;
}

std::vector<int64_t> PeakMemoryBytes(const Schedule& schedule, const StageCosts& costs,
                                     const MemoryReserve& reserve) {
  const std::vector<int64_t> static_bytes = StaticBytesPerRank(schedule, costs);
  const std::vector<int64_t> activations = PeakActivationBytes(schedule, costs);
  std::vector<int64_t> peaks;
  for (size_t rank = 0; rank < activations.size(); ++rank) {
    peaks.push_back(RankMemoryBytes(static_bytes[rank], activations[rank], reserve));
  }
  return peaks;
}

namespace {

// The task counts and bytes of `m`, its makespan and the all-reduces' tail.
void CountTasks(const TaskGraph& graph, const Timeline& timeline, RunMetrics* m) {
  m->num_compute_tasks = graph.num_compute_tasks();
  double earliest = std::numeric_limits<double>::infinity();
  double latest = 0;
  double latest_compute = 0;
  double latest_allreduce = 0;
  // Each GPU of the rank makes every all-to-all call (its bytes: ComputeLinkMetrics).
  const int64_t gpus = int64_t{graph.layout.tp} * graph.layout.cp;
  for (size_t t = 0; t < graph.num_tasks(); ++t) {
    earliest = std::min(earliest, timeline.start_s[t]);
    latest = std::max(latest, timeline.end_s[t]);
    const Task& task = graph.tasks[t];
    switch (task.kind) {
      case TaskKind::kCompute:
        latest_compute = std::max(latest_compute, timeline.end_s[t]);
        if (const TaskProgram* program = graph.ProgramOfTask(t)) {
          for (const TaskPart& part : *program) {
            if (part.kind == PartKind::kAllToAll) m->num_alltoall_tasks += gpus;
          }
        }
        break;
      case TaskKind::kTransfer:
        ++m->num_transfer_tasks;
        m->transfer_bytes += task.bytes;
        break;
      case TaskKind::kAllReduce:
        m->num_allreduce_tasks += task.steps;  // a merged member's chain counts its steps
        m->allreduce_bytes += task.bytes;
        latest_allreduce = std::max(latest_allreduce, timeline.end_s[t]);
        break;
      case TaskKind::kWait:
        ++m->num_wait_tasks;
        break;
      case TaskKind::kOptimizer:
        ++m->num_optimizer_tasks;
        break;
      case TaskKind::kDelay:
      case TaskKind::kHostCopy:
        break;
    }
  }
  m->makespan_s = graph.num_tasks() == 0 ? 0 : latest - earliest;
  m->allreduce_tail_s = std::max(0.0, latest_allreduce - latest_compute);
}

// Per rank, replica 0's time blocked in p2p calls and its optimizer step's.
struct StreamSeconds {
  std::vector<double> wait;
  std::vector<double> optimizer;
};

StreamSeconds StreamSecondsOf(const Schedule& schedule, const TaskGraph& graph,
                              const Timeline& timeline) {
  StreamSeconds seconds{std::vector<double>(schedule.num_ranks, 0.0),
                        std::vector<double>(schedule.num_ranks, 0.0)};
  for (size_t t = graph.communication_end(); t < graph.optimizers_begin(); ++t) {
    const Task& wait = graph.tasks[t];
    if (wait.replica == 0) seconds.wait[wait.rank] += timeline.end_s[t] - timeline.start_s[t];
  }
  for (size_t t = graph.optimizers_begin(); t < graph.num_tasks(); ++t) {
    const Task& step = graph.tasks[t];
    if (step.replica == 0) seconds.optimizer[step.rank] = timeline.end_s[t] - timeline.start_s[t];
  }
  return seconds;
}

// With activation offload (sim/host_copies.h): replica 0's `rank`'s live activations over time.
// The order's allocations (at actions' starts) and frees (at their ends), less each offload's
// bytes from its end and plus each reload's from its start, in time order; at equal times the
// order's events come first, in order (as without offload), then the copies'.
std::vector<MemorySample> OffloadMemorySamples(const Schedule& schedule, const StageCosts& costs,
                                               const TaskGraph& graph, const Timeline& timeline,
                                               int32_t rank) {
  struct Event {
    double time_s;
    int64_t delta;
  };
  std::vector<Event> events;
  const auto& order = schedule.orders[rank];
  for (size_t i = 0; i < order.size(); ++i) {
    const TaskId c = graph.ComputeTask(rank, i);
    events.push_back({timeline.start_s[c], ActivationAllocatedAtStart(order[i], costs)});
    events.push_back({timeline.end_s[c], -ActivationFreedAtEnd(order[i], costs)});
  }
  for (size_t t = graph.num_compute_tasks(); t < graph.communication_end(); ++t) {
    const Task& copy = graph.tasks[t];
    if (copy.kind != TaskKind::kHostCopy || copy.replica != 0 || copy.rank != rank) continue;
    if (copy.peer_shard == kDeviceToHost) {
      events.push_back({timeline.end_s[t], -copy.bytes});
    } else {
      events.push_back({timeline.start_s[t], copy.bytes});
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.time_s < b.time_s; });
  std::vector<MemorySample> samples;
  int64_t live = 0;
  for (const Event& e : events) {
    live += e.delta;
    samples.push_back({e.time_s, live});
  }
  return samples;
}

// Replica 0's `rank`: its span, busy and idle time and its memory over time (into `samples`).
RankMetrics RankMetricsOf(const Schedule& schedule, const StageCosts& costs, const TaskGraph& graph,
                          const Timeline& timeline, int32_t rank,
                          std::vector<MemorySample>* samples) {
  RankMetrics r;
  r.rank = rank;
  const TaskId begin = graph.compute_begin[rank];
  const TaskId end = graph.compute_begin[rank + 1];
  if (begin < end) {
    r.first_start_s = timeline.start_s[begin];
    r.last_end_s = timeline.end_s[end - 1];
  }
  for (TaskId t = begin; t < end; ++t) r.busy_s += timeline.end_s[t] - timeline.start_s[t];
  r.span_s = r.last_end_s - r.first_start_s;
  r.idle_in_span_s = r.span_s - r.busy_s;
  // busy_s sums end - start over the rank's tasks, so each of them can leave a rounding error
  // of about span x epsilon: a difference within that is 0, not idle time.
  const double noise =
      4 * std::numeric_limits<double>::epsilon() * r.span_s * static_cast<double>(end - begin + 1);
  if (std::fabs(r.idle_in_span_s) <= noise) r.idle_in_span_s = 0;
  if (graph.has_host_copies) {
    *samples = OffloadMemorySamples(schedule, costs, graph, timeline, rank);
    for (const MemorySample& s : *samples) {
      if (s.live_activation_bytes > r.peak_activation_bytes) {
        r.peak_activation_bytes = s.live_activation_bytes;
        r.peak_activation_time_s = s.time_s;
      }
    }
    return r;
  }
  WalkActivations(
      schedule.orders[rank], costs,
      [&](size_t index, int64_t live) {
        const double t = timeline.start_s[graph.ComputeTask(rank, index)];
        samples->push_back({t, live});
        if (live > r.peak_activation_bytes) {
          r.peak_activation_bytes = live;
          r.peak_activation_time_s = t;
        }
      },
      [&](size_t index, int64_t live) {
        samples->push_back({timeline.end_s[graph.ComputeTask(rank, index)], live});
      });
  return r;
}

}  // namespace

RunMetrics ComputeMetrics(const Schedule& schedule, const StageCosts& costs, const TaskGraph& graph,
                          const Timeline& timeline, int64_t memory_capacity_bytes,
                          MemoryReserve reserve) {
  RunMetrics m;
  m.reserve = reserve;
  CountTasks(graph, timeline, &m);
  const std::vector<int64_t> static_bytes = StaticBytesPerRank(schedule, costs);
  const StreamSeconds seconds = StreamSecondsOf(schedule, graph, timeline);
  m.memory_timeline.resize(schedule.num_ranks);
  double total_busy = 0;
  for (int32_t rank = 0; rank < schedule.num_ranks; ++rank) {
    RankMetrics r = RankMetricsOf(schedule, costs, graph, timeline, rank, &m.memory_timeline[rank]);
    r.p2p_wait_s = seconds.wait[rank];
    r.optimizer_s = seconds.optimizer[rank];
    m.p2p_wait_s += r.p2p_wait_s;
    r.static_memory_bytes = static_bytes[rank];
    r.reserve_bytes = reserve.BytesAt(r.peak_activation_bytes);
    r.peak_memory_bytes = RankMemoryBytes(r.static_memory_bytes, r.peak_activation_bytes, reserve);
    r.memory = MemoryBreakdownOf(schedule, costs, rank, r.peak_activation_bytes, reserve);
    r.memory_capacity_bytes = memory_capacity_bytes;
    r.oom = memory_capacity_bytes > 0 && r.peak_memory_bytes > memory_capacity_bytes;
    m.oom_ranks += r.oom ? 1 : 0;
    total_busy += r.busy_s;
    m.ranks.push_back(r);
  }

  m.communication = ComputeCommunication(graph, timeline, schedule.num_ranks);
  const double capacity = schedule.num_ranks * m.makespan_s;
  m.bubble_over_makespan = capacity > 0 ? 1 - total_busy / capacity : 0;
  m.bubble_over_ideal = total_busy > 0 ? (capacity - total_busy) / total_busy : 0;
  const RankMetrics* longest = nullptr;
  for (const RankMetrics& r : m.ranks) {
    if (longest == nullptr || r.span_s > longest->span_s) longest = &r;
  }
  if (longest != nullptr && longest->span_s > 0) {
    m.stage_bubble_rate = (longest->span_s - longest->busy_s) / longest->span_s;
  }
  return m;
}

namespace {

// The transfers a run made, link by link, and the traffic they add up to.
class LinkUses {
 public:
  LinkUses(const TaskGraph& graph, const PlatformSpec& platform, const Timeline& timeline,
           RunMetrics* metrics)
      : graph_(graph),
        platform_(platform),
        timeline_(timeline),
        metrics_(metrics),
        uses_(static_cast<size_t>(platform.num_links())) {}

  // Transfers and all-reduce steps.
  void AddTransfers() {
    for (size_t t = graph_.num_compute_tasks(); t < graph_.communication_end(); ++t) {
      if (graph_.tasks[t].kind == TaskKind::kDelay || graph_.tasks[t].kind == TaskKind::kHostCopy) {
        continue;  // timers; host copies cross no link of the cluster
      }
      const Task& task = graph_.tasks[t];
      Add(GpusOf(task, platform_), RouteOf(task, platform_), timeline_.start_s[t],
          timeline_.end_s[t], task.bytes, true, task.steps);
    }
  }

  // All-to-alls: every flow the engine ran loads its links; the traffic counts the sends of the
  // compiled GPUs (folded, the flows into them stand for their peers' sends).
  void AddAllToAlls() {
    AllToAllFlowCache flows_of;
    const int32_t gpus = graph_.layout.tp * graph_.layout.cp;
    for (size_t t = 0; t < graph_.program_of.size(); ++t) {
      const TaskProgram* program = graph_.ProgramOfTask(t);
      if (program == nullptr || !HasMoeParts(*program)) continue;
      const Task& task = graph_.tasks[t];
      const std::vector<TaskGpus>& flows = flows_of.Of(graph_, platform_, task);
      const int32_t first_gpu = platform_.GpuOf(task.replica, task.rank, 0);
      for (size_t i = 0; i < program->size(); ++i) {
        const TaskPart& part = (*program)[i];
        if (part.kind != PartKind::kAllToAll) continue;
        const size_t record = graph_.part_begin[t] + i;
        for (const TaskGpus& flow : flows) {
          // The rank's group of GPUs is consecutive (platforms/platform.h).
          const bool send = flow.src >= first_gpu && flow.src < first_gpu + gpus;
          const int64_t bytes = FlowBytes(graph_, platform_, flow, part);
          Add(flow, platform_.RouteBetween(flow.src, flow.dst), timeline_.part_start_s[record],
              timeline_.part_end_s[record], bytes, send);
          if (send) {
            (platform_.NodeOf(flow.src) == platform_.NodeOf(flow.dst) ? metrics_->intra_node
                                                                      : metrics_->inter_node)
                .alltoall_bytes += bytes;
            metrics_->alltoall_bytes += bytes;
          }
        }
      }
    }
  }

  // Tensor-parallel rings or ring attention: one transfer from every GPU of the rank's group.
  void AddRings(PartKind kind) {
    const int32_t gpus = graph_.layout.tp * graph_.layout.cp;
    for (size_t t = 0; t < graph_.program_of.size(); ++t) {
      const TaskProgram* program = graph_.ProgramOfTask(t);
      const int32_t ring = program == nullptr ? -1 : RingPartOf(*program, kind);
      if (ring < 0) continue;
      const Task& task = graph_.tasks[t];
      const size_t record = graph_.part_begin[t] + static_cast<size_t>(ring);
      const int64_t bytes = (*program)[ring].bytes;
      for (int32_t i = 0; i < gpus; ++i) {
        const TaskGpus link =
            RingPartLink(task, platform_, graph_.layout, graph_.cp_a2a_size, kind, i);
        Add(link, platform_.RouteBetween(link.src, link.dst), timeline_.part_start_s[record],
            timeline_.part_end_s[record], bytes);
      }
    }
  }

  // Each link's transfers, bytes, busy time (the union of its transfers' intervals) and
  // utilization, in link order.
  std::vector<LinkMetrics> Links() {
    std::vector<LinkMetrics> links;
    for (size_t id = 0; id < uses_.size(); ++id) {
      std::vector<Use>& uses = uses_[id];
      if (uses.empty()) continue;
      std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) {
        return a.start_s != b.start_s ? a.start_s < b.start_s : a.end_s < b.end_s;
      });
      const LinkSpec spec = platform_.Link(static_cast<int32_t>(id));
      LinkMetrics link;
      link.name = spec.name;
      link.inter_node = spec.inter_node;
      link.bandwidth_bytes_per_s = spec.bandwidth_bytes_per_s;
      // Union of the intervals: they come sorted by start.
      double open_start = uses.front().start_s;
      double open_end = uses.front().end_s;
      for (const Use& use : uses) {
        link.transfers += use.transfers;
        link.bytes += use.bytes;
        if (use.start_s > open_end) {
          link.busy_s += open_end - open_start;
          open_start = use.start_s;
        }
        open_end = std::max(open_end, use.end_s);
      }
      link.busy_s += open_end - open_start;
      const double capacity = spec.bandwidth_bytes_per_s * metrics_->makespan_s;
      link.utilization =
          capacity > 0 && std::isfinite(capacity) ? static_cast<double>(link.bytes) / capacity : 0;
      links.push_back(std::move(link));
    }
    return links;
  }

 private:
  // Transfers over one link during one interval (those of one all-to-all part ran together).
  struct Use {
    double start_s;
    double end_s;
    int64_t bytes;
    int64_t transfers;  // a merged ring chain (Task::steps) counts each of its steps
  };

  void Add(const TaskGpus& gpus, const Route& route, double start, double end, int64_t bytes,
           bool traffic_too = true, int32_t transfers = 1) {
    TrafficMetrics& traffic = platform_.NodeOf(gpus.src) == platform_.NodeOf(gpus.dst)
                                  ? metrics_->intra_node
                                  : metrics_->inter_node;
    if (traffic_too) {
      traffic.transfers += transfers;
      traffic.bytes += bytes;
      traffic.time_s += end - start;
    }
    for (int i = 0; i < route.num_links; ++i) {
      std::vector<Use>& uses = uses_[static_cast<size_t>(route.links[i])];
      if (!uses.empty() && uses.back().start_s == start && uses.back().end_s == end) {
        uses.back().bytes += bytes;  // the same interval: one use
        uses.back().transfers += transfers;
      } else {
        uses.push_back({start, end, bytes, transfers});
      }
    }
  }

  const TaskGraph& graph_;
  const PlatformSpec& platform_;
  const Timeline& timeline_;
  RunMetrics* metrics_;
  std::vector<std::vector<Use>> uses_;  // by link id
};

}  // namespace

void ComputeLinkMetrics(const TaskGraph& graph, const PlatformSpec& platform,
                        const Timeline& timeline, RunMetrics* metrics) {
  metrics->links.clear();
  metrics->intra_node = TrafficMetrics();
  metrics->inter_node = TrafficMetrics();
  metrics->alltoall_bytes = 0;
  if (!platform.xml_file.empty()) return;
  LinkUses uses(graph, platform, timeline, metrics);
  uses.AddTransfers();
  uses.AddAllToAlls();
  uses.AddRings(PartKind::kTpRing);
  uses.AddRings(PartKind::kCpRing);
  uses.AddRings(PartKind::kCpA2a);
  metrics->links = uses.Links();
}

}  // namespace ppsim
