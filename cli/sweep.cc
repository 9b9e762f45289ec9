// `ppsim sweep FILE -o RESULTS.csv`: every point of an experiment, and `ppsim merge`, which joins
// the results of shards.
#include "batch/sweep.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "base/escape.h"
#include "base/files.h"
#include "base/names.h"
#include "base/numbers.h"
#include "cli/commands.h"
#include "report/report_about.h"
#include "base/flag_locator.h"
#include "cli/options.h"
#include "config/units.h"
#include "experiments/experiment.h"

namespace ppsim::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kSweepSynopsis =
    "usage: ppsim sweep FILE -o RESULTS.csv [-j N] [--resume [--retry-failed]] [--shard I/N] "
    "[--point-timeout TIME] [--timelines DIR]";

po::options_description SweepOptionsDescription() {
  po::options_description d("ppsim sweep options", 100);
  d.add_options()("output,o", po::value<std::string>()->value_name("FILE"),
                  "the results CSV (JSON lines beside it, .jsonl)")(
      "jobs,j", po::value<std::string>()->value_name("N"),
      "points at a time, each in its own process (default: the cores)")(
      "resume", "keep the points an interrupted run (or a finished one) wrote")(
      "retry-failed", "with --resume: run the failed, timed-out and crashed points again")(
      "shard", po::value<std::string>()->value_name("I/N"),
      "run only the points whose index mod N is I (join with ppsim merge)")(
      "point-timeout", po::value<std::string>()->value_name("TIME"),
      "stop a point that runs longer (e.g. 10s; default: none)")(
      "timelines", po::value<std::string>()->value_name("DIR"),
      "write each point's timeline picture, DIR/point-0007.html")(
      "timeline-format", po::value<std::string>()->value_name("F"),
      "html (default; hover and zoom) or svg")(
      "max-points", po::value<std::string>()->value_name("N"),
      "refuse an experiment of more points (default 1000000)");
  return d;
}

Status ReadSweepOptions(const ParsedArgs& parsed, SweepOptions* options) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  options->jobs = cores > 0 ? static_cast<int32_t>(cores) : 1;
  options->output = OptionText(parsed, "output");
  if (options->output.empty()) {
    return Status::InvalidInput("-o: required; give the results CSV, e.g. -o results.csv");
  }
  if (parsed.values.count("jobs")) {
    RETURN_IF_ERROR(ParseCount("-j", OptionText(parsed, "jobs"), 1, &options->jobs));
  }
  options->resume = parsed.values.count("resume") > 0;
  options->retry_failed = parsed.values.count("retry-failed") > 0;
  if (options->retry_failed && !options->resume) {
    return Status::InvalidInput("--retry-failed: runs failed points of an earlier sweep again; "
                                "add --resume");
  }
  if (parsed.values.count("shard")) {
    RETURN_IF_ERROR(
        ParseShard(OptionText(parsed, "shard"), &options->shard_index, &options->shard_count));
  }
  if (parsed.values.count("point-timeout")) {
    RETURN_IF_ERROR(ParseDuration("--point-timeout", OptionText(parsed, "point-timeout"),
                                  &options->point_timeout_s));
  }
  if (parsed.values.count("timeline-format")) {
    const std::string format = OptionText(parsed, "timeline-format");
    if (format != "html" && format != "svg") {
      return Status::InvalidInput("--timeline-format: " +
                                  UnknownName("format", format, {"html", "svg"}));
    }
    options->timeline_extension = "." + format;
  }
  options->timelines_dir = OptionText(parsed, "timelines");
  const std::string& dir = options->timelines_dir;
  struct stat info;
  if (!dir.empty() && (stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) &&
      mkdir(dir.c_str(), 0755) != 0) {
    return Status::InvalidInput("--timelines: cannot create folder '" + dir + "': " +
                                std::strerror(errno));
  }
  return Status();
}

}  // namespace

