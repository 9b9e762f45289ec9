// The part of reading a profiler trace that does not depend on the profiler that wrote it: the
// names of pipeline actions, steps, NCCL kernels and communication ranges, the attribution of GPU
// work to actions, and the checks and order of the ranks. interop/kineto_trace.cc (PyTorch
// profiler JSON) and interop/nsys_trace.cc (Nsight Systems SQLite) turn their events into these
// calls, so both fill a TraceRank (interop/profiler_trace.h) by the same rules.
//
// Times are seconds on the rank's own clock (from its first event); sizes bytes.
#ifndef PPSIM_INTEROP_TRACE_EVENTS_H_
#define PPSIM_INTEROP_TRACE_EVENTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "interop/profiler_trace.h"

namespace ppsim {

// A GPU activity: a kernel, memcpy or memset.
struct TraceGpuEvent {
  double start_s = 0;
  double end_s = 0;
  int64_t correlation = -1;  // the launching runtime call's id; -1: none
  std::string name;          // an NCCL kernel's name says its collective
  // What the profiler recorded of an NCCL kernel ("" / -1 / 0: not recorded): the collective's
  // name ("all_to_all" turns a SendRecv into an all-to-all), its bytes and its group's size.
  std::string collective_name;
  int64_t bytes = -1;
  int32_t group_size = 0;
};

// A rank's events, gathered by a reader and then turned into its TraceRank by FinishTraceRank.
struct TraceEvents {
  std::vector<TraceGpuEvent> gpu;
  std::map<int64_t, double> launch_s;  // runtime call start by correlation id
  // Communication ranges (nccl:KIND, gloo:KIND, c10d::KIND_) and their input bytes (-1: unknown).
  struct CommRange {
    double start_s = 0;
    double end_s = 0;
    std::string name;
    int64_t input_bytes = -1;
  };
  std::vector<CommRange> comm;
  double first_s = 0;  // the span of every event read (the wall time without steps)
  double last_s = 0;
  void Span(double start_s, double end_s);
};

// A pipeline action's range name: torch.distributed.pipelining's "PP:" + str(_Action) ("PP:0F1",
// "PP:1B0", "PP:0SEND_F1", "PP:(0F2;1B0)OVERLAP_F_B", ...) or ScheduleGPipe's "Forward {i}" /
// "Backward {i}" (stage -1: the rank's stage, set by OrderTraceRanks). False when not one.
bool ParseActionName(const std::string& name, TraceAction* action);

// An NCCL kernel's collective by its name ("ncclKernel_AllReduce_RING_LL_Sum_float(...)",
// "ncclDevKernel_SendRecv(...)"): *nccl says whether it is an NCCL kernel at all; false for other
// kernels and NCCL kernels of other kinds.
bool NcclKernelKind(const std::string& name, bool* nccl, TraceCollectiveKind* kind);

// A communication range's collective by the op name after its prefix ("nccl:all_reduce",
// "gloo:send", "c10d::allreduce_"); false when the name is not one.
bool CommRangeKind(const std::string& name, TraceCollectiveKind* kind);

// A CPU range named `name`: a step ("ProfilerStep#N", the first of a name kept), a pipeline
// action, or a communication range (its bytes from `input_bytes`, called only for those);
// anything else is ignored.
void AddCpuRange(const std::string& name, double start_s, double end_s,
                 const std::function<int64_t()>& input_bytes, TraceEvents* events, TraceRank* rank);

// Sorts the steps and actions, puts actions in their steps, attributes kernels to the action
// whose CPU range holds their launch (by time: a backward's kernels come from autograd's thread),
// gathers the collectives, and sets GPU busy and the wall time.
void FinishTraceRank(TraceEvents* events, TraceRank* rank);

// What the rank of a trace comes from, for the message about a trace that does not say it.
struct RankSource {
  std::string missing;  // "no distributedInfo"
  std::string remedy;   // how a profiler run records it
};

// With `ranks_in_order`, a rank of rank -1 (its trace does not say) is rank i of
// world_size ranks.size(), i its place in trace->ranks. Then checks that the ranks are distinct
// and agree on world_size and that, with several traces, each says its rank (located errors
// naming both files), puts them in rank order, and gives "Forward {i}" actions (stage -1) the
// rank's place as their stage.
Status OrderTraceRanks(bool ranks_in_order, const RankSource& source, ProfilerTrace* trace);

}  // namespace ppsim

#endif  // PPSIM_INTEROP_TRACE_EVENTS_H_
