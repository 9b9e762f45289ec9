// Nsight Systems exports in: the SQLite database `nsys export --type sqlite` writes, one file per
// rank, read into a ProfilerTrace (interop/profiler_trace.h) by the rules of the PyTorch profiler
// reader (interop/kineto_trace.h, interop/trace_events.h), so profile, summary and replay are the
// same for both.
//
// What is read (each table may be absent: a profile without NVTX, or without CUDA):
//   StringIds                     names (id -> value); its absence means not an nsys export
//   NVTX_EVENTS                   ranges: eventType 59 (push/pop) and 60 (start/end) with an end;
//                                 the name is `text`, else StringIds[textId]. They play the part
//                                 of torch's record_function ranges: ProfilerStep#N, pipeline
//                                 actions (PP:0F1, Forward 3) and communication ranges
//                                 (nccl:all_reduce, gloo:recv, ...). The suffixes
//                                 torch.autograd.profiler.emit_nvtx adds (", seq = N",
//                                 ", op_id = N", ", sizes = [...]", ", input_op_ids = [...]") are
//                                 cut off; sizes without dtypes give no bytes.
//   CUPTI_ACTIVITY_KIND_KERNEL    kernels: StringIds[shortName] (StringIds[demangledName] when
//                                 only it names an NCCL kernel); no NCCL bytes or group size
//   CUPTI_ACTIVITY_KIND_MEMCPY,   GPU work, as Kineto's gpu_memcpy / gpu_memset
//   CUPTI_ACTIVITY_KIND_MEMSET
//   CUPTI_ACTIVITY_KIND_RUNTIME   the launching call of each kernel (by correlationId): a kernel
//                                 belongs to the action whose NVTX range holds the call's start
//   TARGET_INFO_SYSTEM_ENV        the rank: DeviceEnvironment's RANK / WORLD_SIZE (torchrun),
//                                 else OMPI_COMM_WORLD_RANK / _SIZE, PMI_RANK / PMI_SIZE,
//                                 SLURM_PROCID / SLURM_NTASKS (the first pair whose rank is set);
//                                 else an NVTX mark "MPI Rank N" (nsys --trace=mpi), world size
//                                 unknown. nsys records the environment it was started in, so
//                                 this holds for one nsys per rank (srun nsys profile ...).
// Times are nanoseconds, read as seconds from the earliest start among the rows read. The GPU
// work and NVTX ranges must be of one process: a file of several (nsys profile torchrun ...) is
// refused, as ranks are told apart by file.
#ifndef PPSIM_INTEROP_NSYS_TRACE_H_
#define PPSIM_INTEROP_NSYS_TRACE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "interop/profiler_trace.h"

namespace ppsim {

// The largest export read: rows are read one at a time, but every kernel, range and launch is
// kept (about 100 bytes each), so 2 GiB of database is the limit (checked before opening).
inline constexpr int64_t kMaxNsysExportBytes = int64_t{2} << 30;

// Whether `head` (a file's first bytes) starts with SQLite's header "SQLite format 3\0".
bool IsSqliteHeader(std::string_view head);

// Reads one export, opened read-only, into *rank (rank -1 when it does not say its rank).
// InvalidInput "FILE: ..." for a file above kMaxNsysExportBytes, a database SQLite cannot read
// (cut, corrupt), one without StringIds, a name id missing from StringIds ("FILE: TABLE row N:
// ..."), an interval ending before it starts, GPU work or ranges of several processes, or a
// malformed rank in the environment.
Status ReadNsysExport(const std::string& file, TraceRank* rank);

// Reads every file, then orders and checks the ranks as ReadKinetoTraces does (with
// `ranks_in_order`, a file that does not say its rank is rank i of world_size files.size()).
Status ReadNsysExports(const std::vector<std::string>& files, bool ranks_in_order,
                       ProfilerTrace* trace);

}  // namespace ppsim

#endif  // PPSIM_INTEROP_NSYS_TRACE_H_