int SweepCommand(const CommandArgs& args, std::ostream& out, std::ostream& err) {
  const po::options_description options = SweepOptionsDescription();
  ParsedArgs parsed;
  Status status = ParseArgs("sweep", args, options, 1, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << kSweepSynopsis << " [--timeline-format html|svg]\n\n" << options;
    return kExitOk;
  }
  if (parsed.positional.empty()) {
    return Fail(err, Status::InvalidInput("ppsim sweep: missing the experiment file; " +
                                          std::string(kSweepSynopsis)));
  }
  SweepOptions sweep;
  sweep.where = std::make_shared<FlagLocator>();
  status = ReadSweepOptions(parsed, &sweep);
  if (!status.ok()) return Fail(err, status);
  ExperimentPlan plan;
  status = LoadExperiment(parsed.positional[0], &plan);
  int64_t max_points = kDefaultMaxPoints;
  if (status.ok() && parsed.values.count("max-points")) {
    const std::string text = OptionText(parsed, "max-points");
    if (!ParseWhole(text, &max_points) || max_points < 1) {
      status = Status::InvalidInput("--max-points: invalid value '" + Printable(text) +
                                    "'; expected a whole number >= 1");
    }
  }
  if (status.ok()) status = ExpandPoints(max_points, &plan, FlagLocator());
  const proto::RunConfig& base = plan.experiment.base();
  if (status.ok() && (!base.trace().empty() || !base.chrome_trace().empty() ||
                      !base.timeline().empty() || base.fail_on_oom() || !base.emit().empty() ||
                      !base.emit_file().empty())) {
    // Not swept (experiment.cc), so written in the base.
    status = Status::InvalidInput(
        plan.source +
        ": base: trace, chrome_trace, timeline, emit, emit_file and fail_on_oom belong to one run "
        "('ppsim run FILE'); a sweep writes timelines with --timelines");
  }
  if (!status.ok()) return Fail(err, status);
  std::vector<PointJob> jobs;
  status = PlanSweep(plan, sweep.jobs, &jobs);
  if (!status.ok()) return Fail(err, status);
  // No output may overwrite what the sweep reads.
  std::vector<std::string> inputs = {parsed.positional[0]};
  for (const PointJob& job : jobs) {
    for (const std::string& file : InputFiles(job.spec)) inputs.push_back(file);
  }
  for (const std::string& output :
       {sweep.output, JsonLinesPath(sweep.output), AboutPath(sweep.output), sweep.output + ".partial",
        JsonLinesPath(sweep.output) + ".partial"}) {
    status = CheckNotAnInput("-o", output, inputs);
    if (!status.ok()) return Fail(err, status);
  }
  sweep.terminal = &err == &std::cerr && isatty(STDERR_FILENO);
  SweepSummary summary;
  status = RunSweep(plan, jobs, sweep, err, &summary);
  if (!status.ok()) return Fail(err, status);
  // What the report's header says about these results (report/report_about.h).
  ReportAbout about;
  about.ppsim_version = PPSIM_VERSION;
  about.command = "ppsim sweep";
  for (const std::string& a : args) about.command += " " + a;
  about.experiment = plan.experiment.name();
  about.experiment_file = parsed.positional[0];
  about.baseline = plan.experiment.baseline();
  status = WriteWholeFile("", AboutPath(sweep.output), AboutJson(about));
  if (!status.ok()) return Fail(err, status);
  const size_t ran = summary.points - summary.resumed;
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.1f", summary.wall_s > 0 ? ran / summary.wall_s : 0.0);
  out << "wrote " << sweep.output << " and " << JsonLinesPath(sweep.output) << ": "
      << summary.points << " points (" << summary.ok << " ok, " << summary.skipped << " skipped, "
      << summary.failed << " failed"
      << (summary.resumed ? ", " + std::to_string(summary.resumed) + " resumed" : "") << ") in "
      << HumanDuration(summary.wall_s) << ", " << rate << " points/s\n";
  return summary.failed > 0 ? kExitSimulationProblem : kExitOk;
}

}  // namespace ppsim::cli
