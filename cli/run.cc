// `ppsim run`: simulate runs given by flags (or an experiment file's base run) and report them.
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "base/escape.h"
#include "base/names.h"
#include "base/numbers.h"
#include "cli/commands.h"
#include "base/flag_locator.h"
#include "cli/options.h"
#include "experiments/experiment.h"
#include "experiments/locators.h"
#include "experiments/request.h"
#include "experiments/run_output.h"
#include "models/transformer.h"

namespace ppsim::cli {
namespace {

// `ppsim run` with no options: two schedules compared on one H100 node. The costs are a 1.2 ms
// forward and 2.4 ms backward per stage, 1.5 GiB of activations per microbatch and stage, and a
// 32 MiB boundary tensor (sequence 4096 x hidden 4096 x 2 bytes).
const std::vector<std::string> kDefaultJob = {
    "--schedule", "1F1B,GPipe", "--pp", "4", "--microbatches", "8", "--f", "1.2ms", "--b",
    "2.4ms", "--activation", "1.5GiB", "--message-bytes", "32MiB", "--platform", "h100-node"};

constexpr const char* kUsage =
    "usage: ppsim run --schedule NAME --pp P --microbatches M --f T (--b T | --i T --w T) "
    "[options]\n"
    "       ppsim run FILE [--point N] [options]   (an experiment's base run, or point N of its\n"
    "                        sweep; options given override the file's)\n"
    "       ppsim run        (no options: the default job)\n";

boost::program_options::options_description RunOptions() {
  boost::program_options::options_description options =
      RunConfigOptions({proto::Flag::SCHEDULE, proto::Flag::COSTS, proto::Flag::MODEL,
                        proto::Flag::CLUSTER, proto::Flag::PARALLELISM, proto::Flag::OUTPUTS,
                        proto::Flag::LIMITS});
  boost::program_options::options_description file("With an experiment FILE");
  file.add_options()("point", boost::program_options::value<std::string>()->value_name("N"),
                     "run point N of the file's sweep (0-based, as results.csv numbers them) "
                     "instead of its base run");
  options.add(file);
  return options;
}

// Executes a resolved request and prints it; the exit code.
int Execute(const RunRequest& request, const std::string& command, std::ostream& out,
            std::ostream& err) {
  std::vector<RunResult> results;
  Status status = ExecuteRequest(request, command, &results);
  if (!status.ok()) return Fail(err, status);
  out << FormatResults(results, request.format);
  if (request.fail_on_oom) {
    const std::string oom = OutOfMemoryReport(results);
    if (!oom.empty()) {
      err << oom << "\n";
      return kExitSimulationProblem;
    }
  }
  return kExitOk;
}

// `ppsim run FILE [--point N] [options]`: the experiment's base run or one of its points, with
// the options given on top, each located where it was written.
int RunFile(const std::string& path, const ParsedArgs& parsed, const CommandArgs& args,
            std::ostream& out, std::ostream& err) {
  ExperimentPlan plan;
  Status status = LoadExperiment(path, &plan);
  if (!status.ok()) return Fail(err, status);
  SweepPoint point;
  const bool one_point = parsed.values.count("point") > 0;
  if (one_point) {
    const std::string text = parsed.values["point"].as<std::string>();
    int64_t index = -1;
    if (!ParseWhole(text, &index) || index < 0 || index >= plan.num_points) {
      return Fail(err, Status::InvalidInput(
                           "--point: invalid point '" + Printable(text) + "'; " + path + " has " +
                           Plural(plan.num_points, "point") + ", 0 to " +
                           std::to_string(plan.num_points - 1)));
    }
    status = MakePoint(plan, index, &point);
    if (!status.ok()) return Fail(err, status);
    if (point.skipped) {
      err << "note: " << path << " point " << index << " (" << DescribePoint(plan, point)
          << ") is skipped in sweeps: " << point.reason << "\n";
    }
  }
  proto::RunConfig config = one_point ? point.config : plan.experiment.base();
  proto::RunConfig given;
  std::vector<std::string> flag_fields;
  status = FillRunConfig(parsed.values, &given, &flag_fields);
  if (!status.ok()) return Fail(err, status);
  // A file named on the command line is relative to the current directory, not to the
  // experiment's (where the file's own paths are taken from).
  auto from_here = [](std::string* path) {
    if (!path->empty() && !path->starts_with("/")) {
      *path = std::filesystem::absolute(*path).string();
    }
  };
  from_here(given.mutable_schedule_file());
  from_here(given.mutable_profile());
  from_here(given.mutable_calibration());
  if (FindTransformerPreset(given.model()) == nullptr) from_here(given.mutable_model());
  if (given.platform().find_first_of("./") != std::string::npos) {
    from_here(given.mutable_platform());
  }
  config.MergeFrom(given);
  const FileLocator in_file(plan, one_point ? &point : nullptr);
  const FlagLocator flags;
  RunRequest request;
  ResolveOptions options;
  options.directory = plan.directory;
  status = ResolveRun(config, std::make_shared<OverrideLocator>(in_file, flags, flag_fields),
                      options, &request);
  if (!status.ok()) return Fail(err, status);
  request.sources.push_back(path);
  std::string command = "ppsim run";
  for (const std::string& a : args) command += " " + a;
  return Execute(request, command, out, err);
}

}  // namespace

Status ParseRunWords(const CommandArgs& args, const std::string& prefix, proto::RunConfig* config) {
  ParsedArgs parsed;
  Status status = ParseArgs("run", args, RunOptions(), 0, &parsed);
  if (status.ok() && (parsed.help || parsed.values.count("point") > 0)) {
    status = Status::InvalidInput(std::string(parsed.help ? "--help" : "--point") +
                                  ": a run here is given by its options alone");
  }
  if (status.ok()) status = FillRunConfig(parsed.values, config);
  return status.ok() ? status : status.WithMessage(prefix + status.message());
}

Status ResolveRunWords(const CommandArgs& args, const std::string& prefix,
                       const std::string& directory, RunSpec* spec) {
  proto::RunConfig config;
  RETURN_IF_ERROR(ParseRunWords(args, prefix, &config));
  auto where = std::make_shared<PrefixLocator>(prefix, std::make_shared<FlagLocator>());
  RunRequest request;
  ResolveOptions options;
  options.directory = directory;
  RETURN_IF_ERROR(ResolveRun(config, where, options, &request));
  if (request.runs.size() != 1) {
    return where->Invalid("schedule", std::to_string(request.runs.size()) +
                                          " schedules; a measurement is of one run");
  }
  *spec = request.runs[0];
  return Status();
}

int RunCommand(const CommandArgs& given, std::ostream& out, std::ostream& err) {
  const bool default_job = given.empty();
  const CommandArgs& args = default_job ? kDefaultJob : given;
  const boost::program_options::options_description options = RunOptions();
  ParsedArgs parsed;
  Status status = ParseArgs("run", args, options, 1, &parsed);
  if (!status.ok()) return Fail(err, status);
  if (parsed.help) {
    out << kUsage << options;
    return kExitOk;
  }
  if (!parsed.positional.empty()) {
    const std::string& file = parsed.positional[0];
    if (args[0] != file) {
      return Fail(err, Status::InvalidInput("ppsim run: unexpected argument '" + file +
                                            "'; every value follows its option, see 'ppsim run "
                                            "--help'"));
    }
    return RunFile(file, parsed, args, out, err);
  }
  if (parsed.values.count("point") > 0) {
    return Fail(err, Status::InvalidInput("--point: runs one point of an experiment; give the "
                                          "file first: ppsim run FILE --point N"));
  }
  proto::RunConfig config;
  status = FillRunConfig(parsed.values, &config);
  RunRequest request;
  if (status.ok()) status = ResolveRun(config, std::make_shared<FlagLocator>(), {}, &request);
  if (!status.ok()) return Fail(err, status);
  if (default_job && request.format == OutputFormat::kTable) {
    out << "default job: ppsim run";
    for (const std::string& a : kDefaultJob) out << " " << a;
    out << "\n\n";
  }
  std::string command = "ppsim run";
  for (const std::string& a : args) command += " " + a;
  return Execute(request, command, out, err);
}

}  // namespace ppsim::cli
