// Writing a run's trace (traces/trace.h) as a native Perfetto trace: TrackEvent protobuf, streamed
// packet by packet (traces/perfetto_trace.proto is the subset of Perfetto's schema used). Open it at
// https://ui.perfetto.dev or with Perfetto's trace processor.
//
// Packets: interned slice and arg names (one sequence, cleared by the first packet), the trace
// attributes, a TrackDescriptor per track (processes and threads with explicit child ordering,
// transfer lanes as named children of their process, memory counters in bytes), then a BEGIN
// and an END event per slice with its args as debug annotations and its flows (flow_ids on the
// producer's BEGIN, terminating_flow_ids on the consumer's END), and a COUNTER event per memory
// sample.
#ifndef PPSIM_TRACES_PERFETTO_TRACE_H_
#define PPSIM_TRACES_PERFETTO_TRACE_H_

#include <string>

#include "base/status.h"
#include "traces/trace.h"

namespace ppsim {

// Writes the trace of `run` in `window` to `path` (gzip when it ends in ".gz"), through a
// temporary file: `path` appears only complete. InvalidInput naming `what` when it cannot be
// written.
Status WritePerfettoTrace(const TraceRun& run, const TraceWindow& window, std::string_view what,
                          const std::string& path);

}  // namespace ppsim

#endif  // PPSIM_TRACES_PERFETTO_TRACE_H_
