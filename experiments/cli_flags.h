// What the ppsim commands share: exit codes, error printing, and reading options (every value as
// text, so that messages name the flag and the value exactly). Used by cli_*.cc only.
#ifndef PPSIM_EXPERIMENTS_CLI_FLAGS_H_
#define PPSIM_EXPERIMENTS_CLI_FLAGS_H_

#include <boost/program_options.hpp>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "experiments/report.h"
#include "experiments/run.h"
#include "experiments/trace_outputs.h"
#include "base/status.h"

namespace ppsim::cli {

namespace po = boost::program_options;

constexpr int kExitOk = 0;
constexpr int kExitSimulationProblem = 1;  // a deadlock, an engine failure, --fail-on-oom
constexpr int kExitInvalidInput = 2;

// Prints the status's message as one line; returns 2 for invalid input, else 1.
int Fail(std::ostream& err, const Status& status);
// Prints `message`; returns 2.
int Usage(std::ostream& err, const std::string& message);

// A valued option, read as text.
void AddValue(po::options_description& d, const char* name, const char* value_name,
              const char* help);
// Parses `args` of `ppsim <command>`: "--name value" and "--name=value"; unknown options get "did
// you mean"; stray words, repeated options and missing values are InvalidInput naming them.
Status ParseOptions(const std::string& command, const std::vector<std::string>& args,
                    const po::options_description& d, po::variables_map* vm);
// An option that may be given several times (--set), read as text in order.
void AddRepeated(po::options_description& d, const char* name, const char* value_name,
                 const char* help);
// The option's text, or "" when it was not given.
std::string Get(const po::variables_map& vm, const char* name);
// Every value of a repeated option, in order.
std::vector<std::string> GetAll(const po::variables_map& vm, const char* name);
// A whole number >= minimum; messages name `flag`.
Status ParseCount(const char* flag, const std::string& text, int32_t* value, int32_t minimum = 1);
std::vector<std::string> SplitCommas(const std::string& text);

// --schedule, --schedule-file, --pp, --microbatches, --stages-per-rank, --microbatch-group-size,
// --stage-to-rank: added to `d`, and read into `spec` (schedule_name left as the comma list).
void AddScheduleChoice(po::options_description& d);
Status ReadScheduleChoice(const po::variables_map& vm, RunSpec* spec);

// --platform, --nodes, --set, --placement, --hosts, --p2p-latency, --p2p-bandwidth, and the
// parallelism (--dp, --tp): added to `d`, and read into `spec`.
void AddPlatformOptions(po::options_description& d);
Status ReadPlatformChoice(const po::variables_map& vm, RunSpec* spec);

// --model and the training setup: added to `d`, and read into `spec`.
void AddModelOptions(po::options_description& d);
Status ReadModelChoice(const po::variables_map& vm, RunSpec* spec);

// The parsed `ppsim run` command line: one spec per schedule of a comma list.
struct RunRequest {
  std::vector<RunSpec> specs;
  TraceOutputs outputs;  // --trace, --chrome-trace, --timeline, --trace-microbatches
  std::string command;   // "ppsim run ...", recorded in traces
  OutputFormat format = OutputFormat::kTable;
  bool fail_on_oom = false;
  bool help = false;
};
// Parses `ppsim run` arguments (not the default job); InvalidInput names the flag.
Status ParseRunRequest(const std::vector<std::string>& args, RunRequest* request);
// Prepares and executes the request's runs and prints them; `locate` (may be empty) rewrites
// error messages (an experiment points them at its file). Returns the exit code.
int ExecuteRequest(const RunRequest& request,
                   const std::function<std::string(const std::string&)>& locate,
                   std::ostream& out, std::ostream& err);
// `ppsim run FILE`: the experiment's base run (cli_sweep.cc).
int RunExperimentBase(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The commands (cli_run.cc, cli_schedule.cc, cli_model.cc); args exclude the command word.
int RunCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int ScheduleCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int ListSchedules(std::ostream& out);
int ModelCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int SweepCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int MergeCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int ReportCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int PlatformsCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace ppsim::cli

#endif  // PPSIM_EXPERIMENTS_CLI_FLAGS_H_
