// The commands of the ppsim command line, one file each (run.cc, sweep.cc, ...). Each takes the
// arguments after its name, prints results to `out` and errors to `err`, prints its options for
// -h/--help anywhere, and returns the exit code (options.h).
#ifndef PPSIM_CLI_COMMANDS_H_
#define PPSIM_CLI_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "experiments/run_config.pb.h"

namespace ppsim {
struct RunSpec;
}  // namespace ppsim

namespace ppsim::cli {

using CommandArgs = std::vector<std::string>;

int RunCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int SweepCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int MergeCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int SearchCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int ReportCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int ScheduleCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int SchedulesCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int ModelCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int ProfileCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int PlatformsCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int ServeCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);
int CalibrateCommand(const CommandArgs& args, std::ostream& out, std::ostream& err);

// The arguments of a `ppsim run` command (options only: no FILE, no --point, no --help) as the
// request they give, parsed as `ppsim run` parses them (the one parser of run options); every
// message starts with `prefix` ("--baseline: --pp: expected an integer, got 'x'").
Status ParseRunWords(const CommandArgs& args, const std::string& prefix, proto::RunConfig* config);

// The arguments of a `ppsim run` command (options only: no FILE, no --point) resolved into its one
// run (run.cc), as `ppsim run` resolves them; every message about a field starts with `prefix`
// ("m.yaml:3:10: run: --tp: ..."). Relative files are taken from `directory` ("" or ending in
// '/'). InvalidInput for a comma list of schedules (a measurement is of one run).
Status ResolveRunWords(const CommandArgs& args, const std::string& prefix,
                       const std::string& directory, RunSpec* spec);

}  // namespace ppsim::cli

#endif  // PPSIM_CLI_COMMANDS_H_
