// Sweeps: every point of an experiment in its own process, N at a time, with results that are
// never lost — a journal written as points finish, resumable, and the final files written whole.
//
// Files, for `-o results.csv`:
//   results.csv     one row per point in point order: point, the swept columns, the metrics
//                   (makespan, bubbles, throughput, MFU, memory, time to train, cost), status,
//                   error, wall_s; the columns are batch/results.h's
//   results.jsonl   the same points as JSON lines, each with the run's full metrics ("result")
//   results.csv.partial, results.jsonl.partial
//                   the journal: a header, then a line per point as it finishes (each written
//                   with one write()); the final files replace them (written to .tmp, renamed).
// status is ok, failed (the run's error, e.g. a deadlock), skipped (a Skip rule, or a point
// ppsim rejects with skip_invalid), timeout (--point-timeout) or crashed (the process died).
// The same experiment gives byte-identical files for any -j, wall_s aside.
#ifndef PPSIM_BATCH_SWEEP_H_
#define PPSIM_BATCH_SWEEP_H_

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "experiments/experiment.h"
#include "batch/journal.h"
#include "batch/results.h"
#include "experiments/run.h"
#include "base/status.h"

namespace ppsim {

// A point ready to run: its spec, or why it does not run.
struct PointJob {
  const SweepPoint* point = nullptr;
  RunSpec spec;       // when runnable
  // The run as PlanSweep checked it (not compiled), kept while the sweep's kept runs stay within
  // kKeptPreparedBytes: the point's process then compiles it rather than preparing it again.
  std::shared_ptr<const PreparedRun> prepared;
  bool skipped = false;
  std::string reason;  // when skipped
};

// At most how much memory a sweep keeps of its points' checked runs (PointJob::prepared).
inline constexpr int64_t kKeptPreparedBytes = int64_t{512} << 20;

struct SweepOptions {
  // Where the sweep's options were given (resume, point_timeout, timelines), for messages.
  std::shared_ptr<const Locator> where = std::make_shared<FieldNames>();
  std::string output;        // the results CSV (required)
  int32_t jobs = 1;          // processes at a time
  bool resume = false;       // keep the points the journal (or a finished output) already has
  bool retry_failed = false;  // with resume: run failed, timeout and crashed points again
  int32_t shard_index = 0;   // run the points with index % shard_count == shard_index
  int32_t shard_count = 1;
  double point_timeout_s = 0;  // 0: none
  bool terminal = false;       // progress as one updating line (else a line per point)
  // A folder (which exists) to write each point's timeline picture into, as
  // "point-0007.html" (or .svg with timeline_extension ".svg"); empty: none.
  std::string timelines_dir;
  std::string timeline_extension = ".html";
};

// The timeline picture file of point `index`: DIR/point-0007.html.
std::string PointTimelinePath(const SweepOptions& options, size_t index);

// Resolves and checks every point of `plan` before any runs (a point's trace outputs and
// fail_on_oom, which belong to one run, are not looked at) (ResolveRun with the point's
// FileLocator, then PrepareRun without compiling), one job per point in point order. Points a
// skip rule names, and with skip_invalid the points ppsim rejects, become skipped jobs. Otherwise
// every rejected point is reported at once, equal messages once with the points they concern:
// "e.yaml:5:39: axes[2].values[0]: must be at least 1; got 0 (point 3: ...; and 2 more)".
// `threads` threads check points at once; the jobs and the message are the same for any number.
Status PlanSweep(const ExperimentPlan& plan, int32_t threads, std::vector<PointJob>* jobs);

struct SweepSummary {
  size_t points = 0;   // in this shard
  size_t resumed = 0;  // taken from a previous journal or output
  size_t ok = 0;
  size_t skipped = 0;
  size_t failed = 0;   // failed, timeout or crashed
  double wall_s = 0;
};

// Runs `jobs` (from PlanSweep) and writes the files above (batch/journal.h). Each point runs
// in a process of its own (batch/process_pool.h), which runs SimGrid itself: one fork per
// point. Progress goes to `progress`. Returns InvalidInput for an unusable output or journal (a
// journal without --resume, one from a different experiment, a write that fails), else OK
// whatever the points' outcomes.
//
// Test hooks (environment): PPSIM_SWEEP_CRASH_POINT=k makes point k's process die of SIGSEGV;
// PPSIM_SWEEP_KILL_AFTER=k makes the sweep itself die of SIGKILL once k points are journaled.
Status RunSweep(const ExperimentPlan& plan, const std::vector<PointJob>& jobs,
                const SweepOptions& options, std::ostream& progress, SweepSummary* summary);


}  // namespace ppsim

#endif  // PPSIM_BATCH_SWEEP_H_
