// The trace of an executed run: tracks and timed events, streamed to a writer (a TraceSink).
// The Perfetto protobuf writer, the Chrome JSON writer and the timeline picture all draw from
// this one layout.
//
// Layout:
//   - a process track per node that runs a compute stream (a host per GPU for XML platforms),
//     and one process "all GPUs" holding the total-memory counter;
//   - a thread track per compute stream (a rank of a replica; with tensor parallelism the stream
//     of the group's first GPU stands for the group): a slice per action, named by its kind and
//     microbatch ("F3", "I3", "W3", "B3"; an overlapped pair "F4&B1", the forward's microbatch
//     first), with args op (the IR text), microbatch, stage, chunk and duration_ns;
//   - transfer tracks per sender, receiver and direction ("rank 0 → rank 1"), as many lanes with
//     that name as transfers overlap or touch, so that no track has overlapping slices: a slice per
//     boundary transfer ("activation" or "gradient") or all-reduce step ("all-reduce");
//   - a counter track per compute stream with its live activation bytes, and one with the total
//     memory of every GPU (static + live activations, times the tensor-parallel degree);
//   - with expert parallelism (MoE parts in the tasks' programs, sim/task_program.h), two tracks
//     per compute stream: "MoE parts"
//     (a slice per compute part of its actions, "F3 attention 0") and "all-to-all" (a slice per
//     all-to-all, "F3 dispatch 0", with args layer, bytes to each peer (node-limited: to each
//     peer in its node; TaskPart::node_bytes go to each other node) and duration_ns);
//   - "exposed communication", a track per rank of replica 0 that has some (sim/communication.h):
//     a slice per stretch of time in which the rank waits on communication with nothing to
//     compute, named by the kinds exposed then ("pp_p2p", "tp", "pp_p2p+dp"), clipped to the
//     shown actions' span;
//   - flows: one per dependency edge that has a transfer or all-reduce step at either end
//     (producer → transfer, transfer → consumer, step → step), and into and out of every
//     all-to-all from and to the compute parts beside it in its chunk;
//   - explicit ordering: processes and their tracks in (replica, rank) order.
// Times are integer nanoseconds from the start of the iteration: round(seconds × 1e9).
//
// StreamTrace calls the sink with every track first (parents before children), then every slice
// (track by track, in time order on each), then every counter sample (track by track, in time
// order). Slices come compute streams first, then transfers and all-reduce steps in task order
// (each before the steps it feeds), then the exposed communication. Beyond the run it reads, it
// holds 8 bytes per transfer (its lane; 32 while lanes are assigned) and a few values per track: a
// trace of a million tasks streams in a few megabytes more than the run itself.
#ifndef PPSIM_TRACES_TRACE_H_
#define PPSIM_TRACES_TRACE_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/stage_costs.h"
#include "platforms/platform.h"
#include "schedules/schedule.h"
#include "base/status.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/task_graph.h"
#include "traces/timeline_picture.h"

namespace ppsim {

// The microbatches a trace shows: [first, end). A compute action is shown when any of its ops'
// microbatches is in the window, a transfer when the microbatch it carries is, the all-reduce
// steps when the window reaches the last microbatch, and memory counters over the time the shown
// actions span. Default: everything.
struct TraceWindow {
  int32_t first_microbatch = 0;
  int32_t end_microbatch = -1;  // -1: to the last

