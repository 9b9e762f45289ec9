// The SimGrid engine: the DAG runs as SimGrid activities created just in time.
//
// SimGrid 3.32 keeps activities created outside actors in a list it scans on removal, so wiring
// the whole DAG up front is quadratic. Instead each task keeps a count of unfinished
// predecessors and becomes an Exec or a Comm only when that count reaches zero, from inside the
// completion callback of its last predecessor. The network model is set so that an uncontended
// transfer takes exactly latency + bytes / bandwidth.
//
// The engine is a per-process singleton that cannot be reset, so RunSimGrid runs the simulation in
// a child process (base/subprocess.h) which sends the timeline back; a process that exists only
// for this run (a sweep's point) calls SimulateInThisProcess instead.
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "base/subprocess.h"
#include "sim/engine.h"
#include "sim/simgrid_platform.h"

namespace ppsim {
namespace {

namespace s4u = simgrid::s4u;

constexpr uint64_t kMagic = 0x7070'7369'6d54'4c32ULL;          // "ppsimTL2": a timeline follows
constexpr uint64_t kInputError = 0x7070'7369'6d45'5231ULL;     // "ppsimER1": a message follows
constexpr uint64_t kInternalError = 0x7070'7369'6d45'5232ULL;  // "ppsimER2": a message follows

// Where a transfer goes in SimGrid: its receiver's host, or for a mirrored step a mirror host of
// the GPU of replica 0 that stands for its receiver (routes are per pair of hosts, and the
// mirrored route differs from the route between the two GPUs).
// The replicas a mirrored step moves within: a node's group of ppn (successor 1, predecessor
// ppn - 1 < dp - 1) returns ppn; the whole ring or the ring across nodes returns dp.
int32_t MirroredGroup(const Task& task, int32_t dp) {
  return task.peer_replica == 1 && task.source_replica != dp - 1 ? task.source_replica + 1 : dp;
}

TaskGpus EndpointsOf(const Task& task, const PlatformSpec& platform) {
  TaskGpus gpus = GpusOf(task, platform);
  if (task.mirrored) {
    // The ring's (successor 1), a node's group's, across nodes' (successor ppn), or the experts'
    // ring's.
    const int32_t variant = task.mirrored == Task::kExpertMirror ? kExpertRingHost
                            : task.peer_replica != 1             ? 2
                            : MirroredGroup(task, platform.layout.dp) != platform.layout.dp ? 1
                                                                                            : 0;
    gpus.dst = MirrorHostOf(platform.GpuOf(0, task.peer, task.peer_shard), variant);
  }
  return gpus;
}

// Calls visit(task, ring_link) for every transfer the graph's tasks and rings make: each
// transfer task (ring_link -1), and each link of each compute task's rings (ring_link as
// TransferOf takes it).
template <typename Visit>
void ForEachTransfer(const TaskGraph& graph, const PlatformSpec& platform, Visit visit) {
  for (size_t t = graph.num_compute_tasks(); t < graph.communication_end(); ++t) {
    const TaskKind kind = graph.tasks[t].kind;
    if (kind != TaskKind::kDelay && kind != TaskKind::kHostCopy) visit(graph.tasks[t], -1);
  }
  if (!graph.HasParts(PartKind::kTpRing) && !graph.HasParts(PartKind::kCpRing) &&
      !graph.HasParts(PartKind::kCpA2a)) {
    return;
  }
  const int32_t gpus = graph.layout.tp * graph.layout.cp;
  for (size_t t = 0; t < graph.num_compute_tasks(); ++t) {
    const TaskProgram* program = graph.ProgramOfTask(t);
    if (program == nullptr) continue;
    const bool tp_ring = RingPartOf(*program, PartKind::kTpRing) >= 0;
    const bool cp_ring = RingPartOf(*program, PartKind::kCpRing) >= 0;
    const bool cp_a2a = RingPartOf(*program, PartKind::kCpA2a) >= 0;
    for (int32_t i = 0; i < gpus; ++i) {
      if (tp_ring) visit(graph.tasks[t], i);
      if (cp_ring) visit(graph.tasks[t], gpus + i);
      if (cp_a2a) visit(graph.tasks[t], 2 * gpus + i);
    }
  }
}

// The GPUs and route of a transfer of `task`: `ring_link` -1, the task itself; i < tp x cp, link
// i of its tensor-parallel rings; i < 2 tp x cp, link i - tp x cp of its ring attention; else
// link i - 2 tp x cp of its inner all-to-alls (a2a+p2p).
std::pair<TaskGpus, Route> TransferOf(const TaskGraph& graph, const PlatformSpec& platform,
                                      const Task& task, int32_t ring_link) {
  const int32_t gpus = graph.layout.tp * graph.layout.cp;
  if (ring_link < 0) return {EndpointsOf(task, platform), RouteOf(task, platform)};
  constexpr PartKind kKinds[] = {PartKind::kTpRing, PartKind::kCpRing, PartKind::kCpA2a};
  const TaskGpus link = RingPartLink(task, platform, graph.layout, graph.cp_a2a_size,
                                     kKinds[ring_link / gpus], ring_link % gpus);
  return {link, platform.RouteBetween(link.src, link.dst)};
}

// With folded replicas, how many replicas' copies of a transfer of replica 0 cross each of its
// links (the largest count over the transfers crossing it): the engine gives replica 0 that
// share of the link. Replicas on disjoint links (one replica per node, a NIC per GPU) share
// nothing: 1. Replicas under one leaf share its uplink, replicas in one node its NICs. Fat pipes
// give every flow all of their bandwidth: not listed.
std::map<int32_t, double> LinkSharers(const TaskGraph& graph, const PlatformSpec& platform) {
  std::map<int32_t, double> sharers;
  if (!graph.folded()) return sharers;
  // Transfers with the same endpoints in every replica are counted once.
  std::set<std::tuple<bool, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t>> seen;
  const int32_t dp = graph.layout.dp;
  ForEachTransfer(graph, platform, [&](const Task& task, int32_t ring_link) {
    const bool ring = ring_link >= 0;
    if (!seen.insert({task.mirrored, task.rank, ring ? 0 : task.peer, ring ? 0 : task.shard,
                      ring ? 0 : task.peer_shard,
                      ring ? 0 : task.peer_replica * 65536 + task.source_replica, ring_link})
             .second) {
      return;
    }
    const Route route = TransferOf(graph, platform, task, ring_link).second;
    std::vector<int32_t> count(route.num_links, 1);
    // A step in a node's group moves within each group; other transfers are the same shifted by
    // r replicas.
    const int32_t ppn = task.mirrored ? MirroredGroup(task, dp) : dp;
    for (int32_t r = 1; r < dp; ++r) {
      Task copy = task;  // the same transfer in replica r
      const int32_t base = r - r % ppn;
      auto shifted = [&](int32_t replica) {
        return ppn == dp ? (replica + r) % dp : base + (replica + r) % ppn;
      };
      copy.replica = static_cast<uint16_t>(r);
      copy.peer_replica = static_cast<uint16_t>(shifted(task.peer_replica));
      Route copied;
      if (copy.mirrored) {
        const TaskGpus gpus = GpusOf(copy, platform);
        copied = platform.SplicedRoute(
            gpus.src, gpus.dst, platform.GpuOf(shifted(task.source_replica), task.rank, task.shard),
            platform.GpuOf(r, task.peer, task.peer_shard));
      } else {
        copied = TransferOf(graph, platform, copy, ring_link).second;
      }
      for (int i = 0; i < route.num_links; ++i) {
        count[i] += std::count(copied.links, copied.links + copied.num_links, route.links[i]) > 0;
      }
    }
    for (int i = 0; i < route.num_links; ++i) {
      if (platform.Link(route.links[i]).fatpipe) continue;  // every flow gets all of it
      double& most = sharers[route.links[i]];
      most = std::max(most, static_cast<double>(count[i]));
    }
  });
  return sharers;
}

// The merged all-to-all flows of each (replica, rank) with all-to-alls, and the links of their own
// that they cross (PrivateLinkId).
struct AllToAllPlan {
  std::map<std::pair<int32_t, int32_t>, std::vector<AllToAllGroup>> groups;
  std::vector<PrivateLink> private_links;
};

// The routes the graph's transfers and rings use, by endpoints. Two transfers between the same
// hosts on different routes (mirror hosts of one variant for two routes) set `clash`.
std::map<std::pair<int32_t, int32_t>, Route> UsedRoutes(const TaskGraph& graph,
                                                        const PlatformSpec& platform,
                                                        const std::map<int32_t, double>& a2a_shares,
                                                        AllToAllPlan* a2a, bool* clash) {
  std::map<std::pair<int32_t, int32_t>, Route> routes;
  *clash = false;
  ForEachTransfer(graph, platform, [&](const Task& task, int32_t ring_link) {
    const TaskGpus gpus = ring_link < 0 ? EndpointsOf(task, platform)
                                        : TransferOf(graph, platform, task, ring_link).first;
    const Route route = TransferOf(graph, platform, task, ring_link).second;
    auto [it, added] = routes.try_emplace({gpus.src, gpus.dst}, route);
    if (!added && !std::equal(route.links, route.links + route.num_links, it->second.links,
                              it->second.links + it->second.num_links)) {
      *clash = true;
    }
  });
  // All-to-all flows, one set per replica and rank with all-to-alls, merged where they move alike
  // (GroupAllToAllFlows): to the receiver's all-to-all host, over the links' all-to-all shadows
  // where the compiled flows stand for more or a merged flow crosses them (AllToAllShadowOf), and
  // over links of their own where a merged flow's members each cross a different link or a fat
  // pipe.
  const std::map<int32_t, int64_t> totals = AllToAllTotalLoads(graph, platform);
  std::set<std::pair<int32_t, int32_t>> seen;
  for (size_t t = 0; t < graph.num_compute_tasks(); ++t) {
    const Task& task = graph.tasks[t];
    const TaskProgram* program = graph.ProgramOfTask(t);
    if (program == nullptr || !HasMoeParts(*program) ||
        !seen.insert({task.replica, task.rank}).second) {
      continue;
    }
    a2a->groups[{task.replica, task.rank}] = GroupAllToAllFlows(
        graph, platform, AllToAllFlows(graph, platform, task), totals, a2a_shares);
  }
  EqualizeAllToAllGroups(platform, &a2a->groups);
  for (const auto& [key, groups] : a2a->groups) {
    for (const AllToAllGroup& group : groups) {
      auto [it, added] =
          routes.try_emplace({group.ends.src, MirrorHostOf(group.ends.dst, kAllToAllHost)});
      if (!added) continue;
      Route route = platform.RouteBetween(group.ends.src, group.ends.dst);
      for (int i = 0; i < route.num_links; ++i) {
        const int32_t real = route.links[i];
        const LinkSpec link = platform.Link(real);
        if ((group.distinct >> i & 1) || (group.count > 1 && (group.fatpipe >> i & 1))) {
          // The members' bandwidths: a fat pipe's whole to each, else each one's fair share.
          const auto total = totals.find(real);
          const double loads =
              link.fatpipe || total == totals.end() ? 1.0 : static_cast<double>(total->second);
          route.links[i] = PrivateLinkId(static_cast<int32_t>(a2a->private_links.size()));
          a2a->private_links.push_back({real, group.count * link.bandwidth_bytes_per_s / loads});
          continue;
        }
        const auto share = a2a_shares.find(real);
        if (!link.fatpipe &&
            (group.count > 1 || (share != a2a_shares.end() && share->second > 1))) {
          route.links[i] = AllToAllShadowOf(real);
        }
      }
      it->second = route;
    }
  }
  return routes;
}

// The hosts the graph's tasks run on or move data between, in order.
std::vector<int32_t> UsedGpus(const TaskGraph& graph, const PlatformSpec& platform,
                              const std::map<std::pair<int32_t, int32_t>, Route>& routes) {
  std::set<int32_t> gpus;
  for (size_t t = 0; t < graph.num_tasks(); ++t) {
    const TaskGpus used = EndpointsOf(graph.tasks[t], platform);
    gpus.insert(used.src);
    gpus.insert(used.dst);
  }
  for (const auto& [ends, route] : routes) {
    gpus.insert(ends.first);
    gpus.insert(ends.second);
  }
  return {gpus.begin(), gpus.end()};
}

// Whether every link of a cluster has no latency and infinite bandwidth, so that every transfer
// takes no time whatever else crosses its links (the ideal platform). Never for an XML platform.
bool TransfersTakeNoTime(const PlatformSpec& platform) {
  if (!platform.xml_file.empty()) return false;
  for (int64_t id = 0; id < platform.num_links(); ++id) {
    const LinkSpec link = platform.Link(static_cast<int32_t>(id));
    if (link.latency_s != 0 || !std::isinf(link.bandwidth_bytes_per_s)) return false;
  }
  return true;
}

// Launches tasks as their predecessors finish and records when each ran.
class JustInTimeRunner {
 public:
  JustInTimeRunner(const TaskGraph& graph, const PlatformSpec& platform, const AllToAllPlan& a2a,
                   GpuHosts gpus, Timeline* timeline)
      : graph_(graph),
        platform_(platform),
        a2a_(a2a),
        gpus_(std::move(gpus)),
        timeline_(timeline),
        remaining_(graph.num_predecessors),
        running_(graph.num_tasks()),
        instant_transfers_(TransfersTakeNoTime(platform)) {
    timeline_->start_s.assign(graph.num_tasks(), 0.0);
    timeline_->end_s.assign(graph.num_tasks(), 0.0);
    if (!graph.part_begin.empty()) {
      timeline_->part_start_s.assign(graph.part_begin.back(), 0.0);
      timeline_->part_end_s.assign(graph.part_begin.back(), 0.0);
    }
  }

