// `ppsim sweep`, `ppsim merge` and `ppsim run FILE`: experiments from files.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "experiments/cli_flags.h"
#include "experiments/experiment.h"
#include "experiments/sweep.h"
#include "models/units.h"

namespace ppsim::cli {
namespace {

constexpr const char* kSweepUsage =
    "usage: ppsim sweep FILE -o RESULTS.csv [-j N] [--resume] [--shard I/N] "
    "[--point-timeout TIME]\n"
    "       [--timelines DIR [--timeline-format html|svg]]\n"
    "  -o, --output FILE     the results CSV (JSON lines beside it, .jsonl)\n"
    "  -j, --jobs N          points at a time, each in its own process (default: the cores)\n"
    "  --resume              keep the points an interrupted run (or a finished one) wrote\n"
    "  --shard I/N           run only the points whose index mod N is I (join with ppsim merge)\n"
    "  --point-timeout TIME  stop a point that runs longer (e.g. 10s; default: none)\n"
    "  --timelines DIR       write each point's timeline picture, DIR/point-0007.html\n"
    "  --timeline-format F   html (default; hover and zoom) or svg\n";

// The run of one point, checked: its spec, or the located message of what is wrong with it.
Status CheckPoint(const ExperimentPlan& plan, const SweepPoint& point, RunSpec* spec) {
  const RunArgs args = RunArgsOf(plan, point.config, &point);
  auto located = [&](const Status& status) {
    return status.WithMessage(LocateRunMessage(plan, args, status.message()));
  };
  RunRequest request;
  Status status = ParseRunRequest(args.args, &request);
  if (!status.ok()) return located(status);
  if (request.specs.size() != 1) {
    return located(Status::InvalidInput(
        "--schedule: one schedule per point; sweep schedules with an axis (field: schedule)"));
  }
  PreparedRun prepared;
  status = PrepareRun(request.specs[0], &prepared, /*compile=*/false);
  if (!status.ok()) return located(status);
  *spec = request.specs[0];
  return Status();
}

struct SweepFlags {
  std::string file;
  SweepOptions options;
};

constexpr const char* kSweepSynopsis =
    "usage: ppsim sweep FILE -o RESULTS.csv [-j N] [--resume] [--shard I/N] "
    "[--point-timeout TIME] [--timelines DIR]";

Status ParseSweepFlags(const std::vector<std::string>& given, SweepFlags* flags, bool* help) {
  // "-j2" and "--jobs=2" are "-j 2" and "--jobs 2".
  std::vector<std::string> args;
  for (const std::string& a : given) {
    const size_t equals = a.find('=');
    if (a.rfind("--", 0) == 0 && equals != std::string::npos) {
      args.push_back(a.substr(0, equals));
      args.push_back(a.substr(equals + 1));
    } else if ((a.rfind("-j", 0) == 0 || a.rfind("-o", 0) == 0) && a.size() > 2 && a[1] != '-') {
      args.push_back(a.substr(0, 2));
      args.push_back(a.substr(2));
    } else {
      args.push_back(a);
    }
  }
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  flags->options.jobs = cores > 0 ? static_cast<int32_t>(cores) : 1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= args.size()) {
        return Status::InvalidInput(a + ": missing value; " + std::string(kSweepSynopsis));
      }
      *out = args[++i];
      return Status();
    };
    std::string text;
    Status status;
    if (a == "--help" || a == "-h") {
      *help = true;
      return Status();
    } else if (a == "-o" || a == "--output") {
      status = value(&flags->options.output);
    } else if (a == "-j" || a == "--jobs") {
      status = value(&text);
      if (status.ok()) status = ParseCount(a.c_str(), text, &flags->options.jobs);
    } else if (a == "--resume") {
      flags->options.resume = true;
    } else if (a == "--shard") {
      status = value(&text);
      const size_t slash = text.find('/');
      int32_t index = -1, count = 0;
      if (status.ok() && (slash == std::string::npos ||
                          !ParseCount("--shard", text.substr(0, slash), &index, 0).ok() ||
                          !ParseCount("--shard", text.substr(slash + 1), &count, 1).ok() ||
                          index >= count)) {
        status = Status::InvalidInput("--shard: invalid shard '" + text +
                                      "'; give I/N with 0 <= I < N, e.g. --shard 0/4");
      }
      flags->options.shard_index = index;
      flags->options.shard_count = count;
    } else if (a == "--point-timeout") {
      status = value(&text);
      if (status.ok()) status = ParseDuration("--point-timeout", text, &flags->options.point_timeout_s);
    } else if (a == "--timelines") {
      status = value(&flags->options.timelines_dir);
    } else if (a == "--timeline-format") {
      status = value(&text);
      if (status.ok() && text != "html" && text != "svg") {
        status = Status::InvalidInput("--timeline-format: unknown format '" + text +
                                      "'; valid: html, svg");
      }
      flags->options.timeline_extension = "." + text;
    } else if (a.rfind("-", 0) == 0) {
      status = Status::InvalidInput(a + ": unknown option; " + std::string(kSweepSynopsis));
    } else if (flags->file.empty()) {
      flags->file = a;
    } else {
      status = Status::InvalidInput("ppsim sweep: unexpected argument '" + a +
                                    "'; one experiment file per sweep");
    }
    if (!status.ok()) return status;
  }
  if (flags->file.empty()) {
    return Status::InvalidInput("ppsim sweep: missing the experiment file; " +
                                std::string(kSweepSynopsis));
  }
  if (flags->options.output.empty()) {
    return Status::InvalidInput("-o: required; give the results CSV, e.g. -o results.csv");
  }
  const std::string& dir = flags->options.timelines_dir;
  struct stat info;
  if (!dir.empty() && (stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) &&
      mkdir(dir.c_str(), 0755) != 0) {
    return Status::InvalidInput("--timelines: cannot create folder '" + dir + "': " +
                                std::strerror(errno));
  }
  return Status();
}

}  // namespace

int SweepCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  SweepFlags flags;
  bool help = false;
  Status status = ParseSweepFlags(args, &flags, &help);
  if (!status.ok()) return Fail(err, status);
  if (help) {
    out << kSweepUsage;
    return kExitOk;
  }
  ExperimentPlan plan;
  status = LoadExperiment(flags.file, &plan);
  if (!status.ok()) return Fail(err, status);

  // Check every point before any runs; equal messages (a bad base field) are reported once.
  std::vector<PointJob> jobs(plan.points.size());
  std::vector<std::string> messages;
  std::map<std::string, std::vector<const SweepPoint*>> points_of;
  for (size_t i = 0; i < plan.points.size(); ++i) {
    const SweepPoint& point = plan.points[i];
    PointJob& job = jobs[i];
    job.point = &point;
    if (point.skipped) {
      job.skipped = true;
      job.reason = point.reason;
      continue;
    }
    status = CheckPoint(plan, point, &job.spec);
    if (status.ok()) continue;
    if (plan.experiment.skip_invalid()) {
      job.skipped = true;
      job.reason = status.message();
      continue;
    }
    if (points_of[status.message()].empty()) messages.push_back(status.message());
    points_of[status.message()].push_back(&point);
  }
  if (!messages.empty()) {
    std::string text;
    for (const std::string& m : messages) {
      const std::vector<const SweepPoint*>& points = points_of[m];
      text += (text.empty() ? "" : "\n") + m + " (point " + std::to_string(points[0]->index) +
              ": " + DescribePoint(plan, *points[0]) +
              (points.size() > 1 ? "; and " + std::to_string(points.size() - 1) + " more" : "") +
              ")";
    }
    return Fail(err, Status::InvalidInput(text + "\nnothing ran; fix these points, or set "
                                                 "skip_invalid: true to record them as skipped"));
  }

  flags.options.terminal = &err == &std::cerr && isatty(STDERR_FILENO);
  SweepSummary summary;
  status = RunSweep(plan, jobs, flags.options, err, &summary);
  if (!status.ok()) return Fail(err, status);
  const size_t ran = summary.points - summary.resumed;
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.1f", summary.wall_s > 0 ? ran / summary.wall_s : 0.0);
  out << "wrote " << flags.options.output << " and " << JsonLinesPath(flags.options.output)
      << ": " << summary.points << " points (" << summary.ok << " ok, " << summary.skipped
      << " skipped, " << summary.failed << " failed" <<
      (summary.resumed ? ", " + std::to_string(summary.resumed) + " resumed" : "") << ") in "
      << HumanDuration(summary.wall_s) << ", " << rate << " points/s\n";
  return summary.failed > 0 ? kExitSimulationProblem : kExitOk;
}

int MergeCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> inputs;
  std::string output;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o" || args[i] == "--output") {
      if (i + 1 >= args.size()) return Usage(err, args[i] + ": missing value");
      output = args[++i];
    } else if (args[i] == "--help" || args[i] == "-h") {
      out << "usage: ppsim merge SHARD.csv... -o RESULTS.csv\n";
      return kExitOk;
    } else if (args[i].rfind("-", 0) == 0) {
      return Usage(err, args[i] + ": unknown option; usage: ppsim merge SHARD.csv... -o "
                                  "RESULTS.csv");
    } else {
      inputs.push_back(args[i]);
    }
  }
  if (output.empty()) return Usage(err, "-o: required; give the merged results CSV");
  Status status = MergeResults(inputs, output);
  if (!status.ok()) return Fail(err, status);
  // The JSON lines beside the shards, when they are there.
  std::vector<std::string> json_inputs;
  for (const std::string& input : inputs) {
    if (access(JsonLinesPath(input).c_str(), R_OK) == 0) json_inputs.push_back(JsonLinesPath(input));
  }
  if (json_inputs.size() == inputs.size()) {
    status = MergeResults(json_inputs, JsonLinesPath(output));
    if (!status.ok()) return Fail(err, status);
  }
  out << "wrote " << output << (json_inputs.size() == inputs.size()
                                    ? " and " + JsonLinesPath(output)
                                    : std::string()) << "\n";
  return kExitOk;
}

int RunExperimentBase(const std::vector<std::string>& args, std::ostream& out,
                      std::ostream& err) {
  if (args.size() > 1) {
    return Usage(err, "ppsim run " + args[0] + ": unexpected argument '" + args[1] +
                          "'; ppsim run FILE takes no options, put them in the file");
  }
  ExperimentPlan plan;
  Status status = LoadExperiment(args[0], &plan);
  if (!status.ok()) return Fail(err, status);
  const RunArgs run_args = RunArgsOf(plan, plan.experiment.base(), nullptr);
  auto locate = [&](const std::string& message) {
    return LocateRunMessage(plan, run_args, message);
  };
  RunRequest request;
  status = ParseRunRequest(run_args.args, &request);
  if (!status.ok()) return Fail(err, status.WithMessage(locate(status.message())));
  return ExecuteRequest(request, locate, out, err);
}

}  // namespace ppsim::cli
