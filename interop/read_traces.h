// The traces `ppsim profile` reads, whatever profiler wrote them: PyTorch profiler (Kineto) JSON
// (interop/kineto_trace.h) or Nsight Systems SQLite exports (interop/nsys_trace.h), told apart by
// their content, not their names.
#ifndef PPSIM_INTEROP_READ_TRACES_H_
#define PPSIM_INTEROP_READ_TRACES_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "interop/profiler_trace.h"

namespace ppsim {

// The trace files of `inputs`: each a file, or a folder whose *.json, *.json.gz (which includes
// *.pt.trace.json[.gz]) and *.sqlite files are taken in name order. InvalidInput for a missing
// input, a folder without such files, or a file given twice.
Status ListTraceFiles(const std::vector<std::string>& inputs, std::vector<std::string>* files);

// Reads every file as an Nsight Systems export when it starts with SQLite's header, else as a
// PyTorch profiler trace, into one ProfilerTrace in rank order. The files must all be of one
// profiler (InvalidInput naming one of each otherwise: their clocks and rank records differ).
// `ranks_in_order`: files that do not say their rank are ranks 0, 1, ... in the order given.
Status ReadProfilerTraces(const std::vector<std::string>& files, bool ranks_in_order,
                          ProfilerTrace* trace);

}  // namespace ppsim

#endif  // PPSIM_INTEROP_READ_TRACES_H_
