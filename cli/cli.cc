#include "cli/cli.h"

#include <string>
#include <vector>

#include "base/names.h"
#include "cli/commands.h"
#include "cli/options.h"

namespace ppsim {
namespace {

using cli::CommandArgs;

struct Command {
  const char* name;
  const char* summary;  // the lines `ppsim help` shows
  int (*run)(const CommandArgs& args, std::ostream& out, std::ostream& err);
};

constexpr Command kCommands[] = {
    {"run",
     "simulate schedules and report makespan, bubbles and memory\n"
     "('ppsim run FILE': an experiment file's base run)\n"
     "(no options: the default job, 1F1B vs GPipe on one H100 node)",
     &cli::RunCommand},
    {"schedule", "print a schedule's per-rank order without simulating", &cli::ScheduleCommand},
    {"schedules", "list the schedules", &cli::SchedulesCommand},
    {"model", "the analytic model's per-stage costs ('ppsim model --list' for presets)",
     &cli::ModelCommand},
    {"sweep", "run every point of an experiment file, N at a time, into a results CSV",
     &cli::SweepCommand},
    {"merge", "join the results of sweep shards", &cli::MergeCommand},
    {"search", "the best configuration (tp, pp, dp, microbatch size, schedule, recompute) of a\n"
               "model on a cluster: exact branch and bound, the top K and the Pareto front",
     &cli::SearchCommand},
    {"profile", "PyTorch profiler traces in: a summary, an editable profile (-o) and a replay\n"
                "of the measured order",
     &cli::ProfileCommand},
    {"calibrate", "fit the model's per-GPU parameters to your measured runs, for --calibration",
     &cli::CalibrateCommand},
    {"serve", "the explorer: a local web page to change a run and watch its results and\n"
              "timeline (http://127.0.0.1:8080/)",
     &cli::ServeCommand},
    {"report", "an HTML report with charts from a sweep's results CSV", &cli::ReportCommand},
    {"platforms", "list the cluster presets ('ppsim platforms NAME' prints one)",
     &cli::PlatformsCommand},
};

std::string Usage() {
  std::string text = "usage: ppsim <command> [options]\n\ncommands:\n";
  for (const Command& c : kCommands) {
    std::string summary = c.summary;
    std::string name = c.name;
    size_t start = 0;
    while (start <= summary.size()) {
      const size_t end = summary.find('\n', start);
      const std::string line = summary.substr(start, end == std::string::npos ? end : end - start);
      text += "  " + name + std::string(12 - name.size(), ' ') + line + "\n";
      name.clear();
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  text += "  help        this text; 'ppsim help COMMAND' or 'ppsim COMMAND --help' for a "
          "command's options\n";
  return text;
}

std::vector<std::string> CommandNames() {
  std::vector<std::string> names;
  for (const Command& c : kCommands) names.emplace_back(c.name);
  return names;
}

const Command* FindCommand(const std::string& name) {
  for (const Command& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    out << Usage();
    return cli::kExitOk;
  }
  if (args[0] == "--version") {
    out << "ppsim " << PPSIM_VERSION << "\n";
    return cli::kExitOk;
  }
  if (args[0] == "help") {
    if (args.size() == 1) {
      out << Usage();
      return cli::kExitOk;
    }
    const Command* command = FindCommand(args[1]);
    if (command == nullptr || args.size() > 2) {
      err << (command == nullptr
                  ? "ppsim help: " + UnknownName("command", args[1], CommandNames())
                  : "ppsim help: unexpected argument '" + args[2] + "'; usage: ppsim help COMMAND")
          << "\n";
      return cli::kExitInvalidInput;
    }
    return command->run({"--help"}, out, err);
  }
  const Command* command = FindCommand(args[0]);
  if (command == nullptr) {
    std::vector<std::string> names = CommandNames();
    names.push_back("help");
    err << "ppsim: " << UnknownName("command", args[0], names) << "\n";
    return cli::kExitInvalidInput;
  }
  return command->run(CommandArgs(args.begin() + 1, args.end()), out, err);
}

}  // namespace ppsim
