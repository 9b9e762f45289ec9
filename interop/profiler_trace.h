// What a profiler trace of a pipeline-parallel run says, neutral of the profiler that wrote it:
// the ranks, their steps, their pipeline actions with CPU and GPU intervals, their kernels and
// collectives. interop/kineto_trace.h fills it from PyTorch profiler (Kineto) traces; another
// reader (an Nsight Systems export) can fill the same struct. interop/trace_profile.h turns it into
// a ppsim profile and a summary.
//
// Times are seconds on each rank's own clock, from the first event of its trace (the trace's
// microseconds since the epoch would lose precision as seconds); sizes bytes.
#ifndef PPSIM_INTEROP_PROFILER_TRACE_H_
#define PPSIM_INTEROP_PROFILER_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ppsim {

// A pipeline action's kind, as torch.distributed.pipelining's _ComputationType names them.
enum class TraceActionType {
  kForward,         // F
  kBackwardInput,   // I
  kBackwardWeight,  // W
  kFullBackward,    // B
  kOverlapFB,       // OVERLAP_F_B: a forward and a backward run together
  kSendForward,     // SEND_F
  kRecvForward,     // RECV_F
  kSendBackward,    // SEND_B
  kRecvBackward,    // RECV_B
  kOther,           // UNSHARD, RESHARD, REDUCE_GRAD
};

// The collectives a trace's kernels or ranges are classified into.
enum class TraceCollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kAllToAll,
  kSendRecv
};

// "all_reduce", "all_gather", "reduce_scatter", "broadcast", "all_to_all", "send_recv".
const char* TraceCollectiveKindName(TraceCollectiveKind kind);

struct TraceAction {
  std::string name;  // the record_function range's name, e.g. "PP:0F1" or "Forward 1"
  TraceActionType type = TraceActionType::kOther;
  int32_t stage = 0;        // virtual stage index
  int32_t microbatch = -1;  // -1: none (UNSHARD, ...)
  // OVERLAP_F_B: the backward's stage and microbatch (stage/microbatch are the forward's).
  int32_t overlap_stage = -1;
  int32_t overlap_microbatch = -1;
  int32_t step = -1;  // index into the rank's steps; -1: outside every step
  double cpu_start_s = 0;
  double cpu_end_s = 0;
  // CPU time in blocking receives inside the range (gloo:recv, nccl:recv, c10d::recv_), their
  // union: waits, not work.
  double cpu_comm_s = 0;
  // GPU: the union of the intervals of the compute kernels (and memcpy/memset) it launched, and of
  // its communication kernels (NCCL); kernels = how many it launched.
  int32_t kernels = 0;
  double gpu_compute_s = 0;
  double gpu_comm_s = 0;
  // Bytes of the tensors its send/recv ops carried (from the op's recorded input shapes and
  // dtypes); -1 when the trace does not say.
  int64_t message_bytes = -1;
};

struct TraceStep {
  std::string name;  // "ProfilerStep#4"
  double start_s = 0;
  double duration_s = 0;
};

struct TraceCollective {
  TraceCollectiveKind kind = TraceCollectiveKind::kAllReduce;
  bool from_kernel = true;  // a GPU kernel; false: a CPU range (gloo, or no kernels)
  double start_s = 0;
  double duration_s = 0;
  int64_t bytes = -1;      // -1: unknown
  int32_t group_size = 0;  // 0: unknown
};

struct TraceRank {
  std::string file;
  int32_t rank = 0;
  int32_t world_size = 0;  // 0: unknown (no distributedInfo)
  std::string backend;
  std::vector<TraceStep> steps;      // in time order
  std::vector<TraceAction> actions;  // in CPU start order
  std::vector<TraceCollective> collectives;
  bool has_gpu = false;   // any GPU kernel at all
  double gpu_busy_s = 0;  // union of every GPU kernel's interval
  double wall_s = 0;      // the steps' span (first start to last end); else the trace's span
  // Kernels no action launched, and their summed duration.
  int32_t unattributed_kernels = 0;
  double unattributed_kernel_s = 0;
};

// The ranks in rank order, distinct, agreeing on world_size.
struct ProfilerTrace {
  std::vector<TraceRank> ranks;
};

}  // namespace ppsim

#endif  // PPSIM_INTEROP_PROFILER_TRACE_H_
