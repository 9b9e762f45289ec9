// Writing a run's trace (traces/trace.h) as Chrome's JSON trace-event format, for tools that read
// nothing else (chrome://tracing, Perfetto's legacy importer, scripts).
//
// `{"traceEvents": [...], "metadata": {...}}` with: `M` events naming processes and threads and
// giving their sort order; an `X` event per slice (a thread per compute stream and per transfer
// lane), with `ts` and `dur` in microseconds printed exactly from integer nanoseconds
// ("1234.567"); `C` events for the memory counters (one series, "bytes"); and per dependency
// edge a flow: an `s` event inside the producer's slice and an `f` event (binding point "e")
// inside the consumer's, sharing the flow's id. Flow v2's `bind_id` on `X` events carries one
// flow per slice, which cannot express a DAG's fan-in and fan-out (tensor-parallel shards,
// overlapped F&B, all-reduce rings), so the v1 flow events are used. The metadata object holds
// the trace attributes.
#ifndef PPSIM_TRACES_CHROME_TRACE_H_
#define PPSIM_TRACES_CHROME_TRACE_H_

#include <string>
#include <string_view>

#include "base/status.h"
#include "traces/trace.h"

namespace ppsim {

// Integer nanoseconds as microseconds with three decimals: 1234567 -> "1234.567".
std::string MicrosecondsText(int64_t ns);

// Writes the trace of `run` in `window` to `path` (gzip when it ends in ".gz") through a
// temporary file. InvalidInput naming `what` when it cannot be written.
Status WriteChromeTrace(const TraceRun& run, const TraceWindow& window, std::string_view what,
                        const std::string& path);

}  // namespace ppsim

#endif  // PPSIM_TRACES_CHROME_TRACE_H_
