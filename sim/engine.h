// Executing a task graph on a platform: the engines and the timeline they produce.
//
// Both engines honour the same rules: a task starts when all its predecessors have ended (a
// rank's compute stream is serialised by the graph's order edges), a compute task lasts its
// duration, a transfer moves its bytes from the sender's GPU to the receiver's over the platform.
#ifndef PPSIM_SIM_ENGINE_H_
#define PPSIM_SIM_ENGINE_H_

#include <string>
#include <string_view>
#include <vector>

#include "platforms/platform.h"
#include "base/status.h"
#include "sim/task_graph.h"

namespace ppsim {

// When each task ran, in seconds from the start of the iteration. Indexed by TaskId. A wait task
// "runs" from the end of the task before it on its rank's stream (the rank reached the call) to
// the end of the call.
// A compute task with a tensor-parallel ring (Task::bytes, TaskGraph::tp > 1) also records when its
// ring's transfers ran: ring_start_s/ring_end_s, indexed by TaskId over the compute tasks; empty
// when the graph has no rings.
struct Timeline {
  std::vector<double> start_s;
  std::vector<double> end_s;
  std::vector<double> ring_start_s;
  std::vector<double> ring_end_s;
};

// Whether compute task `t` runs a tensor-parallel ring.
inline bool HasRing(const TaskGraph& graph, size_t t) {
  return graph.tp > 1 && t < graph.num_compute_tasks() && graph.tasks[t].bytes > 0;
}
bool HasRings(const TaskGraph& graph);

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
      task.kind == TaskKind::kOptimizer || task.kind == TaskKind::kDelay) {
    const int32_t gpu = platform.GpuOf(task.replica, task.rank, 0);
    return {gpu, gpu};
  }
  return {platform.GpuOf(task.replica, task.rank, task.shard),
          platform.GpuOf(task.peer_replica, task.peer, task.shard)};
}

// Link k of a compute task's ring: GPU k of its rank's group to GPU k + 1 (mod tp).
inline TaskGpus RingLink(const Task& task, const PlatformSpec& platform, int32_t tp, int32_t k) {
  return {platform.GpuOf(task.replica, task.rank, k),
          platform.GpuOf(task.replica, task.rank, (k + 1) % tp)};
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