  void Start() {
    s4u::Activity::on_completion_cb([this](s4u::Activity const& a) { OnCompletion(a); });
    for (TaskId t = 0; t < graph_.num_tasks(); ++t) {
      if (remaining_[t] == 0) Launch(t);
    }
  }

  size_t completed() const { return completed_; }

 private:
  // Compute tasks whose MoE parts are under way: the next part of each stream, the part each runs
  // (-1: none), the parts ended, the running all-to-all's flows still moving.
  struct Program {
    const TaskProgram* program = nullptr;
    size_t num_parts = 0;  // its MoE parts
    std::vector<int32_t> chunk_before;
    std::vector<bool> done;
    size_t next_compute = 0;
    size_t next_comm = 0;
    int32_t compute_running = -1;
    int32_t comm_running = -1;
    size_t finished = 0;
    int32_t pending_flows = 0;
    double start_s = 0;
    s4u::ExecPtr exec;
    std::vector<s4u::CommPtr> flows;
  };
  // An activity's data: its task, and what it is: the task itself, one of its tensor-parallel
  // ring transfers, one of its ring attention transfers or one of its MoE parts' activities.
  // kLatency: the timer before a transfer that stands for several ring steps (Task::steps).
  enum Part : uintptr_t {
    kItself = 0,
    kTpRing = 1,
    kCpRing = 2,
    kProgramPart = 3,
    kCpA2a = 4,
    kLatency = 5
  };
  static void* DataOf(TaskId t, Part part) {
    return reinterpret_cast<void*>((static_cast<uintptr_t>(t) << 3) | part);
  }

