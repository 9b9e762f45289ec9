// The run request: a proto::RunConfig (experiments/run_config.proto), filled from `ppsim run`
// flags or from an experiment file, resolved once into the runs it asks for.
//
// Resolving parses and checks every field on its own — counts, units, names, costs — and reports
// each problem where the field was written, through the request's Locator ("--pp: must be at
// least 1; got 0" on the command line, "e.yaml:3:5: base.pp: ..." in a file). What depends on
// several fields together (costs per stage, the model on the platform) is checked by PrepareRun
// (experiments/run.h) with the same Locator.
#ifndef PPSIM_EXPERIMENTS_REQUEST_H_
#define PPSIM_EXPERIMENTS_REQUEST_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/locator.h"
#include "base/status.h"
#include "experiments/run.h"
#include "experiments/run_config.pb.h"
#include "experiments/run_output.h"
#include "experiments/trace_outputs.h"

namespace ppsim {

// A resolved request: one run per schedule of the comma list, and what to do with the results.
struct RunRequest {
  std::vector<RunSpec> runs;
  TraceOutputs outputs;  // trace, chrome_trace, timeline, trace_microbatches
  OutputFormat format = OutputFormat::kTable;
  bool fail_on_oom = false;
  // Files the request came from (an experiment file), which no output may overwrite.
  std::vector<std::string> sources;
};

struct ResolveOptions {
  // Relative input paths (schedule_file, profile, a platform or model file) are taken from this
  // folder ("" or ending in '/'): an experiment file's own folder.
  std::string directory;
  // A sweep point runs one schedule: a comma list is an error.
  bool one_schedule = false;
};

// Resolves the whole request. InvalidInput, located by `where`, for the first field that is
// wrong; reads no file but a framework's job file (--torchtitan, with the platform whose GPUs its
// degrees must fill) and checks that an output's folder exists.
Status ResolveRun(const proto::RunConfig& config, std::shared_ptr<const Locator> where,
                  const ResolveOptions& options, RunRequest* request);

// The parts of ResolveRun, for commands that take a part of the request (`ppsim schedule`, the
// schedule; `ppsim model`, the model and the cluster; tests, the costs). Each fills its fields of
// `spec`.
Status ResolveSchedule(const proto::RunConfig& config, const Locator& where,
                       const ResolveOptions& options, RunSpec* spec);
Status ResolveCosts(const proto::RunConfig& config, const Locator& where,
                    const ResolveOptions& options, RunSpec* spec);
Status ResolveModel(const proto::RunConfig& config, const Locator& where,
                    const ResolveOptions& options, RunSpec* spec);
Status ResolvePlatform(const proto::RunConfig& config, const Locator& where,
                       const ResolveOptions& options, RunSpec* spec);
Status ResolveLimits(const proto::RunConfig& config, const Locator& where, RunSpec* spec);

// Prepares every run of the request (all are checked before any executes), then executes them in
// turn, writing each one's trace outputs (with several runs, one set of files per run, named by
// OutputsOfRun); `command` is the command line recorded in the traces. *results gets one result
// per run, in order. InvalidInput (located) or Deadlock for a run that cannot execute, or when an
// output would overwrite a file the request reads.
Status ExecuteRequest(const RunRequest& request, const std::string& command,
                      std::vector<RunResult>* results);

// The trace and timeline files and the framework launch (trace, chrome_trace, timeline,
// trace_microbatches, emit, emit_file): outputs of one run, not swept.
bool IsOutputFileField(std::string_view field);

}  // namespace ppsim

#endif  // PPSIM_EXPERIMENTS_REQUEST_H_
