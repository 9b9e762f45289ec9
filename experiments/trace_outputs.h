// What a run writes besides its results: a Perfetto trace, a Chrome JSON trace and a timeline
// picture (the flags --trace, --chrome-trace, --timeline and --trace-microbatches).
#ifndef PPSIM_EXPERIMENTS_TRACE_OUTPUTS_H_
#define PPSIM_EXPERIMENTS_TRACE_OUTPUTS_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/locator.h"
#include "experiments/run.h"
#include "base/status.h"
#include "traces/trace.h"

namespace ppsim {

struct TraceOutputs {
  std::string perfetto_path;  // --trace: .pftrace (or .pftrace.gz); empty: none
  std::string chrome_path;    // --chrome-trace: .json (or .json.gz); empty: none
  std::string timeline_path;  // --timeline: .svg or .html; empty: none
  TraceWindow window;         // --trace-microbatches; applies to all three

  bool any() const {
    return !perfetto_path.empty() || !chrome_path.empty() || !timeline_path.empty();
  }
};

// InvalidInput where the path was given (fields trace, chrome_trace, timeline) when its extension
// does not fit its format, or its folder does not exist.
Status CheckTraceOutputs(const TraceOutputs& outputs, const Locator& where);

// The outputs of one of several runs (a comma list of schedules): `label` goes before each
// path's extension ("t.pftrace" -> "t.1F1B.pftrace").
TraceOutputs OutputsOfRun(const TraceOutputs& outputs, const std::string& label);

// Writes the outputs of an executed run. `command` is the command line recorded in the traces.
// InvalidInput, located by the run's Locator, when the window is outside the run or a file
// cannot be written.
Status WriteTraceOutputs(const TraceOutputs& outputs, const PreparedRun& run,
                         const RunResult& result, const Timeline& timeline,
                         const std::string& command);

// Writes only the timeline picture of a run to `path` (.svg or .html), for sweeps; messages start
// with `what` (the sweep's option).
Status WriteTimelinePicture(std::string_view what, const std::string& path, const PreparedRun& run,
                            const RunResult& result, const Timeline& timeline);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_TRACE_OUTPUTS_H_