  void Launch(TaskId t) {
    const Task& task = graph_.tasks[t];
    if (task.kind == TaskKind::kWait) {  // takes no time: it ends once its predecessors have
      const double now = s4u::Engine::get_clock();
      Finished(t, now, now);
      return;
    }
    if (task.kind == TaskKind::kDelay || task.kind == TaskKind::kHostCopy) {
      // One core of the timer host for its duration. A host copy uses its GPU's own host link in
      // its direction, which nothing else crosses, and its graph edges let one copy per GPU and
      // direction run at a time (sim/task_graph.h): alone on the link, it takes
      // HostCopySeconds, which a timer gives exactly.
      StartTimer(t, kItself, task.kind == TaskKind::kDelay ? task.duration_s
                                                           : HostCopySeconds(platform_, task.bytes));
      return;
    }
    const TaskGpus gpus = EndpointsOf(task, platform_);
    if (task.kind == TaskKind::kCompute || task.kind == TaskKind::kOptimizer) {
      // Created only where it starts or waits to: SimGrid 3.32 lists every Exec from its
      // creation until it ends (ExecImpl's constructor), so one never started stays in maestro's
      // list of activities, which every completion scans.
      auto exec_of_task = [&] {
        s4u::Host* host = gpus_.at(gpus.src);
        s4u::ExecPtr exec = s4u::Exec::init();
        exec->set_flops_amount(task.duration_s * host->get_speed());
        exec->set_host(host);
        exec->set_data(DataOf(t, kItself));
        running_[t] = exec;
        return exec;
      };
      const TaskProgram* program = graph_.ProgramOfTask(t);
      if (program == nullptr) {
        exec_of_task()->start();
        return;
      }
      if (MoePartCount(*program) < program->size()) {
        // The compute and the rings' transfers end the task: ring attention alongside the
        // compute, the tensor-parallel rings after it (or alongside it).
        Ring& ring = rings_[t];
        ring.start_s = s4u::Engine::get_clock();
        ring.pending = 1;
        const int32_t cp = RingPartOf(*program, PartKind::kCpRing);
        const bool a2a = RingPartOf(*program, PartKind::kCpA2a) >= 0;
        if (a2a || (cp >= 0 && (*program)[cp].serial)) {
          // The compute (and the rings beside it) start once the exchange has ended.
          ring.waiting = exec_of_task();
          ring.cp_pending = graph_.layout.tp * graph_.layout.cp;
          LaunchRing(t, a2a ? kCpA2a : kCpRing);
          return;
        }
        LaunchRing(t, kCpRing);
        if (graph_.tp_comm_overlap) LaunchRing(t, kTpRing);
      }
      if (HasMoeParts(*program)) {
        // Its parts stand for the compute (no Exec of the task's own).
        Program& state = programs_[t];
        state.program = program;
        state.num_parts = MoePartCount(*program);
        state.chunk_before = ChunkPredecessors(*program);
        state.done.assign(program->size(), false);
        state.start_s = s4u::Engine::get_clock();
        StartParts(t, state);
        return;
      }
      exec_of_task()->start();
    } else if (instant_transfers_) {
      // Every link has no latency and infinite bandwidth (the ideal platform): a transfer ends
      // as it starts, as SimGrid would end it at the same clock, without entering the network.
      const double now = s4u::Engine::get_clock();
      Finished(t, now, now);
    } else if (task.steps > 1) {
      // The steps' latencies but one first (one timer), then their bytes as one transfer.
      StartTimer(t, kLatency,
                 (task.steps - 1) * platform_.UncontendedTransferTime(RouteOf(task, platform_), 0));
    } else {
      StartTransfer(t);
    }
  }

