#include "batch/sweep.h"

#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "base/escape.h"
#include "base/json.h"
#include "base/subprocess.h"
#include "batch/process_pool.h"
#include "batch/progress.h"
#include "batch/results.h"
#include "config/units.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "experiments/run_output.h"
#include "experiments/trace_outputs.h"

namespace ppsim {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The point's metrics, from the run's headline (experiments/run_output.h HeadlineOf: what does not
// apply stays unset, as in the run's JSON), then the sweep's own columns (batch/results.h); the
// run's whole JSON goes beside them into the JSON lines. False when a metric every run has is
// not a finite number.
bool SetMetrics(const RunResult& r, PointOutcome* o) {
  o->result = FormatJsonCompact(RunJson(r));
  const RunHeadline h = HeadlineOf(r);
  auto set = [&](int column, std::optional<double> value) {
    if (value && std::isfinite(*value)) o->values[column] = *value;
  };
  set(kMakespanColumn, h.makespan_s);
  set(kBubbleColumn, h.bubble_over_makespan);
  set(kBubbleOverIdealColumn, h.bubble_over_ideal);
  set(kStageBubbleColumn, h.stage_bubble_rate);
  set(kSamplesColumn, h.samples_per_s);
  set(kTokensColumn, h.tokens_per_s);
  set(kMfuColumn, h.mfu);
  set(kHfuColumn, h.hfu);
  set(kPeakMemoryColumn, static_cast<double>(h.peak_memory_bytes));
  set(kCapacityColumn, static_cast<double>(h.memory_capacity_bytes));
  set(kTimeToTrainColumn, h.time_to_train_s);
  set(kGpuHoursColumn, h.gpu_hours);
  set(kCostColumn, h.cost);
  const RunMetrics& m = r.metrics;
  int64_t static_memory_bytes = 0;
  for (const RankMetrics& k : m.ranks) {
    static_memory_bytes = std::max(static_memory_bytes, k.static_memory_bytes);
  }
  o->values[kStaticMemoryColumn] = static_cast<double>(static_memory_bytes);
  o->values[kThroughputColumn] =
      MicrobatchesPerS(r.num_microbatches, r.spec.training.layout.dp, m.makespan_s);
  o->oom = h.oom;
  for (int c = 0; c < kResultColumnCount; ++c) {
    if (kResultColumns[c].role == ColumnRole::kMetric && !o->values[c]) return false;
  }
  return true;
}

// Runs in the point's process: simulates the point, SimGrid in this very process.
PointOutcome RunPoint(const PointJob& job, const SweepOptions& options) {
  const char* crash = std::getenv("PPSIM_SWEEP_CRASH_POINT");
  if (crash != nullptr && std::to_string(job.point->index) == crash) {
    std::signal(SIGSEGV, SIG_DFL);  // die of the signal, also under ASan (which handles SEGV)
    std::raise(SIGSEGV);
  }
  PointOutcome o;
  const Clock::time_point start = Clock::now();
  PreparedRun prepared;
  Status status;
  if (job.prepared != nullptr) {
    prepared = *job.prepared;
    status = CompletePreparedRun(&prepared);
  } else {
    status = PrepareRun(job.spec, &prepared);
  }
  RunResult result;
  Timeline timeline;
  if (status.ok()) {
    status = ExecuteRun(prepared, &result, &timeline, SimGridProcess::kThisProcess);
  }
  if (status.ok() && !options.timelines_dir.empty()) {
    status = WriteTimelinePicture("", PointTimelinePath(options, job.point->index),
                                  prepared, result, timeline);
  }
  o.wall_s = Seconds(Clock::now() - start);
  if (!status.ok()) {
    o.status = PointStatus::kFailed;
    o.error = OneLine(status.message());
    return o;
  }
  o.status = PointStatus::kOk;
  if (!SetMetrics(result, &o)) {
    const double wall_s = o.wall_s;
    o = PointOutcome();
    o.status = PointStatus::kFailed;
    o.error = "internal error: the run lacks a metric every run has";
    o.wall_s = wall_s;
  }
  return o;
}

// What a point's process came to: its outcome, or how the process ended.
PointOutcome OutcomeOf(const ProcessPool::Finished& f, const SweepOptions& options) {
  PointOutcome o;
  if (f.timed_out) {
    o.status = PointStatus::kTimeout;
    o.error = "exceeded " + options.where->Name("point_timeout") + " " +
              HumanDuration(options.point_timeout_s);
  } else if (WIFSIGNALED(f.wait_status)) {
    o.status = PointStatus::kCrashed;
    o.error = "the point's process died of " + DescribeWaitStatus(f.wait_status);
  } else if (!WIFEXITED(f.wait_status) || WEXITSTATUS(f.wait_status) != 0 ||
             !ParsePointOutcome(f.output, &o)) {
    o = PointOutcome();
    o.status = PointStatus::kCrashed;
    o.error = "the point's process exited with status " +
              std::to_string(WIFEXITED(f.wait_status) ? WEXITSTATUS(f.wait_status) : -1);
  } else {
    return o;
  }
  o.wall_s = f.wall_s;
  return o;
}

// A generous estimate of what a checked run holds: its schedule's actions, its stages' models and
// costs, and the rest as a fixed amount.
int64_t KeptBytes(const PreparedRun& run) {
  int64_t actions = 0;
  for (const auto& order : run.schedule.orders) actions += static_cast<int64_t>(order.size());
  return (int64_t{64} << 10) + actions * static_cast<int64_t>(2 * sizeof(Action)) +
         static_cast<int64_t>(run.stages.size() * sizeof(StageModel)) * 2;
}

}  // namespace

std::string PointTimelinePath(const SweepOptions& options, size_t index) {
  char name[32];
  std::snprintf(name, sizeof(name), "/point-%04zu", index);
  return options.timelines_dir + name + options.timeline_extension;
}

namespace {

// One point's check: its spec and prepared run (not compiled), or why it is rejected. Touches only
// `job` and `prepared`, so that points are checked in parallel.
Status CheckPoint(const ExperimentPlan& plan, const SweepPoint& point, PointJob* job,
                  std::shared_ptr<PreparedRun>* prepared) {
  ResolveOptions options;
  options.directory = plan.directory;
  options.one_schedule = true;
  RunRequest request;
  RETURN_IF_ERROR(
      ResolveRun(point.config, std::make_shared<FileLocator>(plan, &point), options, &request));
  job->spec = request.runs[0];
  *prepared = std::make_shared<PreparedRun>();
  return PrepareRun(request.runs[0], prepared->get(), /*compile=*/false);
}

}  // namespace

Status PlanSweep(const ExperimentPlan& plan, int32_t threads, std::vector<PointJob>* jobs) {
  jobs->assign(plan.points.size(), PointJob());
  int64_t kept_bytes = 0;
  std::vector<std::string> messages;
  std::map<std::string, std::vector<const SweepPoint*>> points_of;
  // The points are checked in batches, each by `threads` threads, then taken in point order: which
  // runs are kept, and the messages' order, do not depend on the threads. A batch bounds what is
  // held beyond the kept runs.
  constexpr size_t kBatch = 256;
  std::vector<Status> statuses(std::min(kBatch, plan.points.size()));
  std::vector<std::shared_ptr<PreparedRun>> prepared(statuses.size());
  for (size_t first = 0; first < plan.points.size(); first += kBatch) {
    const size_t count = std::min(kBatch, plan.points.size() - first);
    std::atomic<size_t> next{0};
    auto check = [&] {
      for (size_t k = next++; k < count; k = next++) {
        const SweepPoint& point = plan.points[first + k];
        PointJob& job = (*jobs)[first + k];
        job.point = &point;
        prepared[k].reset();
        statuses[k] = point.skipped ? Status() : CheckPoint(plan, point, &job, &prepared[k]);
      }
    };
    std::vector<std::thread> helpers;
    const size_t helper_count =
        std::min(count, static_cast<size_t>(std::max<int32_t>(1, threads))) - 1;
    for (size_t t = 0; t < helper_count; ++t) helpers.emplace_back(check);
    check();
    for (std::thread& helper : helpers) helper.join();
    for (size_t k = 0; k < count; ++k) {
      const SweepPoint& point = plan.points[first + k];
      PointJob& job = (*jobs)[first + k];
      if (point.skipped) {
        job.skipped = true;
        job.reason = point.reason;
        continue;
      }
      const Status& status = statuses[k];
      if (status.ok()) {
        const int64_t bytes = KeptBytes(*prepared[k]);
        if (kept_bytes + bytes <= kKeptPreparedBytes) {
          kept_bytes += bytes;
          job.prepared = std::move(prepared[k]);
        }
        prepared[k].reset();
        continue;
      }
      prepared[k].reset();
      if (plan.experiment.skip_invalid()) {
        job.skipped = true;
        job.reason = status.message();
        continue;
      }
      if (points_of[status.message()].empty()) messages.push_back(status.message());
      points_of[status.message()].push_back(&point);
    }
  }
  if (messages.empty()) return Status();
  std::string text;
  for (const std::string& m : messages) {
    const std::vector<const SweepPoint*>& points = points_of[m];
    text += (text.empty() ? "" : "\n") + m + " (point " + std::to_string(points[0]->index) +
            ": " + DescribePoint(plan, *points[0]) +
            (points.size() > 1 ? "; and " + std::to_string(points.size() - 1) + " more" : "") +
            ")";
  }
  return Status::InvalidInput(text + "\n" + plan.source +
                              ": nothing ran; fix these points, or set skip_invalid: true to "
                              "record them as skipped");
}

Status RunSweep(const ExperimentPlan& plan, const std::vector<PointJob>& jobs,
                const SweepOptions& options, std::ostream& progress_out, SweepSummary* summary) {
  *summary = SweepSummary();
  const Clock::time_point sweep_start = Clock::now();
  const std::string header = ResultsHeader(plan.columns);
  Journal journal(options.output, *options.where);
  if (journal.exists() && !options.resume) {
    return Status::InvalidInput(options.output + ".partial: an interrupted sweep's results; add " +
                                options.where->Name("resume") +
                                " to continue it, or delete it to start over");
  }
  JournalRows rows;
  if (options.resume) {
    std::vector<std::string> dropped;
    Status status = journal.Load(
        header, static_cast<int64_t>(jobs.size()), options.retry_failed,
        [&](int64_t point) -> const std::vector<std::string>& {
          return jobs[point].point->values;
        },
        [&](int64_t point) { return DescribePoint(plan, *jobs[point].point); }, &rows, &dropped);
    if (!status.ok()) return status;
    for (size_t d = 0; d < dropped.size() && d < 3; ++d) {
      progress_out << "resume: runs again: " << dropped[d] << "\n";
    }
    if (dropped.size() > 3) {
      progress_out << "resume: and " << dropped.size() - 3 << " more rows run again\n";
    }
  }
  // The journal starts as the header and the resumed rows (a torn last line of an interrupted
  // journal is dropped), then grows a line per finished point.
  RETURN_IF_ERROR(journal.Start(header, rows));

  std::vector<size_t> todo;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (static_cast<int32_t>(j % options.shard_count) != options.shard_index) continue;
    ++summary->points;
    if (rows.csv.count(static_cast<int64_t>(j))) {
      ++summary->resumed;
      continue;
    }
    todo.push_back(j);
  }
  SweepProgress progress(progress_out, options.terminal, summary->points, summary->resumed);
  size_t journaled = 0;
  const char* kill_after_env = std::getenv("PPSIM_SWEEP_KILL_AFTER");
  const long kill_after = kill_after_env == nullptr ? -1 : std::strtol(kill_after_env, nullptr, 10);
  auto record = [&](size_t j, const PointOutcome& o) {
    const SweepPoint& point = *jobs[j].point;
    const int64_t index = static_cast<int64_t>(point.index);
    const std::string row = ResultCsvLine(index, point.values, o);
    const std::string line = ResultJsonLine(index, plan.columns, point.values, o);
    RETURN_IF_ERROR(journal.Append(row, line));
    rows.csv[point.index] = row;
    rows.json[point.index] = line;
    const bool failed = IsFailure(o.status);
    (o.status == PointStatus::kOk ? summary->ok : failed ? summary->failed : summary->skipped) += 1;
    progress.PointDone(point.index, DescribePoint(plan, point), std::string(PointStatusName(o.status)),
                       o.error, failed);
    if (kill_after >= 0 && static_cast<long>(++journaled) >= kill_after) std::raise(SIGKILL);
    return Status();
  };

