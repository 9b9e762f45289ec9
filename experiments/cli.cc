#include "experiments/cli.h"

#include <string>
#include <vector>

#include "experiments/cli_flags.h"

namespace ppsim {
namespace {

using cli::kExitOk;
using cli::Usage;

constexpr const char* kVersion = PPSIM_VERSION;

constexpr const char* kUsage =
    "usage: ppsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run         simulate schedules and report makespan, bubbles and memory\n"
    "              ('ppsim run FILE': an experiment file's base run)\n"
    "              (no options: the default job, 1F1B vs GPipe on one H100 node)\n"
    "  schedule    print a schedule's per-rank order without simulating\n"
    "  schedules   list the schedules\n"
    "  model       the analytic model's per-stage costs ('ppsim model --list' for presets)\n"
    "  sweep       run every point of an experiment file, N at a time, into a results CSV\n"
    "  merge       join the results of sweep shards\n"
    "  report      an HTML report with charts from a sweep's results CSV\n"
    "  platforms   list the cluster presets ('ppsim platforms NAME' prints one)\n"
    "  help        this text; 'ppsim <command> --help' for a command's options\n";

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    out << kUsage;
    return kExitOk;
  }
  if (args[0] == "--version") {
    out << "ppsim " << kVersion << "\n";
    return kExitOk;
  }
  const std::string& command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  auto no_options = [&](int (*list)(std::ostream&)) {
    if (!rest.empty()) {
      return Usage(err, "ppsim " + command + ": unexpected argument '" + rest[0] +
                            "'; it takes no options");
    }
    return list(out);
  };
  if (command == "run") return cli::RunCommand(rest, out, err);
  if (command == "schedule") return cli::ScheduleCommand(rest, out, err);
  if (command == "model") return cli::ModelCommand(rest, out, err);
  if (command == "schedules") return no_options(&cli::ListSchedules);
  if (command == "platforms") return cli::PlatformsCommand(rest, out, err);
  if (command == "report") return cli::ReportCommand(rest, out, err);
  if (command == "sweep") return cli::SweepCommand(rest, out, err);
  if (command == "merge") return cli::MergeCommand(rest, out, err);
  return Usage(err, "ppsim: unknown command '" + command +
                        "'; valid: run, sweep, merge, report, schedule, schedules, model, platforms, help");
}

}  // namespace ppsim