  // `seconds` on one core of the timer host, as task t's `part`.
  void StartTimer(TaskId t, Part part, double seconds) {
    s4u::ExecPtr exec = s4u::Exec::init();
    exec->set_flops_amount(seconds * kTimerSpeed);
    exec->set_host(gpus_.at(kTimerHost));
    exec->set_data(DataOf(t, part));
    running_[t] = exec;
    exec->start();
  }

  void StartTransfer(TaskId t) {
    const Task& task = graph_.tasks[t];
    const TaskGpus gpus = EndpointsOf(task, platform_);
    s4u::CommPtr comm = s4u::Comm::sendto_init(gpus_.at(gpus.src), gpus_.at(gpus.dst));
    comm->set_payload_size(static_cast<uint64_t>(task.bytes));
    comm->set_data(DataOf(t, kItself));
    running_[t] = comm;
    comm->start();
  }

  static PartKind RingKind(Part part) {
    return part == kTpRing  ? PartKind::kTpRing
           : part == kCpA2a ? PartKind::kCpA2a
                            : PartKind::kCpRing;
  }

  // Starts the transfers of task t's ring of kind `part` (kTpRing or kCpRing), if its program has
  // one: one from every GPU of its rank's group.
  void LaunchRing(TaskId t, Part part) {
    const TaskProgram& program = *graph_.ProgramOfTask(t);
    const int32_t index = RingPartOf(program, RingKind(part));
    if (index < 0) return;
    const Task& task = graph_.tasks[t];
    Ring& ring = rings_[t];
    const int32_t gpus = graph_.layout.tp * graph_.layout.cp;
    ring.pending += gpus;
    timeline_->part_start_s[graph_.part_begin[t] + index] = s4u::Engine::get_clock();
    const int64_t bytes = program[index].bytes;
    for (int32_t i = 0; i < gpus; ++i) {
      const TaskGpus link =
          RingPartLink(task, platform_, graph_.layout, graph_.cp_a2a_size, RingKind(part), i);
      s4u::CommPtr comm = s4u::Comm::sendto_init(gpus_.at(link.src), gpus_.at(link.dst));
      comm->set_payload_size(static_cast<uint64_t>(bytes));
      comm->set_data(DataOf(t, part));
      ring.transfers.push_back(comm);
      comm->start();
    }
  }