  // Skipped points need no process.
  std::vector<size_t> runnable;
  for (size_t j : todo) {
    if (!jobs[j].skipped) {
      runnable.push_back(j);
      continue;
    }
    PointOutcome o;
    o.status = PointStatus::kSkipped;
    o.error = OneLine(jobs[j].reason);
    RETURN_IF_ERROR(record(j, o));
  }
  progress_out.flush();
  // The pool's destructor stops and reaps every point still running when this returns early.
  ProcessPool pool(options.jobs, options.point_timeout_s, [&](size_t j) {
    return SerializePointOutcome(RunPoint(jobs[j], options));
  });
  size_t next = 0;
  while (next < runnable.size() || !pool.empty()) {
    while (next < runnable.size() && !pool.full()) {
      const size_t j = runnable[next++];
      const Status status = pool.Start(j);
      if (!status.ok()) return Status::Internal("sweep: " + status.message());
    }
    for (const ProcessPool::Finished& f : pool.Wait()) {
      RETURN_IF_ERROR(record(f.job, OutcomeOf(f, options)));
    }
  }
  progress.Finish();

  // The final files, in point order, replace the journal.
  JournalRows shard;
  for (const auto& [point, row] : rows.csv) {
    if (static_cast<int32_t>(point % options.shard_count) != options.shard_index) continue;
    shard.csv[point] = row;
    shard.json[point] = rows.json[point];
  }
  RETURN_IF_ERROR(journal.Finish(header, shard));
  summary->wall_s = Seconds(Clock::now() - sweep_start);
  return Status();
}

}  // namespace ppsim
