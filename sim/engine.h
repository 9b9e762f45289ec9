// Executing a task graph on a platform: the engines and the timeline they produce.
//
// Both engines honour the same rules: a task starts when all its predecessors have ended (a
// rank's compute stream is serialised by the graph's order edges), a compute task lasts its
// duration, a transfer moves its bytes from the sender's GPU to the receiver's over the platform.
#ifndef PPSIM_SIM_ENGINE_H_
#define PPSIM_SIM_ENGINE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "platforms/platform.h"
#include "sim/task_graph.h"

namespace ppsim {

// When each task ran, in seconds from the start of the iteration. Indexed by TaskId. A wait task
// "runs" from the end of the task before it on its rank's stream (the rank reached the call) to
// the end of the call.
struct Timeline {
  std::vector<double> start_s;
  std::vector<double> end_s;
  // When each part of the compute tasks' programs ran (TaskGraph::ProgramOfTask,
  // sim/task_program.h: MoE parts, tensor-parallel rings, ring attention): part i of task t is
  // record TaskGraph::part_begin[t] + i. A ring runs from when its transfers start to when the
  // last of them ends. Empty when no task has a program.
  std::vector<double> part_start_s;
  std::vector<double> part_end_s;
};

enum class EngineKind {
  // SimGrid executes the DAG: transfers share links as the platform's network model says.
  kSimGrid,
  // Longest path through the DAG with uncontended transfer times (latency + bytes/bandwidth).
  // Exact when nothing contends; the simulator's test oracle.
  kCriticalPath,
};

// "simgrid", "critical-path".
std::string_view EngineName(EngineKind kind);
// Case-sensitive lookup; the message starts with `what` (where the name was written) and lists
// the valid names.
Status ParseEngineKind(std::string_view what, std::string_view text, EngineKind* kind);

// The GPU a compute task runs on (as both), or the sending and receiving GPUs of a transfer.
struct TaskGpus {
  int32_t src = 0;
  int32_t dst = 0;
};
inline TaskGpus GpusOf(const Task& task, const PlatformSpec& platform) {
  if (task.kind == TaskKind::kCompute || task.kind == TaskKind::kWait ||
      task.kind == TaskKind::kOptimizer || task.kind == TaskKind::kDelay ||
      task.kind == TaskKind::kHostCopy) {
    const int32_t gpu = platform.GpuOf(task.replica, task.rank, 0);
    return {gpu, gpu};
  }
  return {platform.GpuOf(task.replica, task.rank, task.shard),
          platform.GpuOf(task.peer_replica, task.peer, task.peer_shard)};
}

// How long a host copy (TaskKind::kHostCopy) of `bytes` takes on one GPU's host link, alone in its
// direction: latency + bytes / bandwidth (the link is full duplex, this bandwidth per direction).
// REQUIRES: platform.host_link_bandwidth_bytes_per_s > 0.
inline double HostCopySeconds(const PlatformSpec& platform, int64_t bytes) {
  return platform.host_link_latency_s +
         static_cast<double>(bytes) / platform.host_link_bandwidth_bytes_per_s;
}

// The links a transfer or all-reduce step moves over: the route between its GPUs, or for a
// mirrored step (folded replicas) the sending half of the route to its successor and the
// receiving half of the route into the receiver's place in replica 0 from its predecessor in
// Task::source_replica (PlatformSpec::SplicedRoute). Not for XML platforms.
inline Route RouteOf(const Task& task, const PlatformSpec& platform) {
  const TaskGpus gpus = GpusOf(task, platform);
  if (!task.mirrored) return platform.RouteBetween(gpus.src, gpus.dst);
  return platform.SplicedRoute(gpus.src, gpus.dst,
                               platform.GpuOf(task.source_replica, task.rank, task.shard),
                               platform.GpuOf(0, task.peer, task.peer_shard));
}

// Link i (0 .. tp x cp - 1) of a compute task's tensor-parallel rings (PartKind::kTpRing): GPU k of
// slice j (i = j tp + k) to GPU k + 1 (mod tp) of the same slice.
inline TaskGpus RingLink(const Task& task, const PlatformSpec& platform, int32_t tp, int32_t i) {
  const int32_t slice = i / tp * tp;
  return {platform.GpuOf(task.replica, task.rank, i),
          platform.GpuOf(task.replica, task.rank, slice + (i % tp + 1) % tp)};
}
// Link i of its ring attention (PartKind::kCpRing): GPU k of slice j to GPU k of slice j + a
// (mod cp), a the inner group's slices with hierarchical context parallelism (TaskGraph::
// cp_a2a_size; else 1).
inline TaskGpus CpRingLink(const Task& task, const PlatformSpec& platform, int32_t tp, int32_t cp,
                           int32_t i, int32_t a = 1) {
  return {platform.GpuOf(task.replica, task.rank, i),
          platform.GpuOf(task.replica, task.rank, (i + tp * a) % (tp * cp))};
}
// Link i of its inner all-to-alls (PartKind::kCpA2a): GPU k of slice j to GPU k of the next slice
// of its group of a slices (j / a a .. j / a a + a - 1, cyclically).
inline TaskGpus CpA2aLink(const Task& task, const PlatformSpec& platform, int32_t tp, int32_t a,
                          int32_t i) {
  const int32_t slice = i / tp;
  const int32_t next = slice / a * a + (slice % a + 1) % a;
  return {platform.GpuOf(task.replica, task.rank, i),
          platform.GpuOf(task.replica, task.rank, next * tp + i % tp)};
}
// Link i of compute task `task`'s ring part of kind `kind` (kTpRing, kCpRing or kCpA2a).
inline TaskGpus RingPartLink(const Task& task, const PlatformSpec& platform,
                             const ParallelLayout& layout, int32_t cp_a2a_size, PartKind kind,
                             int32_t i) {
  switch (kind) {
    case PartKind::kTpRing:
      return RingLink(task, platform, layout.tp, i);
    case PartKind::kCpA2a:
      return CpA2aLink(task, platform, layout.tp, cp_a2a_size, i);
    default:
      return CpRingLink(task, platform, layout.tp, layout.cp, i, cp_a2a_size);
  }
}

// Expert parallelism. The members of a rank's expert-parallel groups are its dp x tp x cp GPUs,
// member m = replica x (tp x cp) + GPU of the rank's group (Megatron-core's order: tensor-parallel
// innermost, then context-parallel, then data-parallel); members m and m' are in one group when
// m / e = m' / e, and member m's peer at offset j (1 .. e - 1) is the member (m + j) mod e of its
// group. In one all-to-all every member sends to every peer at once.
// The GPU of member `m` of rank `rank` (ranks of `gpus_per_rank` = tp x cp GPUs).
inline int32_t ExpertMemberGpu(const PlatformSpec& platform, int32_t rank, int32_t m,
                               int32_t gpus_per_rank) {
  return platform.GpuOf(m / gpus_per_rank, rank, m % gpus_per_rank);
}
// The flows of one all-to-all part of compute task `task`: each of its GPUs' sends to its peers
// and, when replicas are folded, the sends to its GPUs from members of replicas not compiled
// (replica 0 stands for them: their flows load their own links, at the share the symmetric
// all-to-all gives them, AllToAllShares). With every replica compiled each task sends only.
std::vector<TaskGpus> AllToAllFlows(const TaskGraph& graph, const PlatformSpec& platform,
                                    const Task& task);
// AllToAllFlows of each (replica, rank), computed once.
class AllToAllFlowCache {
 public:
  const std::vector<TaskGpus>& Of(const TaskGraph& graph, const PlatformSpec& platform,
                                  const Task& task) {
    auto [it, added] = flows_.try_emplace({task.replica, task.rank});
    if (added) it->second = AllToAllFlows(graph, platform, task);
    return it->second;
  }