  // Starts the next compute part and the next all-to-all of task t's program when their stream
  // is free and the part before each in its chunk has ended.
  void StartParts(TaskId t, Program& state) {
    const TaskProgram& parts = *state.program;
    auto ready = [&](size_t i) {
      return state.chunk_before[i] < 0 || state.done[state.chunk_before[i]];
    };
    auto next_of = [&](size_t from, PartKind kind) {
      while (from < parts.size() && parts[from].kind != kind) ++from;
      return from;
    };
    state.next_compute = next_of(state.next_compute, PartKind::kCompute);
    if (state.compute_running < 0 && state.next_compute < parts.size() &&
        ready(state.next_compute)) {
      const size_t i = state.next_compute++;
      state.compute_running = static_cast<int32_t>(i);
      timeline_->part_start_s[graph_.part_begin[t] + i] = s4u::Engine::get_clock();
      if (state.exec) released_.push_back(state.exec);  // may be inside its own callback
      s4u::Host* host = gpus_.at(GpusOf(graph_.tasks[t], platform_).src);
      state.exec = s4u::Exec::init();
      state.exec->set_flops_amount(parts[i].duration_s * host->get_speed());
      state.exec->set_host(host);
      state.exec->set_data(DataOf(t, kProgramPart));
      state.exec->start();
    }
    state.next_comm = next_of(state.next_comm, PartKind::kAllToAll);
    if (state.comm_running < 0 && state.next_comm < parts.size() && ready(state.next_comm)) {
      const size_t i = state.next_comm++;
      state.comm_running = static_cast<int32_t>(i);
      timeline_->part_start_s[graph_.part_begin[t] + i] = s4u::Engine::get_clock();
      const std::vector<AllToAllGroup>& flows = FlowsOf(t);
      state.pending_flows = static_cast<int32_t>(flows.size());
      released_.insert(released_.end(), state.flows.begin(), state.flows.end());
      state.flows.clear();
      for (const AllToAllGroup& flow : flows) {
        s4u::CommPtr comm = s4u::Comm::sendto_init(
            gpus_.at(flow.ends.src), gpus_.at(MirrorHostOf(flow.ends.dst, kAllToAllHost)));
        comm->set_payload_size(
            static_cast<uint64_t>(flow.count * FlowBytes(graph_, platform_, flow.ends, parts[i])));
        comm->set_data(DataOf(t, kProgramPart));
        state.flows.push_back(comm);
        comm->start();
      }
      if (flows.empty()) PartDone(t, state, i);
    }
  }