  bool all() const { return first_microbatch == 0 && end_microbatch < 0; }
};

// Parses "A:B" (microbatches A to B - 1, as a Python slice; "A:" runs to the last). The message
// names `flag`.
Status ParseTraceWindow(std::string_view flag, std::string_view text, TraceWindow* window);
// InvalidInput naming `flag` unless the window's microbatches exist in a run of
// `num_microbatches`.
Status CheckTraceWindow(std::string_view flag, const TraceWindow& window,
                        int32_t num_microbatches);

// An executed run, as the trace reads it. Everything is borrowed.
struct TraceRun {
  const Schedule* schedule = nullptr;
  const StageCosts* costs = nullptr;
  const TaskGraph* graph = nullptr;
  const Timeline* timeline = nullptr;
  const PlatformSpec* platform = nullptr;
  const RunMetrics* metrics = nullptr;  // static memory per rank
  // Written into the trace as metadata: ("ppsim_version", "0.1.0"), ("command", "..."), ...
  std::vector<std::pair<std::string, std::string>> attributes;
};

enum class TraceTrackKind : uint8_t {
  kProcess,      // a node (or the "all GPUs" process)
  kCompute,      // a compute stream: a thread of its node's process
  kTransfers,    // one lane of transfers from one GPU to another, under the sender's process
  kMemory,       // the live activation bytes of a compute stream, under its process
  kTotalMemory,  // every GPU's memory, under the "all GPUs" process
};

// What a kTransfers track's slices are.
enum class TraceComm : uint8_t {
  kNone,        // not transfers (a stream's MoE compute parts, its exposed communication)
  kP2p,         // boundary transfers between pipeline ranks (activation, gradient)
  kCollective,  // all-reduce steps, tensor- and context-parallel rings
  kAllToAll,    // expert-parallel all-to-alls
};

struct TraceTrack {
  TraceTrackKind kind = TraceTrackKind::kProcess;
  uint64_t uuid = 0;         // unique and non-zero
  uint64_t parent_uuid = 0;  // 0 for processes
  std::string name;
  int32_t pid = 0;         // the process's (for every track)
  int32_t tid = 0;         // unique over the trace; 0 for processes and counters
  int32_t sort_index = 0;  // order among its siblings (and of processes)
  int32_t replica = 0;     // kCompute, kMemory, kTransfers but exposed (the sender's)
  int32_t rank = 0;        // kCompute, kMemory, kTransfers but exposed (the sender's)
  TraceComm comm = TraceComm::kNone;  // kTransfers: what its slices are
};

// An argument of a slice: an integer, or a string when `is_string`.
struct TraceArg {
  std::string_view name;
  int64_t int_value = 0;
  std::string_view string_value;
  bool is_string = false;
};

struct TraceSlice {
  const TraceTrack* track = nullptr;
  TaskId task = 0;
  TaskKind kind = TaskKind::kCompute;
  // "F3", "F4&B1" (compute), "activation", "gradient", "all-reduce", "wait", "optimizer",
  // "tp ring" or "cp ring". Valid only during the Slice call: a writer that interns names keeps
  // its own copy of each (there are as many compute names as kinds x microbatches, and pairs).
  std::string_view name;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  std::span<const TraceArg> args;
  std::span<const uint64_t> flows_out;  // flows starting here (non-zero, unique per edge)
  std::span<const uint64_t> flows_in;   // flows ending here
  // Compute slices: the action, which of its rank's virtual stages the (first) op runs, and how
  // many the rank has.
  const Action* action = nullptr;
  int32_t chunk = 0;
  int32_t num_chunks = 1;
};

struct TraceCounter {
  const TraceTrack* track = nullptr;
  int64_t time_ns = 0;
  int64_t value = 0;  // bytes
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void Attributes(const std::vector<std::pair<std::string, std::string>>& attributes) {}
  virtual void Track(const TraceTrack& track) = 0;
  virtual void Slice(const TraceSlice& slice) = 0;
  virtual void Counter(const TraceCounter& counter) = 0;
};

// Every arg name StreamTrace uses, for writers that intern them.
const std::vector<std::string_view>& TraceArgNames();

// Seconds to trace nanoseconds.
int64_t TraceNs(double seconds);

// Streams the trace of `run` restricted to `window` (which CheckTraceWindow accepted) to `sink`.
void StreamTrace(const TraceRun& run, const TraceWindow& window, TraceSink* sink);

// The timeline picture of `run` in `window`: a row per compute stream, a box per action, the
// memory curves, and a title and subtitle from `title` and `subtitle`.
TimelinePicture BuildTimelinePicture(const TraceRun& run, const TraceWindow& window,
                                     std::string title, std::vector<std::string> subtitle);

}  // namespace ppsim

#endif  // PPSIM_TRACES_TRACE_H_