 private:
  std::map<std::pair<int32_t, int32_t>, std::vector<TaskGpus>> flows_;
};
// How many flows of a rank's all-to-all cross each link when all its members send at once.
std::map<int32_t, int64_t> AllToAllLinkLoads(const TaskGraph& graph, const PlatformSpec& platform,
                                             int32_t rank);
// With folded replicas, per link crossed by all-to-all flows: the flows crossing it in the whole
// symmetric all-to-all over the flows the compiled replica runs on it (at least 1). The SimGrid
// engine runs the compiled flows over a shadow of each link whose share k exceeds 1, a link of
// 1/k of its bandwidth that only they cross (sim/simgrid_platform.h AllToAllShadowOf): they get
// their share of it as if the others were there, while the link's other transfers see none of
// the all-to-all (where the compiled replica's flows are all the link carries, k = 1, they share
// the link itself with the other transfers).
std::map<int32_t, double> AllToAllShares(const TaskGraph& graph, const PlatformSpec& platform);
// How many flows cross each link in the whole symmetric all-to-all, every rank's members sending
// at once (AllToAllLinkLoads summed over the ranks with all-to-alls).
std::map<int32_t, int64_t> AllToAllTotalLoads(const TaskGraph& graph, const PlatformSpec& platform);
// Folded replicas: the compiled flows of one all-to-all part merged into groups that move alike,
// so that SimGrid runs one flow per group instead of one per peer (DeepSeek-V3's EP 64: 18 flows
// per GPU and all-to-all instead of 126). Flows are grouped when they have the same number of
// links, the same bytes (FlowBytes: within or between nodes) and, position by position, the same
// fair share of the link (its bandwidth over AllToAllTotalLoads) and kind; a group is split until
// at each position its members cross either one link (`distinct` bit clear: the merged flow
// crosses it as its members would) or each a different one (bit set: the SimGrid engine gives
// the merged flow a link of its own with the members' fair shares summed). A fat pipe gives each
// member its full bandwidth, so it is always a link of the group's own (`count` x its
// bandwidth). Members differ only on links the compiled flows cross at a share above 1
// (`shares`, AllToAllShares), whose shadows the pipeline's other transfers never cross: a member
// alone on a link of share 1 stays a flow of its own. In the symmetric all-to-all the members of
// a group progress at one rate and end together, so the merged flow of `count` x FlowBytes ends
// when they would. Two things differ from the unmerged flows (which `--replicas all` runs): a
// merged flow crosses the shadows of its links even at share 1, so it never contends with the
// pipeline's transfers and collectives (as the compiled flows on shadowed links never did); and
// on a link of its own it has its members' fair shares for the whole all-to-all, as if all the
// flows crossing their links moved at once. Measured on DeepSeek-V3 on 2,048 H800s (README,
// Performance): the iteration moves by -0.01% to -0.10%, and by -1.8% for DualPipe with
// node-limited routing, whose pipeline transfers no longer wait behind the all-to-alls on the
// NICs. Groups are ordered by their first member in `flows`; `ends` is that member. Without
// folded replicas each flow is its own group.
struct AllToAllGroup {
  TaskGpus ends;
  int32_t count = 1;
  uint32_t distinct = 0;  // bit p: at route position p, a link of its own (members on different
                          // links, or flows of other counts on theirs: EqualizeAllToAllGroups)
  uint32_t fatpipe = 0;           // bit p: the link at position p is a fat pipe
  std::vector<TaskGpus> members;  // the flows it stands for, `ends` first
};
std::vector<AllToAllGroup> GroupAllToAllFlows(const TaskGraph& graph, const PlatformSpec& platform,
                                              const std::vector<TaskGpus>& flows,
                                              const std::map<int32_t, int64_t>& total_loads,
                                              const std::map<int32_t, double>& shares);
// Max-min sharing gives each flow on a link one share, whatever it stands for: a merged flow of
// k members is fair only among flows of k members. Wherever a link not of a group's own is
// crossed by flows of different counts (over all ranks and replicas), every flow crossing it
// there crosses a link of its own instead (its `distinct` bit: the SimGrid engine gives it its
// members' fair shares summed, count x the link's bandwidth over AllToAllTotalLoads, as for
// members on different links), so that no flow meets one of another count. (Until 2026-11-28 the
// groups were split back into their members: DeepSeek-V3 1F1B pp 32 ep 32 on 2,048 H800s ran 54
// flows per GPU and all-to-all instead of 14, 30.3 s against 3.5 s, for an iteration 0.03% longer,
// 42.5885 against 42.5761 s.) (The SimGrid engine runs merged flows over the links' all-to-all
// shadows, AllToAllShadowOf, even at share 1, so they never meet the pipeline's transfers and
// collectives.)
void EqualizeAllToAllGroups(
    const PlatformSpec& platform,
    std::map<std::pair<int32_t, int32_t>, std::vector<AllToAllGroup>>* groups);
// The time of an all-to-all part on an otherwise idle fabric, each flow carrying FlowBytes: each
// flow's route latency plus its bytes at its narrowest equal share (a link's bandwidth over the
// flows crossing it in the whole all-to-all, AllToAllLinkLoads); the longest flow of `flows`. Exact
// for the symmetric all-to-all whenever each flow's narrowest share is its max-min share, as on
// NVSwitch nodes and rail-optimized fabrics.
double AllToAllTime(const TaskGraph& graph, const PlatformSpec& platform,
                    const std::vector<TaskGpus>& flows, const std::map<int32_t, int64_t>& loads,
                    const TaskPart& part);
// The bytes one flow of an all-to-all part carries: TaskPart::node_bytes between nodes with
// node-limited routing, else TaskPart::bytes.
inline int64_t FlowBytes(const TaskGraph& graph, const PlatformSpec& platform, const TaskGpus& flow,
                         const TaskPart& part) {
  return graph.node_limited_routing && platform.NodeOf(flow.src) != platform.NodeOf(flow.dst)
             ? part.node_bytes
             : part.bytes;
}

// Where the SimGrid engine runs: in a child process (the default; the caller never holds SimGrid
// state and may run again), or in this process, which then must not run SimGrid again (a sweep's
// point, whose process exists for that one run).
enum class SimGridProcess { kChild, kThisProcess };

// Runs `graph` (from CompileTaskGraph) on `platform` with the chosen engine.
Status Execute(EngineKind kind, const TaskGraph& graph, const PlatformSpec& platform,
               Timeline* timeline, SimGridProcess process = SimGridProcess::kChild);

// The engines themselves.
Status RunCriticalPath(const TaskGraph& graph, const PlatformSpec& platform, Timeline* timeline);
// SimGrid allows one engine per process, so each call runs the simulation in a child process
// and reads the timeline back; the calling process never holds SimGrid state.
Status RunSimGrid(const TaskGraph& graph, const PlatformSpec& platform, Timeline* timeline);
// The simulation itself, in the calling process. REQUIRES: called at most once per process.
Status SimulateInThisProcess(const TaskGraph& graph, const PlatformSpec& platform,
                             Timeline* timeline);

}  // namespace ppsim

#endif  // PPSIM_SIM_ENGINE_H_