  // A part of task t's program has ended: record it, start what it freed, end the program.
  void PartDone(TaskId t, Program& state, size_t i) {
    const double now = s4u::Engine::get_clock();
    timeline_->part_end_s[graph_.part_begin[t] + i] = now;
    state.done[i] = true;
    if (state.program->at(i).kind == PartKind::kCompute) {
      state.compute_running = -1;
    } else {
      state.comm_running = -1;
    }
    if (++state.finished < state.num_parts) {
      StartParts(t, state);
      return;
    }
    ComputeDone(t, state.start_s, now);
    programs_done_.push_back(t);
  }

  // The flows of task t's all-to-alls (the same for each of its parts).
  const std::vector<AllToAllGroup>& FlowsOf(TaskId t) {
    return a2a_.groups.at({graph_.tasks[t].replica, graph_.tasks[t].rank});
  }

  // Task t's compute (its Exec or its MoE parts) has ended.
  void ComputeDone(TaskId t, double start_s, double end_s) {
    const TaskProgram* program = graph_.ProgramOfTask(t);
    auto ring = program != nullptr && MoePartCount(*program) < program->size() ? rings_.find(t)
                                                                               : rings_.end();
    if (ring == rings_.end()) {
      Finished(t, start_s, end_s);
      return;
    }
    if (!graph_.tp_comm_overlap) LaunchRing(t, kTpRing);
    if (--ring->second.pending == 0) {
      rings_done_.push_back(t);
      Finished(t, ring->second.start_s, s4u::Engine::get_clock());
    }
  }

