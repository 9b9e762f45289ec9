// PyTorch profiler traces in: the Chrome-trace JSON Kineto writes (torch.profiler's
// export_chrome_trace, tensorboard_trace_handler), plain or gzipped, one file per rank, read into a
// ProfilerTrace (interop/profiler_trace.h).
//
// What is read:
//   distributedInfo        rank, world_size, backend
//   ProfilerStep#N         the steps (cpu_op or user_annotation ranges of that name)
//   pipeline actions       torch.distributed.pipelining's record_function ranges:
//                          "PP:" + str(_Action) from _PipelineScheduleRuntime ("PP:0F1", "PP:1B0",
//                          "PP:2I3", "PP:2W3", "PP:0SEND_F1", "PP:(0F2;1B0)OVERLAP_F_B", ...) and
//                          ScheduleGPipe's "Forward {i}" / "Backward {i}" (one stage per rank: the
//                          stage is the rank's place among the files, in rank order)
//   kernels                cat "kernel", "gpu_memcpy", "gpu_memset"; attributed to the action whose
//                          CPU range holds the time of the launching runtime call (cat
//                          "cuda_runtime" or "cuda_driver"), linked by args.correlation (the id
//                          the "ac2g" flow events also carry). By time, not thread: a backward's
//                          kernels are launched from autograd's thread during its range.
//   collectives            NCCL kernels (ncclKernel_* / ncclDevKernel_*: AllReduce, AllGather,
//                          ReduceScatter, Broadcast, AllToAll, SendRecv; a SendRecv under an
//                          all_to_all range is all_to_all), bytes = "In msg nelems" x the size of
//                          "dtype"; without kernels, the CPU ranges nccl:KIND, gloo:KIND and
//                          c10d::KIND_ (allreduce_, send, recv_, ...), bytes from their recorded
//                          input shapes and types when given
// An action's GPU time is the union of its kernels' intervals (gaps between them are not counted);
// its CPU communication time the union of the communication ranges inside it.
#ifndef PPSIM_INTEROP_KINETO_TRACE_H_
#define PPSIM_INTEROP_KINETO_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "interop/profiler_trace.h"

namespace ppsim {

// The most a trace file may hold, compressed or decompressed: the JSON document is held in memory
// (about 10 times its text), so 1 GiB of text is the limit.
inline constexpr int64_t kMaxKinetoTraceBytes = int64_t{1} << 30;

// Reads one rank's trace from `text` (the decompressed JSON); `source` names it in messages.
// "Forward {i}" / "Backward {i}" actions get stage -1 (ReadKinetoTraces sets it). InvalidInput
// "SOURCE:LINE:COL: ..." for text that is not JSON, "SOURCE: ..." for JSON that is not a Kineto
// trace (no traceEvents list, or no event with a Kineto category) or a malformed field.
Status ParseKinetoTrace(std::string_view text, const std::string& source, TraceRank* rank);

// Reads every file (gunzipping *.gz, each checked against kMaxKinetoTraceBytes), checks that the
// ranks are distinct and agree on world_size (located errors naming both files) and that several
// files each have distributedInfo, and puts the ranks in rank order. With `ranks_in_order`, a
// file without distributedInfo is rank i of world_size files.size(), i its place in `files`
// (`ppsim profile --ranks-in-order`, for traces of torch built without Kineto, which writes the
// legacy form: a bare list of CPU events, no distributedInfo).
Status ReadKinetoTraces(const std::vector<std::string>& files, bool ranks_in_order,
                        ProfilerTrace* trace);

// Gunzips `compressed` read from `source` into *text, refusing more than `max_bytes` of output.
Status Gunzip(std::string_view compressed, const std::string& source, int64_t max_bytes,
              std::string* text);

}  // namespace ppsim

#endif  // PPSIM_INTEROP_KINETO_TRACE_H_