  void OnCompletion(s4u::Activity const& activity) {
    // An activity must not lose its last reference inside its own completion callback: release
    // the ones that finished before, once no callback is on the stack.
    if (depth_ == 0) {
      for (TaskId t : finished_) running_[t].reset();
      finished_.clear();
      for (TaskId t : rings_done_) rings_.erase(t);
      rings_done_.clear();
      for (TaskId t : programs_done_) programs_.erase(t);
      programs_done_.clear();
      released_.clear();
    }
    ++depth_;
    const uintptr_t data = reinterpret_cast<uintptr_t>(activity.get_data<void>());
    const TaskId t = static_cast<TaskId>(data >> 3);
    const Part part = static_cast<Part>(data & 7);
    if (part == kProgramPart) {
      Program& state = programs_.at(t);
      if (dynamic_cast<const s4u::Exec*>(&activity) != nullptr) {
        PartDone(t, state, static_cast<size_t>(state.compute_running));
      } else if (--state.pending_flows == 0) {
        PartDone(t, state, static_cast<size_t>(state.comm_running));
      }
    } else if (part == kLatency) {
      released_.push_back(running_[t]);  // inside its own callback
      latency_start_s_[t] = activity.get_start_time();
      StartTransfer(t);
    } else if (part == kItself) {
      finished_.push_back(t);
      const auto latency = latency_start_s_.find(t);
      double start_s = activity.get_start_time();
      if (latency != latency_start_s_.end()) {
        start_s = latency->second;
        latency_start_s_.erase(latency);
      }
      ComputeDone(t, start_s, activity.get_finish_time());
    } else {
      auto ring = rings_.find(t);
      double& end = timeline_->part_end_s[graph_.RingRecord(t, RingKind(part))];
      end = std::max(end, activity.get_finish_time());
      const bool serial = part == kCpA2a || (part == kCpRing && ring->second.waiting);
      if (serial && ring->second.waiting && --ring->second.cp_pending == 0) {
        ring->second.waiting->start();
        ring->second.waiting.reset();
        // a2a+p2p: the outer ring runs alongside the attention.
        if (part == kCpA2a) LaunchRing(t, kCpRing);
        if (graph_.tp_comm_overlap) LaunchRing(t, kTpRing);
      }
      if (--ring->second.pending == 0) {
        rings_done_.push_back(t);
        Finished(t, ring->second.start_s, s4u::Engine::get_clock());
      }
    }
    --depth_;
  }

  // Records task t and launches the tasks it was the last predecessor of.
  void Finished(TaskId t, double start_s, double end_s) {
    timeline_->start_s[t] = start_s;
    timeline_->end_s[t] = end_s;
    ++completed_;
    for (TaskId next : boost::make_iterator_range(boost::adjacent_vertices(t, graph_.dag))) {
      if (--remaining_[next] == 0) Launch(next);
    }
  }

  const TaskGraph& graph_;
  const PlatformSpec& platform_;
  const AllToAllPlan& a2a_;
  GpuHosts gpus_;
  Timeline* timeline_;
  std::vector<TaskId> remaining_;
  std::vector<s4u::ActivityPtr> running_;
  const bool instant_transfers_;
  std::vector<TaskId> finished_;
  // Compute tasks whose ring is under way: the activities still to end, when the task started,
  // its transfers (kept alive until released after the task ends).
  struct Ring {
    int32_t pending = 0;
    double start_s = 0;
    std::vector<s4u::CommPtr> transfers;
    // A serial exchange's transfers still to end, and the compute waiting for them.
    int32_t cp_pending = 0;
    s4u::ExecPtr waiting;
  };
  std::unordered_map<TaskId, Ring> rings_;
  std::vector<TaskId> rings_done_;
  std::unordered_map<TaskId, Program> programs_;
  std::vector<TaskId> programs_done_;
  std::vector<s4u::ActivityPtr> released_;  // ended parts, released once no callback runs
  // Transfers of several ring steps: when their latency timer started.
  std::unordered_map<TaskId, double> latency_start_s_;
  int depth_ = 0;
  size_t completed_ = 0;
};

// The bytes a simulation sends back: kMagic, the task count and the part count, then every
// task's start and end, every program part's start and end; or
// kInputError (or kInternalError), the message's length and the message.
std::string TimelineBytes(const Timeline& timeline) {
  const uint64_t header[3] = {kMagic, timeline.start_s.size(), timeline.part_start_s.size()};
  std::string out(reinterpret_cast<const char*>(header), sizeof(header));
  for (const std::vector<double>* v :
       {&timeline.start_s, &timeline.end_s, &timeline.part_start_s, &timeline.part_end_s}) {
    if (!v->empty()) {
      out.append(reinterpret_cast<const char*>(v->data()), v->size() * sizeof(double));
    }
  }
  return out;
}

std::string ErrorBytes(uint64_t kind, const std::string& message) {
  const uint64_t header[2] = {kind, message.size()};
  return std::string(reinterpret_cast<const char*>(header), sizeof(header)) + message;
}

}  // namespace

Status SimulateInThisProcess(const TaskGraph& graph, const PlatformSpec& platform,
                             Timeline* timeline) {
  int argc = 1;
  char name[] = "ppsim";
  char* argv[] = {name, nullptr};
  xbt_log_control_set("root.thres:critical");
  // Never destroyed: SimGrid allows one engine per process, and the process ends after this run.
  auto* engine = new s4u::Engine(&argc, argv);
  engine->set_config("network/model:CM02");
  engine->set_config("network/crosstraffic:0");
  engine->set_config("network/TCP-gamma:0");
  GpuHosts gpus;
  bool clash = false;
  const std::map<int32_t, double> a2a_shares = AllToAllShares(graph, platform);
  AllToAllPlan a2a;
  const std::map<std::pair<int32_t, int32_t>, Route> routes =
      UsedRoutes(graph, platform, a2a_shares, &a2a, &clash);
  if (clash) {
    return Status::Internal(
        "simgrid: two transfers between the same hosts take different "
        "routes (mirrored collective steps of one variant)");
  }
  int32_t delays = 0;
  for (const Task& task : graph.tasks) {
    delays += task.kind == TaskKind::kDelay || task.kind == TaskKind::kHostCopy ? 1 : 0;
    delays += task.steps > 1 ? 1 : 0;  // its latency timer
  }
  if (delays > 0 && !platform.xml_file.empty()) {
    return Status::InvalidInput(
        "simgrid: gradient buckets and activation offload need a cluster platform; the XML "
        "platform " +
        platform.xml_file + " has no timer");
  }
  RETURN_IF_ERROR(BuildSimGridPlatform(platform, UsedGpus(graph, platform, routes), routes,
                                       LinkSharers(graph, platform), a2a_shares, a2a.private_links,
                                       delays, &gpus));
  JustInTimeRunner runner(graph, platform, a2a, std::move(gpus), timeline);
  runner.Start();
  engine->run();
  if (runner.completed() != graph.num_tasks()) {
    return Status::Internal("simgrid: " + std::to_string(graph.num_tasks() - runner.completed()) +
                            " of " + std::to_string(graph.num_tasks()) + " tasks did not complete");
  }
  return Status();
}

Status RunSimGrid(const TaskGraph& graph, const PlatformSpec& platform, Timeline* timeline) {
  std::string bytes;
  Status status = RunInChild(
      "simgrid",
      [&] {
        Timeline own;
        const Status simulated = SimulateInThisProcess(graph, platform, &own);
        if (!simulated.ok()) {
          return ErrorBytes(
              simulated.code() == StatusCode::kInvalidInput ? kInputError : kInternalError,
              simulated.message());
        }
        return TimelineBytes(own);
      },
      &bytes);
  if (!status.ok()) return status;
  uint64_t header[3] = {0, 0, 0};
  std::memcpy(header, bytes.data(), std::min(bytes.size(), sizeof(header)));
  if ((header[0] == kInputError || header[0] == kInternalError) &&
      bytes.size() >= 2 * sizeof(uint64_t)) {
    const std::string_view message = std::string_view(bytes).substr(2 * sizeof(uint64_t));
    if (header[1] == message.size()) {
      return header[0] == kInputError ? Status::InvalidInput(std::string(message))
                                      : Status::Internal(std::string(message));
    }
  }
  const std::string_view body =
      std::string_view(bytes).substr(std::min(bytes.size(), sizeof(header)));
  const size_t n = graph.num_tasks();
  const size_t parts = graph.part_begin.empty() ? 0 : graph.part_begin.back();
  if (header[0] != kMagic || header[1] != n || header[2] != parts ||
      body.size() != 2 * (n + parts) * sizeof(double)) {
    return Status::Internal("simgrid: the simulation process sent an incomplete timeline (" +
                            std::to_string(bytes.size()) + " bytes)");
  }
  const char* at = body.data();
  for (auto [v, size] : {std::pair{&timeline->start_s, n},
                         {&timeline->end_s, n},
                         {&timeline->part_start_s, parts},
                         {&timeline->part_end_s, parts}}) {
    v->resize(size);
    if (size == 0) continue;  // an empty vector's data() may be null: no memcpy
    std::memcpy(v->data(), at, size * sizeof(double));
    at += size * sizeof(double);
  }
  return Status();
}

}  // namespace ppsim
